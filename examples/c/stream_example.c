/* Stream rows of `id: int64 not null, name: utf8, score: float64` as Arrow record
 * batches: a fill callback writes rows into quiver's writer, quiver_stream_new wraps
 * it in an ArrowArrayStream, and the loop pulls batches until the stream ends. */
#include <stdio.h>

#include "quiver.h"

struct rows {
  int64_t next, total;
};

/* Writes up to max_rows rows into w; writing none ends the stream. */
static int fill(void *ctx, QuiverWriter *w, int64_t max_rows) {
  struct rows *rows = ctx;
  for (int64_t n = 0; n < max_rows && rows->next < rows->total; n++, rows->next++) {
    int64_t id = rows->next;
    char name[32];
    int len = snprintf(name, sizeof name, "user-%lld", (long long)id);
    int rc = quiver_append_i64(w, 0, id);                    /* node 0: id */
    if (rc == 0)
      rc = id % 10 == 0 ? quiver_append_null(w, 1)           /* node 1: name */
                        : quiver_append_bytes(w, 1, (const uint8_t *)name, (size_t)len);
    if (rc == 0) rc = quiver_append_f64(w, 2, id * 0.5);     /* node 2: score */
    if (rc == 0) rc = quiver_end_row(w);
    if (rc != 0) return rc; /* the stream fails with EIO and the writer's message */
  }
  return 0;
}

int main(void) {
  struct ArrowSchema schema;
  if (quiver_schema_parse("id: int64 not null, name: utf8, score: float64", &schema) != 0) {
    fprintf(stderr, "schema: %s\n", quiver_last_error());
    return 1;
  }
  struct QuiverOptions opts;
  quiver_options_default(&opts);
  opts.batch_rows = 4096;

  struct rows rows = {0, 10000};
  struct ArrowArrayStream stream;
  int rc = quiver_stream_new(&schema, &opts, fill, &rows, NULL, &stream);
  schema.release(&schema); /* the stream keeps its own copy */
  if (rc != 0) {
    fprintf(stderr, "stream: %s\n", quiver_last_error());
    return 1;
  }

  int64_t total = 0;
  int batches = 0;
  for (;;) {
    struct ArrowArray batch;
    rc = stream.get_next(&stream, &batch);
    if (rc != 0) {
      fprintf(stderr, "get_next: %s\n", stream.get_last_error(&stream));
      break;
    }
    if (batch.release == NULL) break; /* end of stream */
    printf("batch %d: %lld rows\n", ++batches, (long long)batch.length);
    total += batch.length;
    batch.release(&batch); /* its buffers go back to the writer for the next batch */
  }
  printf("total: %lld rows in %d batches\n", (long long)total, batches);
  stream.release(&stream);
  return rc != 0;
}
