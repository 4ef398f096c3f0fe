package org.quiver;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A {@code QuiverWriter}. Create one with {@link #create}; close it ({@code quiver_writer_free})
 * when done; batches already exported stay valid. A writer given to a {@link Fill} callback is
 * borrowed from its stream: closing it does nothing.
 *
 * <p>Every method that calls a fallible C function throws {@link QuiverException} with the
 * returned errno value and the writer's last error message when the call fails. Nodes are the
 * pre-order field numbers of {@code docs/schema-text.md}.
 *
 * <p>A writer is not thread-safe; use it from one thread at a time.
 */
public final class Writer implements AutoCloseable {
    private MemorySegment w;
    private final boolean owned;
    private MemorySegment stats;
    private MemorySegment written;

    Writer(MemorySegment w, boolean owned) {
        this.w = w;
        this.owned = owned;
    }

    /** {@code quiver_writer_new}: the schema is borrowed (copied); {@code opts} may be null for defaults. */
    public static Writer create(SchemaView schema, Options opts) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            MemorySegment o = opts == null ? MemorySegment.NULL : opts.toNative(a);
            int rc = (int) Quiver.WRITER_NEW.invokeExact(schema.segment(), o, out);
            if (rc != 0) throw new QuiverException("quiver_writer_new", rc, Quiver.lastError());
            return new Writer(out.get(ADDRESS, 0), true);
        } catch (Throwable t) {
            throw Quiver.rethrow(t);
        }
    }

    /** A writer for a schema in the text form ({@code quiver_schema_parse}, then {@code quiver_writer_new}). */
    public static Writer create(String schemaText, Options opts) {
        SchemaView schema = SchemaView.parse(schemaText);
        try {
            return create(schema, opts);
        } finally {
            schema.release();
        }
    }

    /** The {@code QuiverWriter*}. */
    public MemorySegment pointer() { return live(); }

    private MemorySegment live() {
        if (w == null) throw new IllegalStateException("quiver: writer is closed");
        return w;
    }

    private void check(int rc, String function) {
        if (rc != 0) throw new QuiverException(function, rc, lastError());
    }

    /** {@code quiver_writer_last_error}: message of the last failure on this writer, or null. */
    public String lastError() {
        try {
            return Quiver.cString((MemorySegment) Quiver.WRITER_LAST_ERROR.invokeExact(live()));
        } catch (Throwable t) {
            throw Quiver.rethrow(t);
        }
    }

    /** {@code quiver_writer_set_error}: the message a failing fill callback reports. */
    public void setError(String message) {
        int rc;
        try (Arena a = Arena.ofConfined()) {
            rc = (int) Quiver.WRITER_SET_ERROR.invokeExact(live(), a.allocateFrom(message == null ? "" : message));
        } catch (Throwable t) {
            throw Quiver.rethrow(t);
        }
        check(rc, "quiver_writer_set_error");
    }

    /**
     * {@code quiver_writer_set_memory_limit}: the bytes of buffer capacity the writer may hold
     * (0: none), counting the batch being written and the buffers kept for reuse. A call that
     * would pass it throws a {@link QuiverException} with {@link Quiver#ENOMEM} and changes
     * nothing; a fill that returns {@link Quiver#ENOMEM} (or lets that exception out) ends its
     * stream's batch early.
     */
    public void setMemoryLimit(long bytes) {
        int rc;
        try { rc = (int) Quiver.WRITER_SET_MEMORY_LIMIT.invokeExact(live(), bytes); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_writer_set_memory_limit");
    }

    // ---- row path

    public void appendNull(int node) {
        int rc;
        try { rc = (int) Quiver.APPEND_NULL.invokeExact(live(), node); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_append_null");
    }

    public void appendBool(int node, boolean v) {
        int rc;
        try { rc = (int) Quiver.APPEND_BOOL.invokeExact(live(), node, v); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_append_bool");
    }

    public void appendI8(int node, byte v) {
        int rc;
        try { rc = (int) Quiver.APPEND_I8.invokeExact(live(), node, v); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_append_i8");
    }

    public void appendI16(int node, short v) {
        int rc;
        try { rc = (int) Quiver.APPEND_I16.invokeExact(live(), node, v); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_append_i16");
    }

    public void appendI32(int node, int v) {
        int rc;
        try { rc = (int) Quiver.APPEND_I32.invokeExact(live(), node, v); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_append_i32");
    }

    public void appendI64(int node, long v) {
        int rc;
        try { rc = (int) Quiver.APPEND_I64.invokeExact(live(), node, v); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_append_i64");
    }

    /** uint8_t: the low 8 bits of {@code v}. */
    public void appendU8(int node, int v) {
        int rc;
        try { rc = (int) Quiver.APPEND_U8.invokeExact(live(), node, (byte) v); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_append_u8");
    }

    /** uint16_t: the low 16 bits of {@code v} (also float16 raw bits). */
    public void appendU16(int node, int v) {
        int rc;
        try { rc = (int) Quiver.APPEND_U16.invokeExact(live(), node, (short) v); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_append_u16");
    }

    /** uint32_t: the low 32 bits of {@code v}. */
    public void appendU32(int node, long v) {
        int rc;
        try { rc = (int) Quiver.APPEND_U32.invokeExact(live(), node, (int) v); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_append_u32");
    }

    /** uint64_t: the bits of {@code v} (read it with {@link Long#toUnsignedString}). */
    public void appendU64(int node, long v) {
        int rc;
        try { rc = (int) Quiver.APPEND_U64.invokeExact(live(), node, v); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_append_u64");
    }

    public void appendF32(int node, float v) {
        int rc;
        try { rc = (int) Quiver.APPEND_F32.invokeExact(live(), node, v); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_append_f32");
    }

    public void appendF64(int node, double v) {
        int rc;
        try { rc = (int) Quiver.APPEND_F64.invokeExact(live(), node, v); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_append_f64");
    }

    /** {@code quiver_append_bytes} of a native or heap segment (utf8, binary, fixed-size binary). */
    public void appendBytes(int node, MemorySegment data) {
        int rc;
        try { rc = (int) Quiver.APPEND_BYTES.invokeExact(live(), node, data, data.byteSize()); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_append_bytes");
    }

    /** {@code quiver_append_bytes} of a byte array, passed without a copy. */
    public void appendBytes(int node, byte[] data) { appendBytes(node, MemorySegment.ofArray(data)); }

    /** {@code quiver_append_bytes} of the UTF-8 encoding of {@code s}. */
    public void appendString(int node, String s) { appendBytes(node, s.getBytes(StandardCharsets.UTF_8)); }

    /** {@code quiver_append_decimal}: little-endian two's complement unscaled value. */
    public void appendDecimal(int node, byte[] leBytes) {
        int rc;
        try {
            rc = (int) Quiver.APPEND_DECIMAL.invokeExact(live(), node, MemorySegment.ofArray(leBytes), (long) leBytes.length);
        } catch (Throwable t) {
            throw Quiver.rethrow(t);
        }
        check(rc, "quiver_append_decimal");
    }

    /** Start one list / struct / map (entry) value. */
    public void begin(int node) {
        int rc;
        try { rc = (int) Quiver.BEGIN.invokeExact(live(), node); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_begin");
    }

    public void end(int node) {
        int rc;
        try { rc = (int) Quiver.END.invokeExact(live(), node); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_end");
    }

    /** Commit the row: every top-level column has one value. */
    public void endRow() {
        int rc;
        try { rc = (int) Quiver.END_ROW.invokeExact(live()); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_end_row");
    }

    /** Kinds of {@link #appendSlots} ({@code QUIVER_SLOT_*}): how each 8-byte slot holds its value. */
    public static final byte SLOT_BOOL = 0, SLOT_I8 = 1, SLOT_I16 = 2, SLOT_I32 = 3, SLOT_I64 = 4, SLOT_U8 = 5,
            SLOT_U16 = 6, SLOT_U32 = 7, SLOT_U64 = 8, SLOT_F32 = 9, SLOT_F64 = 10;

    /**
     * {@code quiver_append_slots}: {@code count} values in one downcall, value {@code k} to node
     * {@code node + k} as the typed append of {@code kinds[k]} would append it (the value in the
     * low bytes of {@code slots[k]}: an int as {@code (long) v}, a float64 as
     * {@link Double#doubleToRawLongBits}, a float32 as {@link Float#floatToRawIntBits}, a boolean
     * as 0 or 1), or a null where bit {@code k} of {@code nulls} is set; then {@link #endRow}
     * when {@code endRow}. Each value gets its own append's checks; the first that fails
     * throws its {@link QuiverException}, the values before it appended, the row left open
     * (as the sequence of appends would). Both arrays are passed without a copy.
     */
    public void appendSlots(int node, byte[] kinds, long[] slots, int count, long nulls, boolean endRow) {
        if (count < 0 || count > kinds.length || count > slots.length) {
            throw new IndexOutOfBoundsException("appendSlots: count " + count + " of " + kinds.length + " kinds and "
                    + slots.length + " slots");
        }
        int rc;
        try {
            rc = (int) Quiver.APPEND_SLOTS.invokeExact(live(), node, count, MemorySegment.ofArray(kinds),
                    MemorySegment.ofArray(slots), nulls, endRow);
        } catch (Throwable t) {
            throw Quiver.rethrow(t);
        }
        check(rc, "quiver_append_slots");
    }

    /**
     * A whole row of fixed-width values in one downcall: {@code appendSlots(0, kinds, slots,
     * kinds.length, nulls, true)}, for a schema whose top-level columns are nodes
     * {@code 0 .. kinds.length - 1} (no nested column before them).
     */
    public void appendRow(byte[] kinds, long[] slots, long nulls) {
        appendSlots(0, kinds, slots, kinds.length, nulls, true);
    }

    /** Drop the uncommitted part of the row. */
    public void abortRow() {
        int rc;
        try { rc = (int) Quiver.ABORT_ROW.invokeExact(live()); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_abort_row");
    }

    // ---- column path

    /**
     * {@code quiver_write_column}: a whole top-level fixed-width column of {@code length} rows.
     * {@code values} and {@code validity} (LSB-first bitmap; {@link MemorySegment#NULL} = all
     * valid) must be native segments.
     */
    public void writeColumn(int node, MemorySegment values, MemorySegment validity, long length) {
        MemorySegment bitmap = validity == null ? MemorySegment.NULL : validity;
        int rc;
        try {
            rc = (int) Quiver.WRITE_COLUMN.invokeExact(live(), node, values, bitmap, length);
        } catch (Throwable t) {
            throw Quiver.rethrow(t);
        }
        check(rc, "quiver_write_column");
    }

    /** {@code quiver_write_array}: copy an Arrow array of the node's type (both borrowed). */
    public void writeArray(int node, ArrayView array, SchemaView schema) {
        int rc;
        try {
            rc = (int) Quiver.WRITE_ARRAY.invokeExact(live(), node, array.segment(), schema.segment());
        } catch (Throwable t) {
            throw Quiver.rethrow(t);
        }
        check(rc, "quiver_write_array");
    }

    // ---- records

    private long records(int rc, String function) {
        long n = written.get(JAVA_LONG, 0);
        if (rc != 0) throw new RecordsException(function, rc, lastError(), n);
        return n;
    }

    /**
     * {@code quiver_write_records}: {@code n} row-major records, one every {@code stride} bytes
     * of {@code records} (native, or a heap segment), as committed rows, in one downcall.
     * Returns {@code n}; on a bad record throws {@link RecordsException} whose
     * {@code written()} records were committed.
     */
    public long writeRecords(RecordLayout layout, MemorySegment records, long stride, long n) {
        if (n > 0 && records.byteSize() < n * stride) {
            throw new IndexOutOfBoundsException("writeRecords: " + n + " records of " + stride + " bytes need "
                    + n * stride + " bytes, the segment has " + records.byteSize());
        }
        if (written == null) written = Arena.ofAuto().allocate(JAVA_LONG);
        int rc;
        try {
            rc = (int) Quiver.WRITE_RECORDS.invokeExact(live(), layout.pointer(), records, stride, n, written);
        } catch (Throwable t) {
            throw Quiver.rethrow(t);
        }
        return records(rc, "quiver_write_records");
    }

    /**
     * {@code quiver_write_record_ptrs}: the {@code n} records whose addresses {@code ptrs} holds
     * (native pointers), each bounded by its size in {@code sizes} ({@code n} longs, or null),
     * as Spark UnsafeRows are given. As {@link #writeRecords} otherwise.
     */
    public long writeRecordPtrs(RecordLayout layout, MemorySegment ptrs, MemorySegment sizes, long n) {
        if (written == null) written = Arena.ofAuto().allocate(JAVA_LONG);
        MemorySegment bounds = sizes == null ? MemorySegment.NULL : sizes;
        int rc;
        try {
            rc = (int) Quiver.WRITE_RECORD_PTRS.invokeExact(live(), layout.pointer(), ptrs, bounds, n, written);
        } catch (Throwable t) {
            throw Quiver.rethrow(t);
        }
        return records(rc, "quiver_write_record_ptrs");
    }

    // ---- batches

    /** {@code quiver_writer_finish} into {@code out}; the caller must {@link ArrayView#release()} it. */
    public void finish(ArrayView out) {
        int rc;
        try { rc = (int) Quiver.WRITER_FINISH.invokeExact(live(), out.segment()); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_writer_finish");
    }

    /** {@code quiver_writer_finish} into a struct allocated in {@code arena}. */
    public ArrayView finish(Arena arena) {
        ArrayView out = ArrayView.allocate(arena);
        finish(out);
        return out;
    }

    /** {@code quiver_writer_finish} into a GC-managed struct (the batch itself still needs release). */
    public ArrayView finish() { return finish(Arena.ofAuto()); }

    /** {@code quiver_writer_export_schema}; the caller must release it. */
    public SchemaView exportSchema() {
        SchemaView out = SchemaView.allocate(Arena.ofAuto());
        int rc;
        try { rc = (int) Quiver.WRITER_EXPORT_SCHEMA.invokeExact(live(), out.segment()); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_writer_export_schema");
        return out;
    }

    /** {@code quiver_writer_rows}: committed rows in the current batch. */
    public long rows() {
        try { return (long) Quiver.WRITER_ROWS.invokeExact(live()); } catch (Throwable t) { throw Quiver.rethrow(t); }
    }

    /** {@code quiver_writer_stats}. */
    public Stats stats() {
        if (stats == null) stats = Arena.ofAuto().allocate(Stats.SIZE, 8);
        int rc;
        try { rc = (int) Quiver.WRITER_STATS.invokeExact(live(), stats); } catch (Throwable t) { throw Quiver.rethrow(t); }
        check(rc, "quiver_writer_stats");
        return new Stats(stats.get(JAVA_LONG, 0), stats.get(JAVA_LONG, 8), stats.get(JAVA_LONG, 16),
                stats.get(JAVA_LONG, 24), stats.get(JAVA_LONG, 32));
    }

    /** Ends a borrowed writer's use (after its fill callback returned). */
    void invalidate() { w = null; }

    /** {@code quiver_writer_free} for an owned writer; a borrowed one is left to its stream. */
    @Override
    public void close() {
        if (w == null) return;
        MemorySegment p = w;
        w = null;
        if (!owned) return;
        try { Quiver.WRITER_FREE.invokeExact(p); } catch (Throwable t) { throw Quiver.rethrow(t); }
    }
}
