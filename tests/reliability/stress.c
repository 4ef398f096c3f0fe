/* Threads: the main thread writes small batches through the C API while two
 * consumer threads hold a few, move a column out of every third batch and
 * hand it to the other consumer, and verify every value right before the
 * release that runs on their own thread. A value that changed while held
 * means the writer reused memory someone still held.
 * Usage: stress [batches]   (default 100000) */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t under -std=c11 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver.h"

/* Under helgrind or drd (built with -DVG_HELGRIND or -DVG_DRD): the edge
 * from a consumer's release to the writer's reuse of that memory is an
 * atomic one (arrow's reference count: a release-ordered decrement, then the
 * writer's acquire-ordered "last holder" test when it starts a batch), which
 * neither tool sees. So in those builds that edge is made a lock both tools
 * know: a consumer releases under the read side of a rwlock (consumers still
 * release concurrently with each other, a batch on one thread and its
 * moved-out child on the other), and the writer writes each batch, start to
 * finish, under the write side. If the writer saw a release, that release
 * happened before, in the tools' eyes too. A consumer reads and checks values
 * outside the lock, so a writer that reuses memory a consumer still holds
 * (the bug this program looks for) is still reported, and its value checks
 * fail. Native builds take no lock. */
#if defined(VG_HELGRIND) || defined(VG_DRD)
static pthread_rwlock_t release_lock = PTHREAD_RWLOCK_INITIALIZER;
#define RELEASE_BEGIN() pthread_rwlock_rdlock(&release_lock)
#define RELEASE_END() pthread_rwlock_unlock(&release_lock)
#define WRITE_BEGIN() pthread_rwlock_wrlock(&release_lock)
#define WRITE_END() pthread_rwlock_unlock(&release_lock)
#else
#define RELEASE_BEGIN() ((void)0)
#define RELEASE_END() ((void)0)
#define WRITE_BEGIN() ((void)0)
#define WRITE_END() ((void)0)
#endif

#define ROWS 4
#define QCAP 16
#define HOLD 3

enum kind { BATCH, CHILD };
struct item {
  enum kind kind;
  long b;
  struct ArrowArray *a;
};

struct queue {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct item items[QCAP];
  int head, len, closed;
};

static void q_init(struct queue *q) {
  pthread_mutex_init(&q->mu, NULL);
  pthread_cond_init(&q->cv, NULL);
  q->head = q->len = q->closed = 0;
}

static void q_push(struct queue *q, struct item it) {
  pthread_mutex_lock(&q->mu);
  while (q->len == QCAP) pthread_cond_wait(&q->cv, &q->mu);
  q->items[(q->head + q->len) % QCAP] = it;
  q->len++;
  pthread_cond_broadcast(&q->cv);
  pthread_mutex_unlock(&q->mu);
}

static int q_pop(struct queue *q, struct item *out) {
  pthread_mutex_lock(&q->mu);
  while (q->len == 0 && !q->closed) pthread_cond_wait(&q->cv, &q->mu);
  if (q->len == 0) {
    pthread_mutex_unlock(&q->mu);
    return 0;
  }
  *out = q->items[q->head];
  q->head = (q->head + 1) % QCAP;
  q->len--;
  pthread_cond_broadcast(&q->cv);
  pthread_mutex_unlock(&q->mu);
  return 1;
}

static void q_close(struct queue *q) {
  pthread_mutex_lock(&q->mu);
  q->closed = 1;
  pthread_cond_broadcast(&q->cv);
  pthread_mutex_unlock(&q->mu);
}

static void die(const char *what, long b) {
  fprintf(stderr, "FAIL: %s (batch %ld)\n", what, b);
  exit(1);
}

/* Column 0: id int64 not null = b*ROWS + r. */
static void check_ids(const struct ArrowArray *c, long b) {
  if (c->length != ROWS || c->n_buffers != 2) die("id shape", b);
  const int64_t *v = (const int64_t *)c->buffers[1] + c->offset;
  for (int r = 0; r < ROWS; r++)
    if (v[r] != b * ROWS + r) die("id value changed while held", b);
}

/* Column 1: s utf8 = "v<k>", null when k % 5 == 0. */
static void check_strings(const struct ArrowArray *c, long b) {
  if (c->length != ROWS || c->n_buffers != 3) die("s shape", b);
  const uint8_t *valid = c->buffers[0];
  const int32_t *off = (const int32_t *)c->buffers[1] + c->offset;
  const char *data = c->buffers[2];
  for (int r = 0; r < ROWS; r++) {
    long k = b * ROWS + r;
    long i = c->offset + r;
    int is_valid = valid == NULL || (valid[i >> 3] >> (i & 7)) & 1;
    if (k % 5 == 0) {
      if (is_valid || off[r + 1] != off[r]) die("null s changed while held", b);
      continue;
    }
    char want[32];
    int n = snprintf(want, sizeof want, "v%ld", k);
    if (!is_valid || off[r + 1] - off[r] != n || memcmp(data + off[r], want, (size_t)n) != 0)
      die("s value changed while held", b);
  }
}

static void verify_release(struct item *it) {
  if (it->kind == CHILD) {
    check_strings(it->a, it->b);
  } else {
    if (it->a->length != ROWS || it->a->n_children != 2) die("batch shape", it->b);
    check_ids(it->a->children[0], it->b);
    if (it->a->children[1]->release != NULL) check_strings(it->a->children[1], it->b);
  }
  RELEASE_BEGIN();
  it->a->release(it->a);
  RELEASE_END();
  if (it->a->release != NULL) die("release left release set", it->b);
  free(it->a);
}

struct consumer {
  struct queue *in;
  struct queue *other; /* where moved-out children go; NULL for none */
  long batches, children;
};

static void *consume(void *arg) {
  struct consumer *c = arg;
  struct item held[HOLD + 1];
  int n = 0;
  struct item it;
  while (q_pop(c->in, &it)) {
    if (it.kind == BATCH && c->other != NULL && it.b % 3 == 0) {
      /* Move column 1 out: a bitwise copy, the parent's slot marked released. */
      struct ArrowArray *child = malloc(sizeof *child);
      memcpy(child, it.a->children[1], sizeof *child);
      it.a->children[1]->release = NULL;
      q_push(c->other, (struct item){CHILD, it.b, child});
    }
    held[n++] = it;
    int keep = (int)(it.b % (HOLD + 1));
    while (n > keep) {
      if (held[0].kind == BATCH) c->batches++; else c->children++;
      verify_release(&held[0]);
      memmove(held, held + 1, sizeof held[0] * (size_t)--n);
    }
  }
  for (int i = 0; i < n; i++) {
    if (held[i].kind == BATCH) c->batches++; else c->children++;
    verify_release(&held[i]);
  }
  return NULL;
}

#define OK(call)                                                          \
  do {                                                                    \
    if ((call) != 0) {                                                    \
      fprintf(stderr, "FAIL: %s: %s\n", #call, quiver_writer_last_error(w)); \
      exit(1);                                                            \
    }                                                                     \
  } while (0)

int main(int argc, char **argv) {
  long total = argc > 1 ? atol(argv[1]) : 100000;
  struct ArrowSchema schema;
  if (quiver_schema_parse("id: int64 not null, s: utf8", &schema) != 0) return 1;
  struct QuiverOptions opts;
  quiver_options_default(&opts);
  opts.batch_rows = ROWS;
  QuiverWriter *w = NULL;
  if (quiver_writer_new(&schema, &opts, &w) != 0) return 1;
  schema.release(&schema);

  struct queue qa, qb;
  q_init(&qa);
  q_init(&qb);
  struct consumer ca = {&qa, &qb, 0, 0}, cb = {&qb, NULL, 0, 0};
  pthread_t ta, tb;
  pthread_create(&ta, NULL, consume, &ca);
  pthread_create(&tb, NULL, consume, &cb);
  for (long b = 0; b < total; b++) {
    WRITE_BEGIN();
    for (int r = 0; r < ROWS; r++) {
      long k = b * ROWS + r;
      OK(quiver_append_i64(w, 0, k));
      if (k % 5 == 0) {
        OK(quiver_append_null(w, 1));
      } else {
        char s[32];
        int n = snprintf(s, sizeof s, "v%ld", k);
        OK(quiver_append_bytes(w, 1, (const uint8_t *)s, (size_t)n));
      }
      OK(quiver_end_row(w));
    }
    struct ArrowArray *a = malloc(sizeof *a);
    OK(quiver_writer_finish(w, a));
    WRITE_END();
    q_push(b % 2 == 0 ? &qa : &qb, (struct item){BATCH, b, a});
  }
  struct QuiverStats st;
  OK(quiver_writer_stats(w, &st));
  quiver_writer_free(w);
  q_close(&qa);
  pthread_join(ta, NULL);
  q_close(&qb);
  pthread_join(tb, NULL);
  long moved = (total + 5) / 6;
  if (ca.batches + cb.batches != total) die("not every batch was released", total);
  if (ca.children + cb.children != moved) die("not every moved child was released", moved);
  if (quiver_live_arrays() != 0) die("arrays still live", quiver_live_arrays());
  if (st.buffers_reused == 0) die("no buffer was reused", 0);
  printf("stress.c: %ld batches, %ld children moved out, buffers reused %llu, allocated %llu\n", total, moved,
         (unsigned long long)st.buffers_reused, (unsigned long long)st.buffers_allocated);
  return 0;
}
