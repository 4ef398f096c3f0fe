/* Row-major records through the C API (docs/records.md): a layout of a plain C struct
 * described with offsetof, batches of records in one call each, a bad record in the
 * middle (the records before it committed, the count through the out pointer), the
 * record-pointer form, and a row open through the row path. Only "quiver.h" and libc.
 *
 * Prints one line per check ("ok N - ..."), then "records: all N checks passed";
 * exits 1 at the first failure. */
#include "quiver.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int n_ok;

#define CHECK(cond, ...)                                                          \
  do {                                                                            \
    if (!(cond)) {                                                                \
      printf("not ok %d - ", n_ok + 1);                                           \
      printf(__VA_ARGS__);                                                        \
      printf("\n  (records.c:%d: %s)\n", __LINE__, #cond);                        \
      exit(1);                                                                    \
    }                                                                             \
    n_ok++;                                                                       \
    printf("ok %d - ", n_ok);                                                     \
    printf(__VA_ARGS__);                                                          \
    putchar('\n');                                                                \
  } while (0)

/* The caller's row: a C struct, strings as pointer and length. */
struct Row {
  int32_t id;
  uint8_t id_null;   /* nonzero: id is null */
  uint8_t nulls;     /* bit 0: price is null, bit 1: name is null */
  double price;
  const char *name;
  uint64_t name_len;
  int64_t ts;
};

static const char *SCHEMA = "id: int32, price: float64, name: utf8, ts: timestamp(us) not null";
static char names[1000][16];

static void fill(struct Row *r, int i) {
  memset(r, 0xA5, sizeof *r); /* padding and the slots of nulls hold junk */
  r->id = i * 3;
  r->id_null = i % 7 == 3;
  r->nulls = (uint8_t)((i % 5 == 1 ? 1 : 0) | (i % 11 == 4 ? 2 : 0));
  r->price = i * 0.25;
  snprintf(names[i], sizeof names[i], "n%d", i);
  r->name = names[i];
  r->name_len = strlen(names[i]);
  r->ts = 1700000000000000LL + i;
}

static int set_layout(QuiverLayout *l) {
  int rc = 0;
  rc |= quiver_layout_set(l, 0, QUIVER_RECORD_FIXED, offsetof(struct Row, id), 0, QUIVER_NULL_BYTE,
                          offsetof(struct Row, id_null), 0);
  rc |= quiver_layout_set(l, 1, QUIVER_RECORD_FIXED, offsetof(struct Row, price), 0, QUIVER_NULL_BIT,
                          offsetof(struct Row, nulls), 0);
  rc |= quiver_layout_set(l, 2, QUIVER_RECORD_PTR_LEN, offsetof(struct Row, name), offsetof(struct Row, name_len),
                          QUIVER_NULL_BIT, offsetof(struct Row, nulls), 1);
  rc |= quiver_layout_set(l, 3, QUIVER_RECORD_FIXED, offsetof(struct Row, ts), 0, QUIVER_NULL_NEVER, 0, 0);
  return rc;
}

static bool bit(const void *bitmap, int64_t i) {
  return bitmap == NULL || (((const uint8_t *)bitmap)[i >> 3] >> (i & 7)) & 1;
}

/* Checks rows first..first+n of batch b against fill(). */
static int check_rows(const struct ArrowArray *b, int first, int n) {
  const struct ArrowArray *id = b->children[0], *price = b->children[1], *name = b->children[2],
                          *ts = b->children[3];
  if (b->length != n) return -1;
  for (int k = 0; k < n; k++) {
    int i = first + k;
    bool id_ok = i % 7 != 3, price_ok = i % 5 != 1, name_ok = i % 11 != 4;
    if (bit(id->buffers[0], k) != id_ok) return i;
    if (((const int32_t *)id->buffers[1])[k] != (id_ok ? i * 3 : 0)) return i;
    if (bit(price->buffers[0], k) != price_ok) return i;
    if (((const double *)price->buffers[1])[k] != (price_ok ? i * 0.25 : 0.0)) return i;
    const int32_t *off = name->buffers[1];
    if (bit(name->buffers[0], k) != name_ok) return i;
    size_t len = (size_t)(off[k + 1] - off[k]);
    if (name_ok ? (len != strlen(names[i]) || memcmp((const char *)name->buffers[2] + off[k], names[i], len))
                : len != 0)
      return i;
    if (((const int64_t *)ts->buffers[1])[k] != 1700000000000000LL + i) return i;
  }
  return -2;
}

int main(void) {
  struct ArrowSchema schema;
  QuiverWriter *w = NULL;
  QuiverLayout *l = NULL;
  CHECK(quiver_schema_parse(SCHEMA, &schema) == 0, "parse %s", SCHEMA);
  CHECK(quiver_writer_new(&schema, NULL, &w) == 0, "writer");
  schema.release(&schema);
  CHECK(quiver_layout_new(w, &l) == 0, "quiver_layout_new");
  CHECK(set_layout(l) == 0, "quiver_layout_set for a C struct, offsets by offsetof: %s", quiver_last_error());
  CHECK(quiver_layout_set(l, 0, QUIVER_RECORD_PTR_LEN, 0, 8, QUIVER_NULL_NEVER, 0, 0) == EINVAL,
        "quiver_layout_set: a pointer encoding for an int32 column is EINVAL");

  static struct Row rows[1000];
  for (int i = 0; i < 1000; i++) fill(&rows[i], i);
  int64_t written = -1;
  int rc = 0;
  for (int at = 0; at < 1000 && rc == 0; at += 256) {
    int64_t n = at + 256 <= 1000 ? 256 : 1000 - at;
    rc = quiver_write_records(w, l, &rows[at], sizeof(struct Row), n, &written);
  }
  CHECK(rc == 0 && written == 1000 - 768, "quiver_write_records: 1000 records in batches of 256 (%s)",
        quiver_writer_last_error(w) ? quiver_writer_last_error(w) : "");
  CHECK(quiver_writer_rows(w) == 1000, "1000 rows committed");
  struct ArrowArray b;
  CHECK(quiver_writer_finish(w, &b) == 0, "finish");
  int bad = check_rows(&b, 0, 1000);
  CHECK(bad == -2, "values, validity and zeros under nulls (first wrong row %d)", bad);
  b.release(&b);

  /* A bad record (invalid UTF-8) at 5 of 10: 5 committed, the count through the out pointer. */
  static const char invalid[] = "\xff\xfe";
  struct Row saved = rows[5];
  rows[5].name = invalid;
  rows[5].name_len = 2;
  rows[5].nulls = 0;
  rc = quiver_write_records(w, l, rows, sizeof(struct Row), 10, &written);
  CHECK(rc == EINVAL && written == 5, "a bad record at 5: EINVAL, *written = 5 (got %d, %lld)", rc,
        (long long)written);
  CHECK(strstr(quiver_writer_last_error(w), "record 5") != NULL, "the message names the record: %s",
        quiver_writer_last_error(w));
  CHECK(quiver_writer_rows(w) == 5, "the 5 records before it are committed");
  rows[5] = saved;
  /* The rest by pointer. */
  const uint8_t *ptrs[5];
  for (int i = 0; i < 5; i++) ptrs[i] = (const uint8_t *)&rows[5 + i];
  CHECK(quiver_write_record_ptrs(w, l, ptrs, NULL, 5, &written) == 0 && written == 5,
        "quiver_write_record_ptrs: the next 5 by pointer");
  CHECK(quiver_writer_finish(w, &b) == 0, "finish");
  bad = check_rows(&b, 0, 10);
  CHECK(bad == -2, "the batch is the 10 good records (first wrong row %d)", bad);
  b.release(&b);

  /* A row open through the row path: refused as a whole. */
  CHECK(quiver_append_i32(w, 0, 1) == 0, "append_i32 opens a row");
  rc = quiver_write_records(w, l, rows, sizeof(struct Row), 2, &written);
  CHECK(rc == EINVAL && written == 0, "quiver_write_records with a row open: EINVAL, *written = 0");
  CHECK(quiver_abort_row(w) == 0 && quiver_writer_rows(w) == 0, "abort_row; nothing committed");
  CHECK(quiver_write_records(w, l, rows, 4, 2, &written) == EINVAL, "a stride under the record size: EINVAL");
  CHECK(quiver_write_records(w, NULL, rows, sizeof(struct Row), 2, NULL) == EINVAL, "a NULL layout: EINVAL");

  quiver_layout_free(l);
  quiver_layout_free(NULL);
  quiver_writer_free(w);
  CHECK(quiver_live_arrays() == 0, "every array released");
  printf("records: all %d checks passed\n", n_ok);
  return 0;
}
