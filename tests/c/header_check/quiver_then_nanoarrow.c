/* quiver.h first, then nanoarrow.h: the Arrow C structs are declared once. */
#include "quiver.h"
#include "nanoarrow/nanoarrow.h"

int header_check_quiver_then_nanoarrow(void);
int header_check_quiver_then_nanoarrow(void) {
  struct ArrowSchema schema;
  ArrowSchemaInit(&schema);
  struct ArrowArrayStream stream;
  (void)stream;
  return quiver_schema_parse("a: int32", &schema);
}
