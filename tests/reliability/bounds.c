/* Memory bounds: a writer and a stream are dropped while their consumer
 * still holds batches (and a child moved out of one); everything is freed
 * once those are released. Run under valgrind --leak-check=full: 0 bytes
 * lost. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver.h"

#define ROWS 8
#define HELD 6

static void die(const char *what) {
  fprintf(stderr, "FAIL: %s\n", what);
  exit(1);
}

static int write_rows(QuiverWriter *w, long base) {
  for (int r = 0; r < ROWS; r++) {
    char s[32];
    int n = snprintf(s, sizeof s, "row %ld", base + r);
    if (quiver_append_i64(w, 0, base + r) || quiver_append_bytes(w, 1, (const uint8_t *)s, (size_t)n) ||
        quiver_begin(w, 2) || quiver_append_i32(w, 3, (int32_t)r) || quiver_end(w, 2) || quiver_end_row(w))
      return 1;
  }
  return 0;
}

struct ctx {
  long next;
  int *released;
};

static int fill(void *p, QuiverWriter *w, int64_t max_rows) {
  struct ctx *c = p;
  if (max_rows < ROWS) return 1;
  int rc = write_rows(w, c->next);
  c->next += ROWS;
  return rc;
}

static void release_ctx(void *p) {
  struct ctx *c = p;
  *c->released = 1;
  free(c);
}

static void check(const struct ArrowArray *a, long base) {
  if (a->length != ROWS || a->n_children != 3) die("batch shape");
  const int64_t *id = a->children[0]->buffers[1];
  const int32_t *off = a->children[1]->buffers[1];
  const char *data = a->children[1]->buffers[2];
  for (int r = 0; r < ROWS; r++) {
    char s[32];
    int n = snprintf(s, sizeof s, "row %ld", base + r);
    if (id[r] != base + r) die("id changed while held");
    if (off[r + 1] - off[r] != n || memcmp(data + off[r], s, (size_t)n)) die("string changed while held");
  }
}

int main(void) {
  struct ArrowSchema schema;
  if (quiver_schema_parse("id: int64 not null, s: utf8, l: list<int32>", &schema)) die("parse");
  struct QuiverOptions opts;
  quiver_options_default(&opts);
  opts.batch_rows = ROWS;
  opts.retain = 2;

  struct ArrowArray held[2 * HELD];
  /* A writer: finish HELD batches, keep them, free the writer. */
  QuiverWriter *w = NULL;
  if (quiver_writer_new(&schema, &opts, &w)) die("writer_new");
  for (int i = 0; i < HELD; i++) {
    if (write_rows(w, i * ROWS) || quiver_writer_finish(w, &held[i])) die(quiver_writer_last_error(w));
  }
  quiver_writer_free(w);

  /* A stream: pull HELD batches, keep them, release the stream. */
  int released = 0;
  struct ctx *c = calloc(1, sizeof *c);
  c->next = 1000;
  c->released = &released;
  struct ArrowArrayStream stream;
  if (quiver_stream_new(&schema, &opts, fill, c, release_ctx, &stream)) die(quiver_last_error());
  schema.release(&schema);
  for (int i = 0; i < HELD; i++)
    if (stream.get_next(&stream, &held[HELD + i])) die(stream.get_last_error(&stream));
  /* Move the list column out of one stream batch; release it last. */
  struct ArrowArray moved = *held[HELD + 2].children[2];
  held[HELD + 2].children[2]->release = NULL;
  stream.release(&stream);
  if (!released) die("release_ctx did not run");
  if (stream.release != NULL) die("stream release left release set");

  long live = quiver_live_arrays();
  /* batch + 3 columns + the list's item, per batch */
  if (live != 2 * HELD * 5) die("unexpected live array count");
  for (int i = 0; i < HELD; i++) check(&held[i], i * ROWS);
  for (int i = 0; i < HELD; i++) check(&held[HELD + i], 1000 + i * ROWS);
  for (int i = 2 * HELD - 1; i >= 0; i--) held[i].release(&held[i]);
  if (moved.length != ROWS || moved.n_children != 1) die("moved child shape");
  moved.release(&moved);
  if (quiver_live_arrays() != 0) die("arrays still live after every release");
  printf("bounds.c: %ld arrays were live after writer and stream were gone; 0 after the releases\n", live);
  return 0;
}
