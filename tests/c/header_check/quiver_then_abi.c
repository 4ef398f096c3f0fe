/* quiver.h first, then Arrow C++'s arrow/c/abi.h: the Arrow C structs are declared once. */
#include "quiver.h"
#include "arrow/c/abi.h"

int header_check_quiver_then_abi(struct ArrowArrayStream *out);
int header_check_quiver_then_abi(struct ArrowArrayStream *out) {
  struct ArrowSchema schema;
  int rc = quiver_schema_parse("a: int32", &schema);
  if (rc == 0) {
    rc = quiver_stream_new(&schema, NULL, NULL, NULL, NULL, out);
    schema.release(&schema);
  }
  return rc + (ARROW_FLAG_NULLABLE == 2 ? 0 : 1);
}
