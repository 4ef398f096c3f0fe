/* nanoarrow.h first, then quiver.h: the Arrow C structs are declared once. */
#include "nanoarrow/nanoarrow.h"
#include "quiver.h"

int header_check_nanoarrow_then_quiver(void);
int header_check_nanoarrow_then_quiver(void) {
  struct ArrowSchema schema;
  ArrowSchemaInit(&schema);
  struct ArrowArrayStream stream;
  (void)stream;
  return quiver_schema_parse("a: int32", &schema);
}
