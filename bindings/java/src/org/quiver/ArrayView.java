package org.quiver;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

/**
 * A view of a C Data Interface {@code struct ArrowArray} in native memory, with readers for
 * its buffers. The view does not own the array: whoever received it calls {@link #release()}
 * once. Value readers take the logical index {@code i} (0 .. length-1) and add the array's
 * {@code offset}; they do not check types, the caller knows the schema.
 */
public final class ArrayView {
    /** {@code sizeof(struct ArrowArray)} on 64-bit platforms. */
    public static final long SIZE = 80;
    static final long LENGTH = 0, NULL_COUNT = 8, OFFSET = 16, N_BUFFERS = 24, N_CHILDREN = 32,
            BUFFERS = 40, CHILDREN = 48, DICTIONARY = 56, RELEASE = 64, PRIVATE_DATA = 72;

    private final MemorySegment s;

    private ArrayView(MemorySegment s) {
        this.s = s.reinterpret(SIZE);
    }

    /** A view of the struct at {@code segment} (its address is what counts). */
    public static ArrayView of(MemorySegment segment) { return new ArrayView(segment); }

    /** A view of the struct at a raw address. */
    public static ArrayView at(long address) { return new ArrayView(MemorySegment.ofAddress(address)); }

    /** A zeroed (released) struct allocated in {@code arena}, to be filled by a producer. */
    public static ArrayView allocate(Arena arena) { return new ArrayView(arena.allocate(SIZE, 8)); }

    public MemorySegment segment() { return s; }
    public long address() { return s.address(); }

    public long length() { return s.get(JAVA_LONG, LENGTH); }
    public long nullCount() { return s.get(JAVA_LONG, NULL_COUNT); }
    public long offset() { return s.get(JAVA_LONG, OFFSET); }
    public long nBuffers() { return s.get(JAVA_LONG, N_BUFFERS); }
    public long nChildren() { return s.get(JAVA_LONG, N_CHILDREN); }

    /** {@code buffers[i]} as a zero-length segment (its address; 0 for NULL). */
    public MemorySegment bufferAddress(int i) {
        if (i < 0 || i >= nBuffers()) throw new IndexOutOfBoundsException("buffer " + i + " of " + nBuffers());
        MemorySegment buffers = s.get(ADDRESS, BUFFERS).reinterpret(nBuffers() * ADDRESS.byteSize());
        return buffers.getAtIndex(ADDRESS, i);
    }

    /** {@code buffers[i]} as a readable segment of {@code bytes} bytes (NULL: empty segment). */
    public MemorySegment buffer(int i, long bytes) {
        MemorySegment b = bufferAddress(i);
        return b.address() == 0 ? MemorySegment.NULL : b.reinterpret(bytes);
    }

    /** {@code buffers[i]} without a bound: reads are not range-checked. */
    public MemorySegment rawBuffer(int i) { return bufferAddress(i).reinterpret(Long.MAX_VALUE); }

    public ArrayView child(int i) {
        if (i < 0 || i >= nChildren()) throw new IndexOutOfBoundsException("child " + i + " of " + nChildren());
        MemorySegment children = s.get(ADDRESS, CHILDREN).reinterpret(nChildren() * ADDRESS.byteSize());
        return new ArrayView(children.getAtIndex(ADDRESS, i));
    }

    /** The dictionary array, or null. */
    public ArrayView dictionary() {
        MemorySegment d = s.get(ADDRESS, DICTIONARY);
        return d.address() == 0 ? null : new ArrayView(d);
    }

    /** True once the release callback ran (it sets {@code release} to NULL), or for an end-of-stream array. */
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

    // ---- bitmaps

    /** Bit {@code i} (LSB first) of a bitmap. */
    public static boolean bit(MemorySegment bitmap, long i) {
        return (bitmap.get(JAVA_BYTE, i >>> 3) & (1 << (i & 7))) != 0;
    }

    /** Validity of element {@code i}: buffers[0], NULL meaning all valid. */
    public boolean isValid(long i) {
        MemorySegment v = bufferAddress(0);
        if (v.address() == 0) return true;
        return bit(v.reinterpret(Long.MAX_VALUE), offset() + i);
    }

    // ---- fixed width values in buffers[1]

    public boolean boolValue(long i) { return bit(rawBuffer(1), offset() + i); }
    public byte int8(long i) { return rawBuffer(1).get(JAVA_BYTE, offset() + i); }
    public short int16(long i) { return rawBuffer(1).get(JAVA_SHORT_UNALIGNED, 2 * (offset() + i)); }
    public int int32(long i) { return rawBuffer(1).get(JAVA_INT_UNALIGNED, 4 * (offset() + i)); }
    public long int64(long i) { return rawBuffer(1).get(JAVA_LONG_UNALIGNED, 8 * (offset() + i)); }
    public float float32(long i) { return rawBuffer(1).get(JAVA_FLOAT_UNALIGNED, 4 * (offset() + i)); }
    public double float64(long i) { return rawBuffer(1).get(JAVA_DOUBLE_UNALIGNED, 8 * (offset() + i)); }

    // ---- variable width (utf8, binary) and list: int32 offsets in buffers[1]

    /** {@code offsets[offset + i]}; i may be {@code length}. */
    public int offsetAt(long i) { return rawBuffer(1).get(JAVA_INT_UNALIGNED, 4 * (offset() + i)); }

    /** Value {@code i} of a utf8 / binary array (offsets in buffers[1], data in buffers[2]). */
    public byte[] bytes(long i) {
        int start = offsetAt(i), end = offsetAt(i + 1);
        byte[] out = new byte[end - start];
        MemorySegment.copy(rawBuffer(2), JAVA_BYTE, start, out, 0, out.length);
        return out;
    }

    public String utf8(long i) { return new String(bytes(i), StandardCharsets.UTF_8); }

    /** Start (inclusive) in the child of list element {@code i}. */
    public int listStart(long i) { return offsetAt(i); }

    /** Length of list element {@code i}. */
    public int listLength(long i) { return offsetAt(i + 1) - offsetAt(i); }

    @Override
    public String toString() {
        if (isReleased()) return "ArrayView(released)";
        return "ArrayView(length=" + length() + ", null_count=" + nullCount() + ", offset=" + offset()
                + ", n_buffers=" + nBuffers() + ", n_children=" + nChildren() + ")";
    }
}
