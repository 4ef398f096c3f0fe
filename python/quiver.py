"""ctypes binding of libquiver: write Arrow record batches from Python.

The shared object is the ``libquiver.so`` inside the installed package (the
wheel carries it), else the file named by the environment variable
``QUIVER_LIB``, else ``target/release/libquiver.so`` of the repository this
file lives in.

* :class:`Schema` -- from the schema text form (``quiver_schema_parse``) or
  from a pyarrow schema.
* :class:`Writer` -- the row path (``append_*`` by node number, ``begin`` /
  ``end``, ``end_row`` / ``abort_row``), the column path (``write_column``,
  ``write_array``), ``finish()`` and ``stats()``.
* :class:`Stream` -- a C stream filled by a Python callable
  ``fill(writer, max_rows)``; it implements ``__arrow_c_stream__`` so pyarrow,
  polars, duckdb and nanoarrow read it directly.

Every failing call raises :class:`QuiverError`, carrying the errno code and the
library's last-error message.
"""

from __future__ import annotations

import ctypes
import errno as _errno
import os
import struct as _struct
import threading
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_bool,
    c_char_p,
    c_double,
    c_float,
    c_int,
    c_int8,
    c_int16,
    c_int32,
    c_int64,
    c_size_t,
    c_uint8,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
)

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

# ---------------------------------------------------------------------------
# The standard Arrow C Data / C Stream structs


class ArrowSchema(Structure):
    pass


ArrowSchema._fields_ = [
    ("format", c_char_p),
    ("name", c_char_p),
    ("metadata", c_void_p),
    ("flags", c_int64),
    ("n_children", c_int64),
    ("children", POINTER(POINTER(ArrowSchema))),
    ("dictionary", POINTER(ArrowSchema)),
    ("release", c_void_p),
    ("private_data", c_void_p),
]


class ArrowArray(Structure):
    pass


ArrowArray._fields_ = [
    ("length", c_int64),
    ("null_count", c_int64),
    ("offset", c_int64),
    ("n_buffers", c_int64),
    ("n_children", c_int64),
    ("buffers", POINTER(c_void_p)),
    ("children", POINTER(POINTER(ArrowArray))),
    ("dictionary", POINTER(ArrowArray)),
    ("release", c_void_p),
    ("private_data", c_void_p),
]


class ArrowArrayStream(Structure):
    """The five pointers of the C stream interface."""

    _fields_ = [
        ("get_schema", c_void_p),
        ("get_next", c_void_p),
        ("get_last_error", c_void_p),
        ("release", c_void_p),
        ("private_data", c_void_p),
    ]


# Function pointer types of the struct members, for calling them from Python.
SCHEMA_RELEASE = CFUNCTYPE(None, c_void_p)
ARRAY_RELEASE = CFUNCTYPE(None, c_void_p)
STREAM_GET_SCHEMA = CFUNCTYPE(c_int, c_void_p, c_void_p)
STREAM_GET_NEXT = CFUNCTYPE(c_int, c_void_p, c_void_p)
STREAM_GET_LAST_ERROR = CFUNCTYPE(c_char_p, c_void_p)
STREAM_RELEASE = CFUNCTYPE(None, c_void_p)


def release_struct(ptr, struct_type):
    """Call ``release`` of the Arrow struct at address ``ptr`` if it is set."""
    if not ptr:
        return
    s = struct_type.from_address(ptr)
    if s.release:
        SCHEMA_RELEASE(s.release)(ptr)


# ---------------------------------------------------------------------------
# quiver's own structs


class QuiverOptions(Structure):
    _fields_ = [
        ("batch_rows", c_int64),
        ("recycle", c_bool),
        ("retain", c_int32),
        ("validate_utf8", c_bool),
        # More fields may follow in the library: quiver_options_default fills
        # them, so leave room for them.
        ("_reserved", c_uint8 * 256),
    ]


class QuiverStats(Structure):
    _fields_ = [
        ("batches", c_uint64),
        ("buffers_reused", c_uint64),
        ("buffers_allocated", c_uint64),
        ("bytes_allocated", c_uint64),
        ("bytes_retained", c_uint64),
    ]


QUIVER_FILL = CFUNCTYPE(c_int, c_void_p, c_void_p, c_int64)
QUIVER_RELEASE_CTX = CFUNCTYPE(None, c_void_p)

# ---------------------------------------------------------------------------
# Loading the library


def _library_path() -> str:
    # 1. the library inside the installed package (the wheel puts it beside
    #    this file); 2. QUIVER_LIB; 3. target/release of the repository this
    #    file lives in (python/quiver.py in a checkout).
    here = os.path.dirname(os.path.abspath(__file__))
    packaged = os.path.join(here, "libquiver.so")
    if os.path.isfile(packaged):
        return packaged
    env = os.environ.get("QUIVER_LIB")
    if env:
        return env
    return os.path.join(os.path.dirname(here), "target", "release", "libquiver.so")


def _load():
    path = _library_path()
    try:
        handle = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(f"quiver: cannot load {path} ({e}); build it with "
                          "`cargo build --release`, set QUIVER_LIB, or install the wheel "
                          "(scripts/build-wheel.sh)") from e
    W = c_void_p  # QuiverWriter *
    sig = {
        "quiver_version": (c_char_p, []),
        "quiver_last_error": (c_char_p, []),
        "quiver_writer_last_error": (c_char_p, [W]),
        "quiver_options_default": (None, [POINTER(QuiverOptions)]),
        "quiver_schema_parse": (c_int, [c_char_p, c_void_p]),
        "quiver_writer_new": (c_int, [c_void_p, POINTER(QuiverOptions), POINTER(c_void_p)]),
        "quiver_writer_free": (None, [W]),
        "quiver_append_null": (c_int, [W, c_uint32]),
        "quiver_append_bool": (c_int, [W, c_uint32, c_bool]),
        "quiver_append_i8": (c_int, [W, c_uint32, c_int8]),
        "quiver_append_i16": (c_int, [W, c_uint32, c_int16]),
        "quiver_append_i32": (c_int, [W, c_uint32, c_int32]),
        "quiver_append_i64": (c_int, [W, c_uint32, c_int64]),
        "quiver_append_u8": (c_int, [W, c_uint32, c_uint8]),
        "quiver_append_u16": (c_int, [W, c_uint32, c_uint16]),
        "quiver_append_u32": (c_int, [W, c_uint32, c_uint32]),
        "quiver_append_u64": (c_int, [W, c_uint32, c_uint64]),
        "quiver_append_f32": (c_int, [W, c_uint32, c_float]),
        "quiver_append_f64": (c_int, [W, c_uint32, c_double]),
        "quiver_append_bytes": (c_int, [W, c_uint32, c_void_p, c_size_t]),
        "quiver_append_decimal": (c_int, [W, c_uint32, c_void_p, c_size_t]),
        "quiver_begin": (c_int, [W, c_uint32]),
        "quiver_end": (c_int, [W, c_uint32]),
        "quiver_end_row": (c_int, [W]),
        "quiver_abort_row": (c_int, [W]),
        "quiver_append_slots": (c_int, [W, c_uint32, c_uint32, c_void_p, c_void_p, c_uint64, c_bool]),
        "quiver_write_column": (c_int, [W, c_uint32, c_void_p, c_void_p, c_int64]),
        "quiver_write_array": (c_int, [W, c_uint32, c_void_p, c_void_p]),
        "quiver_writer_finish": (c_int, [W, c_void_p]),
        "quiver_writer_export_schema": (c_int, [W, c_void_p]),
        "quiver_writer_rows": (c_int64, [W]),
        "quiver_writer_stats": (c_int, [W, POINTER(QuiverStats)]),
        "quiver_stream_new": (c_int, [c_void_p, POINTER(QuiverOptions), QUIVER_FILL,
                                      c_void_p, QUIVER_RELEASE_CTX, c_void_p]),
        "quiver_writer_set_error": (c_int, [W, c_char_p]),
        "quiver_writer_set_memory_limit": (c_int, [W, c_int64]),
        "quiver_live_arrays": (c_int64, []),
        "quiver_layout_new": (c_int, [W, POINTER(c_void_p)]),
        "quiver_layout_unsafe_row": (c_int, [W, POINTER(c_void_p)]),
        "quiver_layout_free": (None, [c_void_p]),
        "quiver_layout_set": (c_int, [c_void_p, c_uint32, c_int32, c_uint64, c_uint64, c_int32, c_uint64,
                                      c_uint32]),
        "quiver_write_records": (c_int, [W, c_void_p, c_void_p, c_int64, c_int64, POINTER(c_int64)]),
        "quiver_write_record_ptrs": (c_int, [W, c_void_p, c_void_p, c_void_p, c_int64, POINTER(c_int64)]),
    }
    for name, (restype, argtypes) in sig.items():
        try:
            fn = getattr(handle, name)
        except AttributeError:
            continue  # reported when called
        fn.restype = restype
        fn.argtypes = argtypes
    return handle, path


lib, LIBRARY_PATH = _load()

_libc = ctypes.CDLL(None)
_libc.calloc.restype = c_void_p
_libc.calloc.argtypes = [c_size_t, c_size_t]
_libc.free.restype = None
_libc.free.argtypes = [c_void_p]

# ---------------------------------------------------------------------------
# Errors

_ERRNO_NAMES = {
    getattr(_errno, n): n
    for n in ("EINVAL", "ENOSYS", "ENOMEM", "EOVERFLOW", "ERANGE", "EIO", "ENOTRECOVERABLE")
}


class QuiverError(Exception):
    """A failed quiver call: ``code`` is the errno value, ``message`` the
    library's last-error text (may be empty)."""

    def __init__(self, code: int, message: str | None, call: str = ""):
        self.code = code
        self.errno = code
        self.message = message or ""
        self.call = call
        name = _ERRNO_NAMES.get(code, str(code))
        where = f"{call}: " if call else ""
        super().__init__(f"{where}{name}: {self.message}" if self.message else f"{where}{name}")


def _decode(p) -> str | None:
    if p is None:
        return None
    return p.decode("utf-8", "replace")


def _check_global(rc: int, call: str) -> None:
    if rc != 0:
        raise QuiverError(rc, _decode(lib.quiver_last_error()), call)


def version() -> str:
    return _decode(lib.quiver_version())


def live_arrays() -> int:
    """ArrowArray structs handed out by quiver whose release has not run yet."""
    return int(lib.quiver_live_arrays())


# ---------------------------------------------------------------------------
# PyCapsules

_pyapi = ctypes.pythonapi
_PyCapsule_Destructor = CFUNCTYPE(None, c_void_p)
_pyapi.PyCapsule_New.restype = ctypes.py_object
_pyapi.PyCapsule_New.argtypes = [c_void_p, c_char_p, _PyCapsule_Destructor]
_pyapi.PyCapsule_GetPointer.restype = c_void_p
_pyapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, c_char_p]
# The destructor gets the capsule while it is being freed: take it as a raw
# pointer, never as a Python object (that would revive it).
_capsule_get_pointer_raw = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(
    ("PyCapsule_GetPointer", _pyapi))
_capsule_get_name_raw = ctypes.PYFUNCTYPE(c_char_p, c_void_p)(("PyCapsule_GetName", _pyapi))

# Capsule names must outlive the capsules: module constants.
_NAME_SCHEMA = b"arrow_schema"
_NAME_ARRAY = b"arrow_array"
_NAME_STREAM = b"arrow_array_stream"


def _capsule_destructor(capsule):
    # The struct was calloc'ed by us; release it unless a consumer moved it.
    name = _capsule_get_name_raw(capsule)
    ptr = _capsule_get_pointer_raw(capsule, name)
    if not ptr:
        return
    # All three structs keep `release` at a fixed offset from the end, but
    # not the same one: pick the struct by name.
    kind = {_NAME_SCHEMA: ArrowSchema, _NAME_ARRAY: ArrowArray,
            _NAME_STREAM: ArrowArrayStream}.get(name)
    if kind is not None:
        release_struct(ptr, kind)
    _libc.free(ptr)


_CAPSULE_DESTRUCTOR = _PyCapsule_Destructor(_capsule_destructor)


def _alloc(struct_type):
    ptr = _libc.calloc(1, ctypes.sizeof(struct_type))
    if not ptr:
        raise MemoryError
    return ptr


def _make_capsule(ptr, name: bytes):
    """Wrap the calloc'ed struct at ``ptr``; the capsule owns and frees it."""
    try:
        return _pyapi.PyCapsule_New(ptr, name, _CAPSULE_DESTRUCTOR)
    except BaseException:
        _libc.free(ptr)
        raise


def capsule_pointer(capsule, name: bytes) -> int:
    return _pyapi.PyCapsule_GetPointer(capsule, name)


# ---------------------------------------------------------------------------
# Schema


def _pyarrow():
    import pyarrow  # imported lazily: the binding itself does not need it

    return pyarrow


class Schema:
    """An ArrowSchema owned by Python, released when the object goes away.

    ``Schema("id: int64 not null, name: utf8")`` parses the text form;
    ``Schema(pa_schema)`` or ``Schema.from_pyarrow(pa_schema)`` exports a
    pyarrow schema; ``Schema(obj)`` takes any object with ``__arrow_c_schema__``.
    """

    def __init__(self, source):
        self._c = ArrowSchema()
        self._text = None
        self._pa = None
        if isinstance(source, Schema):
            source = source._text if source._text is not None else source.to_pyarrow()
        if isinstance(source, str):
            self._text = source
            rc = lib.quiver_schema_parse(source.encode("utf-8"), ctypes.addressof(self._c))
            _check_global(rc, "quiver_schema_parse")
        elif hasattr(source, "_export_to_c"):
            self._pa = source
            source._export_to_c(ctypes.addressof(self._c))
        elif hasattr(source, "__arrow_c_schema__"):
            cap = source.__arrow_c_schema__()
            ptr = capsule_pointer(cap, _NAME_SCHEMA)
            ctypes.memmove(ctypes.addressof(self._c), ptr, ctypes.sizeof(ArrowSchema))
            ArrowSchema.from_address(ptr).release = None  # moved
        else:
            raise TypeError(f"Schema: expected text or a pyarrow schema, got {type(source).__name__}")

    @classmethod
    def parse(cls, text: str) -> "Schema":
        return cls(text)

    @classmethod
    def from_pyarrow(cls, schema) -> "Schema":
        return cls(schema)

    @property
    def address(self) -> int:
        return ctypes.addressof(self._c)

    def _export_into(self, address: int) -> None:
        """Write a new copy of the schema into the ArrowSchema at ``address``."""
        if self._text is not None:
            _check_global(lib.quiver_schema_parse(self._text.encode("utf-8"), address),
                          "quiver_schema_parse")
        else:
            self._pa._export_to_c(address)

    def to_pyarrow(self):
        """The schema as a pyarrow.Schema (a copy)."""
        if self._pa is None:
            pa = _pyarrow()
            c = ArrowSchema()
            self._export_into(ctypes.addressof(c))
            try:
                self._pa = pa.Schema._import_from_c(ctypes.addressof(c))
            finally:
                release_struct(ctypes.addressof(c), ArrowSchema)
        return self._pa

    def __arrow_c_schema__(self):
        ptr = _alloc(ArrowSchema)
        cap = _make_capsule(ptr, _NAME_SCHEMA)
        self._export_into(ptr)
        return cap

    def __del__(self):
        c = getattr(self, "_c", None)
        if c is not None and c.release:
            SCHEMA_RELEASE(c.release)(ctypes.addressof(c))

    def __repr__(self):
        return f"quiver.Schema({self._text!r})" if self._text else f"quiver.Schema({self._pa})"


def _as_schema(schema) -> Schema:
    return schema if isinstance(schema, Schema) else Schema(schema)


def _options(batch_rows=None, recycle=None, retain=None, validate_utf8=None) -> QuiverOptions:
    opts = QuiverOptions()
    lib.quiver_options_default(ctypes.byref(opts))
    if batch_rows is not None:
        opts.batch_rows = batch_rows
    if recycle is not None:
        opts.recycle = recycle
    if retain is not None:
        opts.retain = retain
    if validate_utf8 is not None:
        opts.validate_utf8 = validate_utf8
    return opts


def default_options() -> dict:
    o = _options()
    return {"batch_rows": o.batch_rows, "recycle": o.recycle, "retain": o.retain,
            "validate_utf8": o.validate_utf8}


# ---------------------------------------------------------------------------
# Buffers from Python objects


def _buffer(obj):
    """(pointer, nbytes, itemsize, keepalive) of a contiguous buffer object."""
    if obj is None:
        return None, 0, 1, None
    if hasattr(obj, "address") and hasattr(obj, "size") and not isinstance(obj, (bytes, bytearray, memoryview)):
        return obj.address, obj.size, 1, obj  # pyarrow.Buffer
    if isinstance(obj, bytes):
        return ctypes.cast(c_char_p(obj), c_void_p).value, len(obj), 1, obj
    mv = memoryview(obj)
    if not mv.contiguous:
        raise ValueError("buffer must be contiguous")
    itemsize = mv.itemsize
    nbytes = mv.nbytes
    if nbytes == 0:
        return None, 0, itemsize, mv
    if mv.readonly:
        data = mv.tobytes()
        return ctypes.cast(c_char_p(data), c_void_p).value, nbytes, itemsize, data
    raw = (ctypes.c_char * nbytes).from_buffer(mv.cast("B"))
    return ctypes.addressof(raw), nbytes, itemsize, (mv, raw)


def pack_validity(flags) -> bytes:
    """LSB-first validity bitmap of an iterable of truthy (valid) values."""
    flags = list(flags)
    out = bytearray((len(flags) + 7) // 8)
    for i, f in enumerate(flags):
        if f:
            out[i >> 3] |= 1 << (i & 7)
    return bytes(out)


def _walk_nodes(fields):
    """pyarrow fields in the pre-order node numbering of the schema text docs."""
    pa = _pyarrow()
    out = []

    def visit(field):
        out.append(field)
        t = field.type
        if pa.types.is_map(t):
            entries = pa.field("entries", pa.struct([t.key_field, t.item_field]), nullable=False)
            out.append(entries)
            visit(t.key_field)
            visit(t.item_field)
        elif pa.types.is_struct(t):
            for i in range(t.num_fields):
                visit(t.field(i))
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            visit(t.value_field)

    for f in fields:
        visit(f)
    return out


# ---------------------------------------------------------------------------
# Writer


class RawBatch:
    """A finished batch as the pair of PyCapsules of the Arrow PyCapsule
    interface (``arrow_schema``, ``arrow_array``). Unpacks as a tuple and has
    ``__arrow_c_array__``, so pyarrow / polars / nanoarrow take it directly."""

    def __init__(self, schema_capsule, array_capsule):
        self.schema_capsule = schema_capsule
        self.array_capsule = array_capsule

    def __arrow_c_array__(self, requested_schema=None):
        return self.schema_capsule, self.array_capsule

    def __iter__(self):
        return iter((self.schema_capsule, self.array_capsule))

    @property
    def array(self) -> ArrowArray:
        return ArrowArray.from_address(capsule_pointer(self.array_capsule, _NAME_ARRAY))


class RecordsError(QuiverError):
    """A batched record call stopped at a bad record: the first ``written``
    records were committed; the bad one and those after it changed nothing."""

    def __init__(self, code: int, message: str | None, call: str = "", written: int = 0):
        super().__init__(code, message, call)
        self.written = written


class _Closing:
    """``with`` support and a last-resort free for a class holding a native
    handle in ``_ptr`` and releasing it in ``close``."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_ptr", None):
            self.close()


class RecordLayout(_Closing):
    """Where each top-level column of a writer's schema sits in a row-major
    record (docs/records.md), described once and used for every batch with
    :meth:`Writer.write_records` / :meth:`Writer.write_record_ptrs`.
    ``RecordLayout(writer)`` has no column described yet (see :meth:`set`);
    :meth:`unsafe_row` is Spark's UnsafeRow; :meth:`from_numpy` follows a
    numpy structured dtype. Free it with :meth:`close` (or use ``with``)."""

    # encodings (QUIVER_RECORD_*)
    FIXED = 0
    INT = 1
    PTR_LEN = 2
    REL_LEN = 3
    BIG_ENDIAN = 4
    # null marks (QUIVER_NULL_*)
    NULL_NEVER = 0
    NULL_BIT = 1
    NULL_BYTE = 2

    def __init__(self, writer: "Writer", *, unsafe_row: bool = False):
        self._ptr = None
        out = c_void_p()
        call = "quiver_layout_unsafe_row" if unsafe_row else "quiver_layout_new"
        rc = getattr(lib, call)(writer.handle, ctypes.byref(out))
        _check_global(rc, call)
        self._ptr = out.value

    @classmethod
    def unsafe_row(cls, writer: "Writer") -> "RecordLayout":
        """Spark's UnsafeRow layout for ``writer``'s schema."""
        return cls(writer, unsafe_row=True)

    @classmethod
    def from_numpy(cls, writer: "Writer", dtype, nulls=None) -> "RecordLayout":
        """A layout for the records of a numpy structured ``dtype``: its
        fields, in order, are the columns in schema order, each read as the
        column's native value at the field's offset (so each field must have
        the column's width: ``<i4`` for int32, ``?`` or ``u1`` for bool,
        ``<f8`` for float64...). ``nulls`` maps a column index to the name of
        a one-byte flag field (nonzero = null); flag fields are not columns."""
        nulls = dict(nulls or {})
        flags = set(nulls.values())
        columns = [n for n in dtype.names if n not in flags]
        layout = cls(writer)
        try:
            for i, name in enumerate(columns):
                at = dtype.fields[name][1]
                if i in nulls:
                    layout.set(i, cls.FIXED, at, null=cls.NULL_BYTE, null_at=dtype.fields[nulls[i]][1])
                else:
                    layout.set(i, cls.FIXED, at)
        except BaseException:
            layout.close()
            raise
        return layout

    def set(self, column: int, encoding: int, at: int, at2: int = 0, null: int = 0, null_at: int = 0,
            null_bit: int = 0) -> None:
        """Describe top-level column ``column``: its value ``encoding``
        (``FIXED`` at ``at``; ``INT``: ``at2``-byte integer at ``at``;
        ``PTR_LEN``: pointer at ``at``, 64-bit length at ``at2``;
        ``REL_LEN`` / ``BIG_ENDIAN``: u32 offset from the record start at
        ``at``, u32 length at ``at2``) and its ``null`` mark (``NULL_NEVER``;
        ``NULL_BIT``: bit ``null_bit`` of the bitmap at ``null_at``, set =
        null; ``NULL_BYTE``: the byte at ``null_at``, nonzero = null)."""
        rc = lib.quiver_layout_set(self.handle, column, encoding, at, at2, null, null_at, null_bit)
        _check_global(rc, "quiver_layout_set")

    @property
    def handle(self) -> int:
        if not self._ptr:
            raise ValueError("quiver record layout is closed")
        return self._ptr

    def close(self) -> None:
        ptr, self._ptr = self._ptr, None
        if ptr:
            lib.quiver_layout_free(ptr)


# struct codes of the QUIVER_SLOT_* kinds, each padded to its 8-byte slot (little-endian).
_SLOT_CODES = ["?7x", "b7x", "h6x", "i4x", "q", "B7x", "H6x", "I4x", "Q", "f4x", "d"]
_SLOT_PACKERS: dict = {}


def _slot_packer(kinds: tuple):
    """(the kinds as bytes, a Struct packing one value a slot) for ``kinds``, cached."""
    p = _SLOT_PACKERS.get(kinds)
    if p is None:
        # an unknown kind packs as a uint64 slot; quiver_append_slots refuses it
        codes = "".join(_SLOT_CODES[k] if 0 <= k < len(_SLOT_CODES) else "Q" for k in kinds)
        p = (bytes(k & 0xFF for k in kinds), _struct.Struct("<" + codes))
        if len(_SLOT_PACKERS) < 256:
            _SLOT_PACKERS[kinds] = p
    return p


class Writer(_Closing):
    """A quiver writer. ``Writer(schema, batch_rows=..., recycle=..., retain=...,
    validate_utf8=..., memory_limit=...)`` where ``schema`` is a :class:`Schema`,
    schema text or a pyarrow schema. Free it with :meth:`close` (or use ``with``)."""

    def __init__(self, schema, *, batch_rows=None, recycle=None, retain=None, validate_utf8=None,
                 memory_limit=None):
        self._ptr = None
        self._owned = True
        self._pa_schema = None
        self._nodes = None
        self._schema = _as_schema(schema)
        opts = _options(batch_rows, recycle, retain, validate_utf8)
        out = c_void_p()
        rc = lib.quiver_writer_new(self._schema.address, ctypes.byref(opts), ctypes.byref(out))
        _check_global(rc, "quiver_writer_new")
        self._ptr = out.value
        if memory_limit is not None:
            self.set_memory_limit(memory_limit)

    @classmethod
    def _borrow(cls, ptr) -> "Writer":
        """Wrap a writer owned by someone else (a stream): never freed here."""
        w = cls.__new__(cls)
        w._ptr = ptr
        w._owned = False
        w._pa_schema = None
        w._nodes = None
        w._schema = None
        return w

    # -- life cycle
    def close(self) -> None:
        ptr, self._ptr = self._ptr, None
        if ptr and self._owned:
            lib.quiver_writer_free(ptr)

    free = close

    @property
    def handle(self) -> int:
        if not self._ptr:
            raise ValueError("quiver writer is closed (or its fill call has returned)")
        return self._ptr

    def _check(self, rc: int, call: str) -> None:
        if rc != 0:
            raise QuiverError(rc, _decode(lib.quiver_writer_last_error(self._ptr)), call)

    @property
    def last_error(self) -> str | None:
        return _decode(lib.quiver_writer_last_error(self.handle))

    # -- row path
    def append_null(self, node: int) -> None:
        self._check(lib.quiver_append_null(self.handle, node), "quiver_append_null")

    def append_bool(self, node: int, v: bool) -> None:
        self._check(lib.quiver_append_bool(self.handle, node, bool(v)), "quiver_append_bool")

    def append_i8(self, node, v):
        self._check(lib.quiver_append_i8(self.handle, node, v), "quiver_append_i8")

    def append_i16(self, node, v):
        self._check(lib.quiver_append_i16(self.handle, node, v), "quiver_append_i16")

    def append_i32(self, node, v):
        self._check(lib.quiver_append_i32(self.handle, node, v), "quiver_append_i32")

    def append_i64(self, node, v):
        self._check(lib.quiver_append_i64(self.handle, node, v), "quiver_append_i64")

    def append_u8(self, node, v):
        self._check(lib.quiver_append_u8(self.handle, node, v), "quiver_append_u8")

    def append_u16(self, node, v):
        self._check(lib.quiver_append_u16(self.handle, node, v), "quiver_append_u16")

    def append_u32(self, node, v):
        self._check(lib.quiver_append_u32(self.handle, node, v), "quiver_append_u32")

    def append_u64(self, node, v):
        self._check(lib.quiver_append_u64(self.handle, node, v), "quiver_append_u64")

    def append_f32(self, node, v):
        self._check(lib.quiver_append_f32(self.handle, node, v), "quiver_append_f32")

    def append_f64(self, node, v):
        self._check(lib.quiver_append_f64(self.handle, node, v), "quiver_append_f64")

    def append_bytes(self, node: int, data) -> None:
        """utf8 / binary / fixed-size binary (and large forms); ``str`` is
        encoded as UTF-8."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        ptr, n, _, keep = _buffer(data)
        if ptr is None:
            ptr = ctypes.cast(c_char_p(b""), c_void_p).value  # non-NULL for empty values
        self._check(lib.quiver_append_bytes(self.handle, node, ptr, n), "quiver_append_bytes")
        del keep

    def append_decimal(self, node: int, value, width: int | None = None) -> None:
        """``value``: little-endian two's complement bytes, or a Python int
        (the unscaled value) encoded in ``width`` bytes (default: the fewest
        that hold it)."""
        if isinstance(value, int):
            if width is None:
                magnitude = value if value >= 0 else ~value
                width = magnitude.bit_length() // 8 + 1  # room for the sign bit
            value = value.to_bytes(width, "little", signed=True)
        ptr, n, _, keep = _buffer(value)
        self._check(lib.quiver_append_decimal(self.handle, node, ptr, n), "quiver_append_decimal")
        del keep

    def begin(self, node: int) -> None:
        self._check(lib.quiver_begin(self.handle, node), "quiver_begin")

    def end(self, node: int) -> None:
        self._check(lib.quiver_end(self.handle, node), "quiver_end")

    def end_row(self) -> None:
        self._check(lib.quiver_end_row(self.handle), "quiver_end_row")

    def abort_row(self) -> None:
        self._check(lib.quiver_abort_row(self.handle), "quiver_abort_row")

    #: ``append_slots`` kinds (``QUIVER_SLOT_*``): how each 8-byte slot holds its value.
    SLOT_BOOL, SLOT_I8, SLOT_I16, SLOT_I32, SLOT_I64, SLOT_U8, SLOT_U16, SLOT_U32, SLOT_U64, SLOT_F32, SLOT_F64 = range(11)

    def append_slots(self, node: int, kinds, slots, nulls: int = 0, end_row: bool = False) -> None:
        """``quiver_append_slots``: value ``k`` (an int, or a float for the
        ``SLOT_F32`` / ``SLOT_F64`` kinds) to node ``node + k`` as the typed
        append of ``kinds[k]`` would append it, or a null where bit ``k`` of
        ``nulls`` is set; then ``end_row()`` when ``end_row``. The first value
        that fails raises its error, the values before it appended and the row
        left open (as the sequence of appends would)."""
        n = len(kinds)
        if len(slots) != n:
            raise ValueError(f"append_slots: {n} kinds and {len(slots)} slots")
        packer = _slot_packer(tuple(kinds))
        try:
            packed = packer[1].pack(*slots)
        except _struct.error:  # a value out of its kind's range: its low bytes, as C would take them
            packed = _struct.pack(f"<{n}Q", *(
                _struct.unpack("<Q", _struct.pack("<d", v))[0] if kind == self.SLOT_F64 else
                _struct.unpack("<I", _struct.pack("<f", v))[0] if kind == self.SLOT_F32 else
                int(v) & 0xFFFF_FFFF_FFFF_FFFF for kind, v in zip(kinds, slots)))
        rc = lib.quiver_append_slots(self.handle, node, n, packer[0], packed, nulls, end_row)
        self._check(rc, "quiver_append_slots")

    # -- column path
    def write_column(self, node: int, values, validity=None, length: int | None = None) -> None:
        """A whole top-level fixed-width column from a buffer: ``bytes``,
        ``bytearray``, ``memoryview``, ``array.array('q', ...)``, a pyarrow
        Buffer. ``validity`` is an LSB-first bitmap (or None: all valid).
        ``length`` defaults to the number of values the buffer holds.
        ``node`` is the column's node number (pre-order over the whole field
        tree, so a column after a nested one is not at its column index)."""
        vptr, vbytes, itemsize, keep_v = _buffer(values)
        bptr, _, _, keep_b = _buffer(validity)
        if length is None:
            width = self._node_width(node)
            if width is None:
                raise ValueError("write_column: pass length= for this column type")
            length = vbytes // width
        rc = lib.quiver_write_column(self.handle, node, vptr, bptr, length)
        del keep_v, keep_b
        self._check(rc, "quiver_write_column")

    def write_array(self, node: int, array) -> None:
        """Copy an Arrow array (pyarrow Array, or anything with
        ``__arrow_c_array__``) into the top-level column at ``node``, the
        column's node number (pre-order over the whole field tree: in
        ``"l: list<int32>, k: int32"`` column ``k`` is node 2). The array may
        be nested; its children fill the column's child nodes."""
        if hasattr(array, "_export_to_c"):
            c_array, c_schema = ArrowArray(), ArrowSchema()
            array._export_to_c(ctypes.addressof(c_array), ctypes.addressof(c_schema))
            try:
                rc = lib.quiver_write_array(self.handle, node, ctypes.addressof(c_array),
                                            ctypes.addressof(c_schema))
            finally:
                release_struct(ctypes.addressof(c_array), ArrowArray)
                release_struct(ctypes.addressof(c_schema), ArrowSchema)
        elif hasattr(array, "__arrow_c_array__"):
            schema_cap, array_cap = array.__arrow_c_array__()
            rc = lib.quiver_write_array(self.handle, node, capsule_pointer(array_cap, _NAME_ARRAY),
                                        capsule_pointer(schema_cap, _NAME_SCHEMA))
            del schema_cap, array_cap  # their destructors release the structs
        else:
            raise TypeError(f"write_array: not an Arrow array: {type(array).__name__}")
        self._check(rc, "quiver_write_array")

    # -- records
    def _records_result(self, rc: int, written, call: str) -> int:
        if rc != 0:
            raise RecordsError(rc, _decode(lib.quiver_writer_last_error(self._ptr)), call, int(written.value))
        return int(written.value)

    def write_records(self, layout: RecordLayout, records, stride: int | None = None,
                      n: int | None = None) -> int:
        """Write row-major records in one call, as committed rows: a numpy
        structured array (C-contiguous; ``stride`` and ``n`` from it), or a
        buffer (bytes, bytearray, memoryview, a ctypes array) of ``n`` records
        every ``stride`` bytes (``n`` defaults to as many as it holds).
        Returns the number written. On a bad record raises
        :class:`RecordsError` whose ``written`` records were committed."""
        dtype = getattr(records, "dtype", None)
        if dtype is not None and getattr(dtype, "fields", None) and hasattr(records, "__array_interface__"):
            if not records.flags["C_CONTIGUOUS"]:
                raise ValueError("write_records: the array must be C-contiguous")
            ptr, nbytes, keep = records.__array_interface__["data"][0], records.nbytes, records
            stride = dtype.itemsize if stride is None else stride
        else:
            ptr, nbytes, _, keep = _buffer(records)
            if stride is None:
                raise ValueError("write_records: pass stride= for a buffer")
        if n is None:
            n = nbytes // stride if stride > 0 else 0
        if n * stride > nbytes:
            raise ValueError(f"write_records: {n} records of {stride} bytes need {n * stride} bytes, "
                             f"the buffer has {nbytes}")
        written = c_int64()
        rc = lib.quiver_write_records(self.handle, layout.handle, ptr, stride, n, ctypes.byref(written))
        del keep
        return self._records_result(rc, written, "quiver_write_records")

    def write_record_ptrs(self, layout: RecordLayout, ptrs, sizes=None) -> int:
        """Write the records at the addresses ``ptrs`` (ints) in one call;
        ``sizes`` (bytes of each record, or None) bounds them, as UnsafeRows
        need. The memory must stay alive for the call. As
        :meth:`write_records` otherwise."""
        ptrs = list(ptrs)
        n = len(ptrs)
        p = (c_void_p * max(n, 1))(*ptrs)
        s = None
        if sizes is not None:
            sizes = list(sizes)
            if len(sizes) != n:
                raise ValueError(f"write_record_ptrs: {n} pointers but {len(sizes)} sizes")
            s = (c_int64 * max(n, 1))(*sizes)
        written = c_int64()
        rc = lib.quiver_write_record_ptrs(self.handle, layout.handle, p, s, n, ctypes.byref(written))
        return self._records_result(rc, written, "quiver_write_record_ptrs")

    # -- batches
    @property
    def rows(self) -> int:
        return int(lib.quiver_writer_rows(self.handle))

    def stats(self) -> dict:
        s = QuiverStats()
        self._check(lib.quiver_writer_stats(self.handle, ctypes.byref(s)), "quiver_writer_stats")
        return {name: int(getattr(s, name)) for name, _ in QuiverStats._fields_}

    def _export_schema_into(self, address: int) -> None:
        self._check(lib.quiver_writer_export_schema(self.handle, address), "quiver_writer_export_schema")

    def export_schema(self):
        """The writer's schema as a PyCapsule ``arrow_schema``."""
        ptr = _alloc(ArrowSchema)
        cap = _make_capsule(ptr, _NAME_SCHEMA)
        self._export_schema_into(ptr)
        return cap

    @property
    def arrow_schema(self):
        """The writer's schema as a pyarrow.Schema."""
        if self._pa_schema is None:
            pa = _pyarrow()
            c = ArrowSchema()
            self._export_schema_into(ctypes.addressof(c))
            try:
                self._pa_schema = pa.Schema._import_from_c(ctypes.addressof(c))
            finally:
                release_struct(ctypes.addressof(c), ArrowSchema)
        return self._pa_schema

    def _node_width(self, node: int):
        if self._nodes is None:
            self._nodes = _walk_nodes(list(self.arrow_schema))
        t = self._nodes[node].type
        try:
            bits = t.bit_width
        except ValueError:
            return None
        return bits // 8 if bits >= 8 else None

    def finish(self, raw: bool = False):
        """Finish the committed rows as a batch: a pyarrow.RecordBatch, or with
        ``raw=True`` a :class:`RawBatch` of PyCapsules (no pyarrow needed)."""
        ptr = _alloc(ArrowArray)
        array_cap = _make_capsule(ptr, _NAME_ARRAY)
        self._check(lib.quiver_writer_finish(self.handle, ptr), "quiver_writer_finish")
        if raw:
            return RawBatch(self.export_schema(), array_cap)
        pa = _pyarrow()
        return pa.RecordBatch._import_from_c(ptr, self.arrow_schema)

    def set_memory_limit(self, nbytes: int) -> None:
        """The bytes of buffer capacity the writer may hold (0: no limit): the
        buffers of the batch being written and those kept for reuse. A call
        that would pass it raises :class:`QuiverError` with ``ENOMEM`` and
        changes nothing. In a stream's fill, letting that error propagate
        ends the batch early (the committed rows go out)."""
        self._check(lib.quiver_writer_set_memory_limit(self.handle, int(nbytes)),
                    "quiver_writer_set_memory_limit")

    def set_error(self, message: str) -> None:
        msg = str(message).replace("\0", " ").encode("utf-8", "replace")
        self._check(lib.quiver_writer_set_error(self.handle, msg), "quiver_writer_set_error")


# ---------------------------------------------------------------------------
# Stream

# Live fill contexts, by the address of a small C token the C stream carries
# as `ctx`. The stream's release_ctx is not Python code: it is libc's
# sem_post on that token (a POSIX semaphore, 0 while the stream lives). A
# Python release callback would run whenever a consumer drops the stream,
# including while the consumer is propagating an exception (pyarrow dropping
# a temporary reader after a failed read_all); a ctypes callback then
# replaces that exception with "SystemError: error return without exception
# set". sem_post runs no Python code, is safe from any thread, and leaves a
# mark: released contexts are collected by _collect_released(), which runs
# whenever a new C stream is made (and may be called at any time).
_contexts: dict[int, "_FillContext"] = {}
_contexts_lock = threading.Lock()
_SEM_BYTES = 64  # sizeof(sem_t) is 32 on 64-bit glibc; leave room
_libc.sem_init.restype = c_int
_libc.sem_init.argtypes = [c_void_p, c_int, ctypes.c_uint]
_libc.sem_getvalue.restype = c_int
_libc.sem_getvalue.argtypes = [c_void_p, ctypes.POINTER(c_int)]
_libc.sem_destroy.restype = c_int
_libc.sem_destroy.argtypes = [c_void_p]
# void (*)(void *) that sem_post (int (*)(sem_t *)) is called through: the
# int result is ignored, which the C calling conventions of every platform
# this binding supports allow.
_RELEASE_CTX = QUIVER_RELEASE_CTX(ctypes.cast(_libc.sem_post, c_void_p).value)


def _new_token() -> int:
    token = _libc.calloc(1, _SEM_BYTES)
    if not token:
        raise MemoryError
    if _libc.sem_init(token, 0, 0) != 0:
        _libc.free(token)
        raise OSError(ctypes.get_errno(), "sem_init failed")
    return token


def _token_released(token: int) -> bool:
    value = c_int(0)
    return _libc.sem_getvalue(token, ctypes.byref(value)) == 0 and value.value > 0


def _free_token(token: int) -> None:
    _libc.sem_destroy(token)
    _libc.free(token)


def _collect_released() -> int:
    """Forget the fill contexts whose C streams were released; returns how
    many. Runs whenever a new C stream is made."""
    with _contexts_lock:
        done = [k for k in _contexts if _token_released(k)]
        for k in done:
            del _contexts[k]
            _free_token(k)
    return len(done)


class _FillContext:
    def __init__(self, stream: "Stream", fill):
        self.stream = stream
        self.fill = fill
        self.key = _new_token()


def _fill_trampoline(ctx, writer_ptr, max_rows):
    # Never let an exception out of here: ctypes would print it and return 0.
    w = None
    state = None
    try:
        state = _contexts.get(ctx or 0)
        w = Writer._borrow(writer_ptr)
        if state is None:
            raise RuntimeError("quiver stream context is gone")
        state.stream._before_fill(state)
        state.fill(w, int(max_rows))
        return 0
    except BaseException as e:  # noqa: BLE001 - reported through the stream
        if isinstance(e, QuiverError) and e.code == _errno.ENOMEM:
            # The memory limit: the stream ends the batch early (or, with no
            # row committed, fails with the writer's message).
            return _errno.ENOMEM
        try:
            if state is not None:
                state.stream.exception = e
        except BaseException:
            pass
        try:
            text = f"{type(e).__name__}: {e}"
            lib.quiver_writer_set_error(writer_ptr, text.replace("\0", " ").encode("utf-8", "replace"))
        except BaseException:
            pass
        return _errno.EIO
    finally:
        if w is not None:
            w._ptr = None  # the borrowed writer is valid only during the call




_FILL = QUIVER_FILL(_fill_trampoline)


class Stream:
    """An Arrow C stream whose batches a Python callable writes.

    ``fill(writer, max_rows)`` writes up to ``max_rows`` rows into
    ``writer`` (a borrowed :class:`Writer`, valid during the call); writing
    no row ends the stream. An exception in it ends the stream with an error
    carrying its message (also kept in ``stream.exception``), except a
    :class:`QuiverError` with ``ENOMEM`` (the writer's memory limit, see
    :meth:`Writer.set_memory_limit`), which ends the batch early: the
    committed rows go out and the next call writes the rest (with no row
    committed the stream fails with ``ENOMEM``).

    A consumer may ask for the C stream more than once (duckdb asks for the
    schema, then for the scan). With ``factory=`` (a callable returning a new
    fill callable) every ``__arrow_c_stream__`` call starts a fresh stream.
    With ``fill=`` the data can be read once: further streams may be asked
    for until one of them has called ``fill``.
    """

    def __init__(self, schema, fill=None, *, factory=None, batch_rows=None, recycle=None,
                 retain=None, validate_utf8=None):
        if (fill is None) == (factory is None):
            raise TypeError("Stream: pass exactly one of fill= and factory=")
        self.schema = _as_schema(schema)
        self._fill = fill
        self._factory = factory
        self._options = _options(batch_rows, recycle, retain, validate_utf8)
        self._reader_key = None  # the context whose stream is reading a one-shot fill
        self.exception = None
        self.streams_created = 0

    def _before_fill(self, state: _FillContext) -> None:
        if self._factory is not None:
            return
        if self._reader_key is None:
            self._reader_key = state.key
        elif self._reader_key != state.key:
            raise RuntimeError("this quiver Stream is already being read by another consumer; "
                               "build it with factory= to read it more than once")

    def _export_to_c(self, address: int) -> None:
        """Write a new C stream into the ArrowArrayStream at ``address``; the
        caller must call its release."""
        if self._factory is not None:
            fill = self._factory()
        else:
            if self._reader_key is not None:
                raise RuntimeError("this quiver Stream has been read already; "
                                   "build it with factory= to read it more than once")
            fill = self._fill
        _collect_released()
        state = _FillContext(self, fill)
        with _contexts_lock:
            _contexts[state.key] = state
        rc = lib.quiver_stream_new(self.schema.address, ctypes.byref(self._options), _FILL,
                                   c_void_p(state.key), _RELEASE_CTX, address)
        if rc != 0:
            with _contexts_lock:
                if _contexts.pop(state.key, None) is not None:
                    _free_token(state.key)
            _check_global(rc, "quiver_stream_new")
        self.streams_created += 1

    def __arrow_c_stream__(self, requested_schema=None):
        """A PyCapsule ``arrow_array_stream`` holding a fresh C stream.
        ``requested_schema`` is a hint and is not used: the stream has the
        schema it was built with."""
        ptr = _alloc(ArrowArrayStream)
        cap = _make_capsule(ptr, _NAME_STREAM)
        self._export_to_c(ptr)
        return cap

    def to_reader(self):
        """A pyarrow.RecordBatchReader over a fresh C stream."""
        pa = _pyarrow()
        return pa.RecordBatchReader._import_from_c_capsule(self.__arrow_c_stream__())

    def read_all(self):
        """Every batch as one pyarrow.Table."""
        return self.to_reader().read_all()


def stream_get_last_error(stream: ArrowArrayStream) -> str | None:
    return _decode(STREAM_GET_LAST_ERROR(stream.get_last_error)(ctypes.addressof(stream)))
