package org.quiver;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A view of a C Data Interface {@code struct ArrowSchema} in native memory. It does not own the
 * schema: call {@link #release()} when the schema was handed to you (e.g. by
 * {@link #parse(String)} or {@link Writer#exportSchema()}).
 */
public final class SchemaView {
    /** {@code sizeof(struct ArrowSchema)} on 64-bit platforms. */
    public static final long SIZE = 72;
    static final long FORMAT = 0, NAME = 8, METADATA = 16, FLAGS = 24, N_CHILDREN = 32,
            CHILDREN = 40, DICTIONARY = 48, RELEASE = 56, PRIVATE_DATA = 64;

    /** ARROW_FLAG_NULLABLE. */
    public static final long FLAG_NULLABLE = 2;

    private final MemorySegment s;

    private SchemaView(MemorySegment s) {
        this.s = s.reinterpret(SIZE);
    }

    /** A view of the struct at {@code segment} (its address is what counts). */
    public static SchemaView of(MemorySegment segment) { return new SchemaView(segment); }

    /** A view of the struct at a raw address. */
    public static SchemaView at(long address) { return new SchemaView(MemorySegment.ofAddress(address)); }

    /** A zeroed (released) struct allocated in {@code arena}, to be filled by a producer. */
    public static SchemaView allocate(Arena arena) { return new SchemaView(arena.allocate(SIZE, 8)); }

    /** {@code quiver_schema_parse}: the schema text form. Release the result. */
    public static SchemaView parse(String text) {
        SchemaView out = allocate(Arena.ofAuto());
        int rc;
        try (Arena a = Arena.ofConfined()) {
            rc = (int) Quiver.SCHEMA_PARSE.invokeExact(a.allocateFrom(text), out.s);
        } catch (Throwable t) {
            throw Quiver.rethrow(t);
        }
        if (rc != 0) throw new QuiverException("quiver_schema_parse", rc, Quiver.lastError());
        return out;
    }

    public MemorySegment segment() { return s; }
    public long address() { return s.address(); }

    public String format() { return Quiver.cString(s.get(ADDRESS, FORMAT)); }
    public String name() { return Quiver.cString(s.get(ADDRESS, NAME)); }
    public long flags() { return s.get(JAVA_LONG, FLAGS); }
    public boolean nullable() { return (flags() & FLAG_NULLABLE) != 0; }
    public long nChildren() { return s.get(JAVA_LONG, N_CHILDREN); }

    public SchemaView child(int i) {
        if (i < 0 || i >= nChildren()) throw new IndexOutOfBoundsException("child " + i + " of " + nChildren());
        MemorySegment children = s.get(ADDRESS, CHILDREN).reinterpret(nChildren() * ADDRESS.byteSize());
        return new SchemaView(children.getAtIndex(ADDRESS, i));
    }

    /** The dictionary schema, or null. */
    public SchemaView dictionary() {
        MemorySegment d = s.get(ADDRESS, DICTIONARY);
        return d.address() == 0 ? null : new SchemaView(d);
    }

    public boolean isReleased() { return s.get(ADDRESS, RELEASE).address() == 0; }

    /** Calls the struct's release callback (no-op when already released). */
    public void release() {
        MemorySegment fn = s.get(ADDRESS, RELEASE);
        if (fn.address() == 0) return;
        try {
            Quiver.CALL_RELEASE.invokeExact(fn, s);
        } catch (Throwable t) {
            throw Quiver.rethrow(t);
        }
    }

    @Override
    public String toString() {
        if (isReleased()) return "SchemaView(released)";
        StringBuilder b = new StringBuilder();
        b.append(name() == null ? "" : name()).append(':').append(format());
        if (!nullable()) b.append(" not null");
        if (nChildren() > 0) {
            b.append('<');
            for (int i = 0; i < nChildren(); i++) {
                if (i > 0) b.append(", ");
                b.append(child(i));
            }
            b.append('>');
        }
        return b.toString();
    }
}
