package org.quiver;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@code struct QuiverOptions}. Start from {@link #defaults()} (which asks the library's
 * {@code quiver_options_default}) and change what you need with the {@code with...} methods.
 *
 * <p>Native form: the struct is filled by {@code quiver_options_default} first, so fields the
 * library adds after these four keep their defaults.
 */
public record Options(long batchRows, boolean recycle, int retain, boolean validateUtf8) {
    // C layout of the known prefix: int64_t at 0, bool at 8, int32_t at 12, bool at 16.
    static final long BATCH_ROWS = 0, RECYCLE = 8, RETAIN = 12, VALIDATE_UTF8 = 16;
    /** Room for fields the library may add after the known ones. */
    static final long ALLOC = 256;

    /** The library's defaults ({@code quiver_options_default}). */
    public static Options defaults() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = nativeDefaults(a);
            return new Options(s.get(JAVA_LONG, BATCH_ROWS), s.get(JAVA_BOOLEAN, RECYCLE),
                    s.get(JAVA_INT, RETAIN), s.get(JAVA_BOOLEAN, VALIDATE_UTF8));
        }
    }

    public Options withBatchRows(long v) { return new Options(v, recycle, retain, validateUtf8); }
    public Options withRecycle(boolean v) { return new Options(batchRows, v, retain, validateUtf8); }
    public Options withRetain(int v) { return new Options(batchRows, recycle, v, validateUtf8); }
    public Options withValidateUtf8(boolean v) { return new Options(batchRows, recycle, retain, v); }

    private static MemorySegment nativeDefaults(Arena a) {
        MemorySegment s = a.allocate(ALLOC, 8);
        try {
            Quiver.OPTIONS_DEFAULT.invokeExact(s);
        } catch (Throwable t) {
            throw Quiver.rethrow(t);
        }
        return s;
    }

    /** This record as a native {@code struct QuiverOptions} allocated in {@code a}. */
    public MemorySegment toNative(Arena a) {
        MemorySegment s = nativeDefaults(a);
        s.set(JAVA_LONG, BATCH_ROWS, batchRows);
        s.set(JAVA_BOOLEAN, RECYCLE, recycle);
        s.set(JAVA_INT, RETAIN, retain);
        s.set(JAVA_BOOLEAN, VALIDATE_UTF8, validateUtf8);
        return s;
    }
}
