# Type hints of quiver.py (the ctypes binding of libquiver). The wheel ships this
# file as quiver/__init__.pyi next to py.typed. tests/python/test_package.py checks
# that it declares every public name, method and parameter of quiver.py.

import ctypes
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol, TypeAlias, TypeVar

__all__ = [
    "ArrowArray",
    "ArrowArrayStream",
    "ArrowSchema",
    "QuiverError",
    "RawBatch",
    "RecordLayout",
    "RecordsError",
    "Schema",
    "Stream",
    "Writer",
    "lib",
    "live_arrays",
    "pack_validity",
    "version",
]

class _ArrowCSchemaExportable(Protocol):
    def __arrow_c_schema__(self) -> object: ...

class _ArrowCArrayExportable(Protocol):
    def __arrow_c_array__(self, requested_schema: object | None = ...) -> tuple[object, object]: ...

# What a schema argument may be: schema text, a Schema, a pyarrow schema (or any
# object with __arrow_c_schema__).
SchemaLike: TypeAlias = str | Schema | _ArrowCSchemaExportable | Any
# A contiguous buffer: bytes, bytearray, memoryview, array.array, a pyarrow Buffer.
BufferLike: TypeAlias = bytes | bytearray | memoryview | Any
# fill(writer, max_rows): writes up to max_rows rows; writing none ends the stream.
Fill: TypeAlias = Callable[[Writer, int], object]

# ---- the standard Arrow C structs
class ArrowSchema(ctypes.Structure):
    format: bytes | None
    name: bytes | None
    metadata: int | None
    flags: int
    n_children: int
    children: Any
    dictionary: Any
    release: int | None
    private_data: int | None

class ArrowArray(ctypes.Structure):
    length: int
    null_count: int
    offset: int
    n_buffers: int
    n_children: int
    buffers: Any
    children: Any
    dictionary: Any
    release: int | None
    private_data: int | None

class ArrowArrayStream(ctypes.Structure):
    get_schema: int | None
    get_next: int | None
    get_last_error: int | None
    release: int | None
    private_data: int | None

SCHEMA_RELEASE: type[ctypes._CFuncPtr]
ARRAY_RELEASE: type[ctypes._CFuncPtr]
STREAM_GET_SCHEMA: type[ctypes._CFuncPtr]
STREAM_GET_NEXT: type[ctypes._CFuncPtr]
STREAM_GET_LAST_ERROR: type[ctypes._CFuncPtr]
STREAM_RELEASE: type[ctypes._CFuncPtr]
QUIVER_FILL: type[ctypes._CFuncPtr]
QUIVER_RELEASE_CTX: type[ctypes._CFuncPtr]

def release_struct(ptr: int | None, struct_type: type[ArrowSchema] | type[ArrowArray] | type[ArrowArrayStream]) -> None: ...

# ---- quiver's own structs
class QuiverOptions(ctypes.Structure):
    batch_rows: int
    recycle: bool
    retain: int
    validate_utf8: bool

class QuiverStats(ctypes.Structure):
    batches: int
    buffers_reused: int
    buffers_allocated: int
    bytes_allocated: int
    bytes_retained: int

# ---- the library
lib: ctypes.CDLL
LIBRARY_PATH: str

class QuiverError(Exception):
    code: int
    errno: int
    message: str
    call: str
    def __init__(self, code: int, message: str | None, call: str = "") -> None: ...

def version() -> str: ...
def live_arrays() -> int: ...
def capsule_pointer(capsule: object, name: bytes) -> int: ...
def default_options() -> dict[str, int | bool]: ...
def pack_validity(flags: Iterable[object]) -> bytes: ...

class Schema:
    def __init__(self, source: SchemaLike) -> None: ...
    @classmethod
    def parse(cls, text: str) -> Schema: ...
    @classmethod
    def from_pyarrow(cls, schema: Any) -> Schema: ...
    @property
    def address(self) -> int: ...
    def to_pyarrow(self) -> Any: ...
    def __arrow_c_schema__(self) -> object: ...
    def __del__(self) -> None: ...

class RawBatch:
    schema_capsule: object
    array_capsule: object
    def __init__(self, schema_capsule: object, array_capsule: object) -> None: ...
    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]: ...
    def __iter__(self) -> Iterator[object]: ...
    @property
    def array(self) -> ArrowArray: ...

class RecordsError(QuiverError):
    written: int
    def __init__(self, code: int, message: str | None, call: str = "", written: int = 0) -> None: ...

_C = TypeVar("_C", bound="_Closing")

class _Closing:
    def __enter__(self: _C) -> _C: ...
    def __exit__(self, *exc: object) -> None: ...
    def __del__(self) -> None: ...

class RecordLayout(_Closing):
    FIXED: int
    INT: int
    PTR_LEN: int
    REL_LEN: int
    BIG_ENDIAN: int
    NULL_NEVER: int
    NULL_BIT: int
    NULL_BYTE: int
    def __init__(self, writer: Writer, *, unsafe_row: bool = False) -> None: ...
    @classmethod
    def unsafe_row(cls, writer: Writer) -> RecordLayout: ...
    @classmethod
    def from_numpy(cls, writer: Writer, dtype: Any, nulls: dict[int, str] | None = None) -> RecordLayout: ...
    def set(
        self,
        column: int,
        encoding: int,
        at: int,
        at2: int = 0,
        null: int = 0,
        null_at: int = 0,
        null_bit: int = 0,
    ) -> None: ...
    @property
    def handle(self) -> int: ...
    def close(self) -> None: ...

class Writer(_Closing):
    def __init__(
        self,
        schema: SchemaLike,
        *,
        batch_rows: int | None = None,
        recycle: bool | None = None,
        retain: int | None = None,
        validate_utf8: bool | None = None,
        memory_limit: int | None = None,
    ) -> None: ...
    def set_memory_limit(self, nbytes: int) -> None: ...
    def close(self) -> None: ...
    def free(self) -> None: ...
    @property
    def handle(self) -> int: ...
    @property
    def last_error(self) -> str | None: ...
    # row path: appends by node number (docs/schema-text.md)
    def append_null(self, node: int) -> None: ...
    def append_bool(self, node: int, v: bool) -> None: ...
    def append_i8(self, node: int, v: int) -> None: ...
    def append_i16(self, node: int, v: int) -> None: ...
    def append_i32(self, node: int, v: int) -> None: ...
    def append_i64(self, node: int, v: int) -> None: ...
    def append_u8(self, node: int, v: int) -> None: ...
    def append_u16(self, node: int, v: int) -> None: ...
    def append_u32(self, node: int, v: int) -> None: ...
    def append_u64(self, node: int, v: int) -> None: ...
    def append_f32(self, node: int, v: float) -> None: ...
    def append_f64(self, node: int, v: float) -> None: ...
    def append_bytes(self, node: int, data: str | BufferLike) -> None: ...
    def append_decimal(self, node: int, value: int | BufferLike, width: int | None = None) -> None: ...
    def begin(self, node: int) -> None: ...
    def end(self, node: int) -> None: ...
    def end_row(self) -> None: ...
    def abort_row(self) -> None: ...
    SLOT_BOOL: int
    SLOT_I8: int
    SLOT_I16: int
    SLOT_I32: int
    SLOT_I64: int
    SLOT_U8: int
    SLOT_U16: int
    SLOT_U32: int
    SLOT_U64: int
    SLOT_F32: int
    SLOT_F64: int
    def append_slots(
        self, node: int, kinds: Sequence[int], slots: Sequence[int | float], nulls: int = 0, end_row: bool = False
    ) -> None: ...
    # column path
    def write_column(
        self, node: int, values: BufferLike, validity: BufferLike | None = None, length: int | None = None
    ) -> None: ...
    def write_array(self, node: int, array: _ArrowCArrayExportable | Any) -> None: ...
    # records
    def write_records(
        self, layout: RecordLayout, records: BufferLike, stride: int | None = None, n: int | None = None
    ) -> int: ...
    def write_record_ptrs(self, layout: RecordLayout, ptrs: Iterable[int], sizes: Iterable[int] | None = None) -> int: ...
    # batches
    @property
    def rows(self) -> int: ...
    def stats(self) -> dict[str, int]: ...
    def export_schema(self) -> object: ...
    @property
    def arrow_schema(self) -> Any: ...
    def finish(self, raw: bool = False) -> Any: ...
    def set_error(self, message: str) -> None: ...

class Stream:
    schema: Schema
    exception: BaseException | None
    streams_created: int
    def __init__(
        self,
        schema: SchemaLike,
        fill: Fill | None = None,
        *,
        factory: Callable[[], Fill] | None = None,
        batch_rows: int | None = None,
        recycle: bool | None = None,
        retain: int | None = None,
        validate_utf8: bool | None = None,
    ) -> None: ...
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...
    def to_reader(self) -> Any: ...
    def read_all(self) -> Any: ...

def stream_get_last_error(stream: ArrowArrayStream) -> str | None: ...
