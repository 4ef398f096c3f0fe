package org.quiver;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * A {@code QuiverLayout}: where each top-level column of a writer's schema sits in a row-major
 * record ({@code docs/records.md}), described once and used for every batch with
 * {@link Writer#writeRecords} and {@link Writer#writeRecordPtrs}. {@link #create} has no column
 * described yet (see {@link #set}); {@link #unsafeRow} is Spark's UnsafeRow. Close it
 * ({@code quiver_layout_free}) when done. Use a layout from one thread at a time.
 */
public final class RecordLayout implements AutoCloseable {
    /** Encodings ({@code QUIVER_RECORD_*}). */
    public static final int FIXED = 0, INT = 1, PTR_LEN = 2, REL_LEN = 3, BIG_ENDIAN = 4;
    /** Null marks ({@code QUIVER_NULL_*}). */
    public static final int NULL_NEVER = 0, NULL_BIT = 1, NULL_BYTE = 2;

    private MemorySegment l;

    private RecordLayout(MemorySegment l) {
        this.l = l;
    }

    private static RecordLayout make(Writer w, boolean unsafeRow) {
        String function = unsafeRow ? "quiver_layout_unsafe_row" : "quiver_layout_new";
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            int rc = unsafeRow ? (int) Quiver.LAYOUT_UNSAFE_ROW.invokeExact(w.pointer(), out)
                    : (int) Quiver.LAYOUT_NEW.invokeExact(w.pointer(), out);
            if (rc != 0) throw new QuiverException(function, rc, Quiver.lastError());
            return new RecordLayout(out.get(ADDRESS, 0));
        } catch (Throwable t) {
            throw Quiver.rethrow(t);
        }
    }

    /** {@code quiver_layout_new}: a layout for {@code w}'s schema, no column described yet. */
    public static RecordLayout create(Writer w) { return make(w, false); }

    /** {@code quiver_layout_unsafe_row}: Spark's UnsafeRow layout for {@code w}'s schema. */
    public static RecordLayout unsafeRow(Writer w) { return make(w, true); }

    /**
     * {@code quiver_layout_set}: describe top-level column {@code column}: its value
     * {@code encoding} ({@link #FIXED} at {@code at}; {@link #INT}: an {@code at2}-byte integer
     * at {@code at}; {@link #PTR_LEN}: pointer at {@code at}, 64-bit length at {@code at2};
     * {@link #REL_LEN} / {@link #BIG_ENDIAN}: u32 offset from the record start at {@code at},
     * u32 length at {@code at2}) and its null mark ({@link #NULL_NEVER}; {@link #NULL_BIT}: bit
     * {@code nullBit} of the bitmap at {@code nullAt}, set = null; {@link #NULL_BYTE}: the byte
     * at {@code nullAt}, nonzero = null).
     */
    public void set(int column, int encoding, long at, long at2, int nullKind, long nullAt, int nullBit) {
        int rc;
        try {
            rc = (int) Quiver.LAYOUT_SET.invokeExact(pointer(), column, encoding, at, at2, nullKind, nullAt, nullBit);
        } catch (Throwable t) {
            throw Quiver.rethrow(t);
        }
        if (rc != 0) throw new QuiverException("quiver_layout_set", rc, Quiver.lastError());
    }

    /** The {@code QuiverLayout*}. */
    public MemorySegment pointer() {
        if (l == null) throw new IllegalStateException("quiver: record layout is closed");
        return l;
    }

    /** {@code quiver_layout_free}. */
    @Override
    public void close() {
        MemorySegment p = l;
        l = null;
        if (p != null) {
            try {
                Quiver.LAYOUT_FREE.invokeExact(p);
            } catch (Throwable t) {
                throw Quiver.rethrow(t);
            }
        }
    }
}
