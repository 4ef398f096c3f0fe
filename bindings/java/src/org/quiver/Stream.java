package org.quiver;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A C Stream Interface {@code struct ArrowArrayStream}, used through its own function pointers
 * ({@code get_schema}, {@code get_next}, {@code get_last_error}, {@code release}).
 *
 * <p>{@link #create} makes a quiver stream ({@code quiver_stream_new}) whose fill callback is a
 * Java {@link Fill}; {@link #wrap} views any producer's stream. The struct lives in memory
 * this object keeps reachable; {@link #address()} hands it to another consumer (e.g. Arrow
 * Java's {@code ArrowArrayStream.wrap}), which moves it out and marks it released, after which
 * {@link #close()} does nothing.
 */
public final class Stream implements AutoCloseable {
    /** {@code sizeof(struct ArrowArrayStream)} on 64-bit platforms. */
    public static final long SIZE = 40;
    static final long GET_SCHEMA = 0, GET_NEXT = 8, GET_LAST_ERROR = 16, RELEASE = 24, PRIVATE_DATA = 32;

    private final MemorySegment s;

    private Stream(MemorySegment s) {
        this.s = s.reinterpret(SIZE);
    }

    /** A view of the stream struct at {@code segment}; the caller keeps that memory alive. */
    public static Stream wrap(MemorySegment segment) { return new Stream(segment); }

    // ---- quiver streams with a Java fill callback

    /** Fill callbacks of live quiver streams, by the ctx value given to C. */
    private static final ConcurrentHashMap<Long, Fill> CALLBACKS = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT_CTX = new AtomicLong(1);
    /** One upcall stub each, for all streams: the ctx says which Java callback runs. */
    private static final MemorySegment FILL_STUB;
    private static final MemorySegment RELEASE_CTX_STUB;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            FILL_STUB = Quiver.LINKER.upcallStub(
                    l.findStatic(Stream.class, "fillUpcall",
                            MethodType.methodType(int.class, MemorySegment.class, MemorySegment.class, long.class)),
                    FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG), Arena.global());
            RELEASE_CTX_STUB = Quiver.LINKER.upcallStub(
                    l.findStatic(Stream.class, "releaseCtxUpcall", MethodType.methodType(void.class, MemorySegment.class)),
                    FunctionDescriptor.ofVoid(ADDRESS), Arena.global());
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * The C fill callback. Nothing may escape it: an exception thrown into native code would
     * end the JVM, so every Throwable becomes a non-zero return plus quiver_writer_set_error
     * (but a QuiverException with ENOMEM returns ENOMEM: the memory limit ends the batch early).
     */
    private static int fillUpcall(MemorySegment ctx, MemorySegment w, long maxRows) {
        Writer writer = new Writer(w, false);
        try {
            Fill fill = CALLBACKS.get(ctx.address());
            if (fill == null) {
                reportQuietly(w, "quiver java binding: no fill callback for this stream");
                return -1;
            }
            int rc = fill.fill(writer, maxRows);
            return rc;
        } catch (Throwable t) {
            // The memory limit: ENOMEM ends the batch early (the writer keeps the message).
            if (t instanceof QuiverException q && q.code() == Quiver.ENOMEM) return Quiver.ENOMEM;
            reportQuietly(w, "fill callback threw " + describe(t));
            return -1;
        } finally {
            writer.invalidate();
        }
    }

    private static void releaseCtxUpcall(MemorySegment ctx) {
        try {
            CALLBACKS.remove(ctx.address());
        } catch (Throwable ignored) {
            // Nothing to report to: release_ctx returns void.
        }
    }

    private static String describe(Throwable t) {
        String m = t.getMessage();
        return t.getClass().getName() + (m == null ? "" : ": " + m);
    }

    private static void reportQuietly(MemorySegment w, String message) {
        try (Arena a = Arena.ofConfined()) {
            int ignored = (int) Quiver.WRITER_SET_ERROR.invokeExact(w, a.allocateFrom(message));
        } catch (Throwable ignored) {
            // The stream still fails with EIO, only without this message.
        }
    }

    /** Fill callbacks whose stream has not called release_ctx yet. */
    public static int liveCallbacks() { return CALLBACKS.size(); }

    /**
     * {@code quiver_stream_new}: a stream that calls {@code fill} from {@code get_next}. The
     * schema is borrowed; {@code opts} may be null for defaults.
     */
    public static Stream create(SchemaView schema, Options opts, Fill fill) {
        return create(schema, opts, fill, Arena.ofAuto());
    }

    /** As {@link #create(SchemaView, Options, Fill)}, with the struct allocated in {@code arena}. */
    public static Stream create(SchemaView schema, Options opts, Fill fill, Arena arena) {
        if (fill == null) throw new NullPointerException("fill");
        long ctx = NEXT_CTX.getAndIncrement();
        CALLBACKS.put(ctx, fill);
        MemorySegment out = arena.allocate(SIZE, 8);
        int rc;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment o = opts == null ? MemorySegment.NULL : opts.toNative(a);
            rc = (int) Quiver.STREAM_NEW.invokeExact(schema.segment(), o, FILL_STUB,
                    MemorySegment.ofAddress(ctx), RELEASE_CTX_STUB, out);
        } catch (Throwable t) {
            CALLBACKS.remove(ctx);
            throw Quiver.rethrow(t);
        }
        if (rc != 0) {
            CALLBACKS.remove(ctx);
            throw new QuiverException("quiver_stream_new", rc, Quiver.lastError());
        }
        return new Stream(out);
    }

    /** A stream for a schema in the text form. */
    public static Stream create(String schemaText, Options opts, Fill fill) {
        SchemaView schema = SchemaView.parse(schemaText);
        try {
            return create(schema, opts, fill);
        } finally {
            schema.release();
        }
    }

    // ---- the stream's own callbacks

    public MemorySegment segment() { return s; }

    /** The struct's address, for another consumer to take over. */
    public long address() { return s.address(); }

    public boolean isReleased() { return s.get(ADDRESS, RELEASE).address() == 0; }

    private MemorySegment callback(long field) {
        MemorySegment fn = s.get(ADDRESS, field);
        if (fn.address() == 0) throw new IllegalStateException("quiver: stream is released");
        return fn;
    }

    /** {@code get_next(stream, out)}: the status; on 0, {@code out} is a batch or (end) released. */
    public int getNext(ArrayView out) {
        try {
            return (int) Quiver.CALL_STREAM_GET.invokeExact(callback(GET_NEXT), s, out.segment());
        } catch (Throwable t) {
            throw Quiver.rethrow(t);
        }
    }

    /** The next batch (release it), or null at the end of the stream; throws on an error. */
    public ArrayView next() {
        ArrayView out = ArrayView.allocate(Arena.ofAuto());
        int rc = getNext(out);
        if (rc != 0) throw new QuiverException("get_next", rc, getLastError());
        return out.isReleased() ? null : out;
    }

    /** {@code get_schema(stream, out)}: the status. */
    public int getSchema(SchemaView out) {
        try {
            return (int) Quiver.CALL_STREAM_GET.invokeExact(callback(GET_SCHEMA), s, out.segment());
        } catch (Throwable t) {
            throw Quiver.rethrow(t);
        }
    }

    /** The stream's schema (release it); throws on an error. */
    public SchemaView schema() {
        SchemaView out = SchemaView.allocate(Arena.ofAuto());
        int rc = getSchema(out);
        if (rc != 0) throw new QuiverException("get_schema", rc, getLastError());
        return out;
    }

    /** {@code get_last_error(stream)}: message of the last error, or null. */
    public String getLastError() {
        try {
            return Quiver.cString((MemorySegment) Quiver.CALL_STREAM_LAST_ERROR.invokeExact(callback(GET_LAST_ERROR), s));
        } catch (Throwable t) {
            throw Quiver.rethrow(t);
        }
    }

    /** {@code release(stream)}; no-op when already released or moved to another consumer. */
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
    public void close() { release(); }
}
