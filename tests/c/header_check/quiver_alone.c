/* quiver.h on its own: it brings everything it needs (stdint, stdbool, stddef, the Arrow C structs). */
#include "quiver.h"

int header_check_quiver_alone(void);
int header_check_quiver_alone(void) {
  struct QuiverOptions opts;
  struct QuiverStats stats;
  QuiverWriter *w = 0;
  QuiverFill fill = 0;
  struct ArrowArray array;
  struct ArrowArrayStream stream;
  (void)array;
  (void)stream;
  (void)fill;
  quiver_options_default(&opts);
  return quiver_writer_stats(w, &stats) + (int)quiver_live_arrays();
}
