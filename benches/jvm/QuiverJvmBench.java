import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.Arrays;

import org.quiver.ArrayView;
import org.quiver.Options;
import org.quiver.Quiver;
import org.quiver.RecordLayout;
import org.quiver.Writer;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * The JVM benchmark of quiver (run by benches/jvm/run.sh): 8192-row batches, a warm-up, then
 * the median ns per row over timed batches, printed as
 *   RESULT jvm_<case> <writer> <ns_per_row>
 * Cases: rows3_none / rows3_half (int32, int64, float64; half: each value null with
 * probability 1/2, the records of benches/peers/c_bench.c) and utf8_none / utf8_half (one utf8
 * column of 0..11-byte strings, the data of benches/peers/bench_data.h). Writers:
 *   quiver_jvm_values   per-value appends through bindings/java (Writer.append*, endRow), then finish
 *   quiver_jvm_slots    rows3: one Writer.appendRow per row (quiver_append_slots: the row's values in
 *                       a long[], the nulls as a mask, the row committed), then finish
 *   quiver_jvm_records  rows already in a native MemorySegment: one Writer.writeRecords, then finish
 *   quiver_jvm_records_fill  the Java loop writing the rows into that segment, then as records
 *   java_arrays         the floor: a plain Java loop writing the same values into Java arrays
 *                       (values, zeros under nulls, a validity bitmap; offsets and bytes for utf8)
 * Each is followed by the Java heap bytes that writer allocates per row (10 more batches):
 *   RESULT jvm_<case>_alloc <writer> <bytes_per_row>
 * Then what one downcall costs (ns per call, 8192 calls a timing):
 *   RESULT jvm_downcall <function>_<plain|critical|critical_heap|critical_long_address> <ns_per_call>
 * (critical: Linker.Option.critical(false); critical_heap: critical(true), which heap segments
 * need; long_address: the pointer passed as a Java long instead of a MemorySegment).
 * Args: [--quick] (short warm-up, few batches: a smoke run) [case prefix ...] (only those cases). Needs -Dquiver.lib (the
 * downcall part looks the library up by that path itself).
 */
public final class QuiverJvmBench {
    static final int ROWS = 8192;
    static boolean quick;
    static volatile long sink;

    interface Batch { void run() throws Throwable; }

    /** Median ns per row of {@code b}, one batch of {@code perBatch} units per timing. */
    static double measure(Batch b, int perBatch) throws Throwable {
        long warm = quick ? 100_000_000L : 1_000_000_000L;
        int reps = quick ? 31 : 301;
        long end = System.nanoTime() + warm;
        int n = 0;
        while (n < 50 || System.nanoTime() < end) { b.run(); n++; }
        double[] t = new double[reps];
        for (int i = 0; i < reps; i++) {
            long t0 = System.nanoTime();
            b.run();
            t[i] = (System.nanoTime() - t0) / (double) perBatch;
        }
        Arrays.sort(t);
        // what the compiled code allocates: the Java heap bytes of 10 more batches
        com.sun.management.ThreadMXBean mx =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long a0 = mx.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 10; i++) b.run();
        lastAlloc = (mx.getCurrentThreadAllocatedBytes() - a0) / (10.0 * perBatch);
        return t[reps / 2];
    }

    /** Java heap bytes per unit the last {@link #measure} allocated. */
    static double lastAlloc;

    static void result(String name, String writer, double ns) {
        System.out.printf("RESULT %s %s %.3f%n", name, writer, ns);
        System.out.printf("RESULT %s_alloc %s %.3f%n", name, writer, lastAlloc);
        System.out.flush();
    }

    static final ArrayView OUT = ArrayView.allocate(Arena.global());

    static void finish(Writer w) {
        w.finish(OUT);
        if (OUT.length() != ROWS) throw new AssertionError("wrong length " + OUT.length());
        OUT.release();
    }

    // ---- rows3: int32, int64, float64 ------------------------------------------------------

    /** The records of c_bench.c: {int64 b; float64 c; int32 a; uint8 nulls}, 24 bytes. */
    static final long STRIDE3 = 24, B_AT = 0, C_AT = 8, A_AT = 16, NULLS_AT = 20;

    static final class Rows3 {
        final int[] a = new int[ROWS];
        final long[] b = new long[ROWS];
        final double[] c = new double[ROWS];
        final byte[] nulls = new byte[ROWS]; // bit k: column k is null
        final MemorySegment recs = Arena.global().allocate(STRIDE3 * ROWS, 8);
        // the floor's destination
        final int[] da = new int[ROWS];
        final long[] db = new long[ROWS];
        final double[] dc = new double[ROWS];
        final long[] va = new long[ROWS / 64], vb = new long[ROWS / 64], vc = new long[ROWS / 64];

        Rows3(boolean half) {
            long x = 0x9E3779B97F4A7C15L;
            for (int i = 0; i < ROWS; i++) {
                x ^= x << 13; x ^= x >>> 7; x ^= x << 17;
                a[i] = (int) x;
                b[i] = x * 31;
                c[i] = (double) x / 7.0;
                nulls[i] = half ? (byte) ((x >>> 40) & 7) : 0;
            }
            fill();
        }

        void fill() {
            MemorySegment r = recs;
            for (int i = 0; i < ROWS; i++) {
                long at = i * STRIDE3;
                r.set(JAVA_LONG_UNALIGNED, at + B_AT, b[i]);
                r.set(JAVA_DOUBLE_UNALIGNED, at + C_AT, c[i]);
                r.set(JAVA_INT_UNALIGNED, at + A_AT, a[i]);
                r.set(JAVA_BYTE, at + NULLS_AT, nulls[i]);
            }
        }

        void values(Writer w) {
            for (int i = 0; i < ROWS; i++) {
                int n = nulls[i];
                if ((n & 1) != 0) w.appendNull(0); else w.appendI32(0, a[i]);
                if ((n & 2) != 0) w.appendNull(1); else w.appendI64(1, b[i]);
                if ((n & 4) != 0) w.appendNull(2); else w.appendF64(2, c[i]);
                w.endRow();
            }
            finish(w);
        }

        static final byte[] KINDS = {Writer.SLOT_I32, Writer.SLOT_I64, Writer.SLOT_F64};
        final long[] slots = new long[3];

        void slots(Writer w) {
            long[] s = slots;
            for (int i = 0; i < ROWS; i++) {
                s[0] = a[i];
                s[1] = b[i];
                s[2] = Double.doubleToRawLongBits(c[i]);
                w.appendRow(KINDS, s, nulls[i]);
            }
            finish(w);
        }

        void javaArrays() {
            Arrays.fill(va, 0); Arrays.fill(vb, 0); Arrays.fill(vc, 0);
            for (int i = 0; i < ROWS; i++) {
                int n = nulls[i];
                long bit = 1L << i;
                int w = i >>> 6;
                if ((n & 1) != 0) da[i] = 0; else { da[i] = a[i]; va[w] |= bit; }
                if ((n & 2) != 0) db[i] = 0; else { db[i] = b[i]; vb[w] |= bit; }
                if ((n & 4) != 0) dc[i] = 0; else { dc[i] = c[i]; vc[w] |= bit; }
            }
            sink = da[ROWS - 1] + db[ROWS - 1] + (long) dc[ROWS - 1] + va[0] + vb[1] + vc[2];
        }
    }

    static void rows3(boolean half) throws Throwable {
        String name = half ? "jvm_rows3_half" : "jvm_rows3_none";
        Rows3 d = new Rows3(half);
        Options o = Options.defaults().withBatchRows(ROWS);
        try (Writer w = Writer.create("a: int32, b: int64, c: float64", o); RecordLayout l = RecordLayout.create(w)) {
            l.set(0, RecordLayout.FIXED, A_AT, 0, RecordLayout.NULL_BIT, NULLS_AT, 0);
            l.set(1, RecordLayout.FIXED, B_AT, 0, RecordLayout.NULL_BIT, NULLS_AT, 1);
            l.set(2, RecordLayout.FIXED, C_AT, 0, RecordLayout.NULL_BIT, NULLS_AT, 2);
            result(name, "quiver_jvm_values", measure(() -> d.values(w), ROWS));
            result(name, "quiver_jvm_slots", measure(() -> d.slots(w), ROWS));
            result(name, "quiver_jvm_records", measure(() -> {
                w.writeRecords(l, d.recs, STRIDE3, ROWS);
                finish(w);
            }, ROWS));
            result(name, "quiver_jvm_records_fill", measure(() -> {
                d.fill();
                w.writeRecords(l, d.recs, STRIDE3, ROWS);
                finish(w);
            }, ROWS));
            result(name, "java_arrays", measure(d::javaArrays, ROWS));
        }
    }

    // ---- utf8: one column of 0..11-byte strings -------------------------------------------

    /** Records {const uint8_t *ptr; int64 len; uint8 null}, 24 bytes. */
    static final long STRIDE_S = 24;

    static final class Utf8 {
        final int[] offsets = new int[ROWS + 1];
        final boolean[] valid = new boolean[ROWS];
        final byte[] bytes;
        final MemorySegment data;
        final MemorySegment recs = Arena.global().allocate(STRIDE_S * ROWS, 8);
        final byte[] dbytes = new byte[ROWS * 12];
        final int[] doffsets = new int[ROWS + 1];
        final long[] dvalid = new long[ROWS / 64];

        Utf8(boolean half) {
            long g = 0x9E3779B97F4A7C15L, gv = 0x0123456789ABCDEFL;
            long[] s = {g, gv};
            byte[] buf = new byte[ROWS * 12];
            int at = 0;
            for (int i = 0; i < ROWS; i++) valid[i] = !half || (next(s, 1) >>> 63) == 0;
            for (int i = 0; i < ROWS; i++) {
                long r = next(s, 0);
                int len = valid[i] ? (int) Long.remainderUnsigned(r, 12) : 0;
                for (int k = 0; k < len; k++) buf[at++] = (byte) ('a' + Long.remainderUnsigned(r >>> (8 + 4 * k), 26));
                offsets[i + 1] = at;
            }
            bytes = Arrays.copyOf(buf, at);
            data = Arena.global().allocate(Math.max(at, 1), 8);
            MemorySegment.copy(bytes, 0, data, JAVA_BYTE, 0, at);
            for (int i = 0; i < ROWS; i++) {
                long r = i * STRIDE_S;
                recs.set(JAVA_LONG, r, data.address() + offsets[i]);
                recs.set(JAVA_LONG, r + 8, offsets[i + 1] - offsets[i]);
                recs.set(JAVA_BYTE, r + 16, valid[i] ? (byte) 0 : (byte) 1);
            }
        }

        /** bench_next of bench_data.h (xorshift64*) on state {@code s[k]}. */
        static long next(long[] s, int k) {
            long x = s[k];
            x ^= x >>> 12; x ^= x << 25; x ^= x >>> 27;
            s[k] = x;
            return x * 0x2545F4914F6CDD1DL;
        }

        void values(Writer w) {
            MemorySegment d = data;
            for (int i = 0; i < ROWS; i++) {
                if (valid[i]) {
                    int s = offsets[i];
                    w.appendBytes(0, d.asSlice(s, offsets[i + 1] - s));
                } else {
                    w.appendNull(0);
                }
                w.endRow();
            }
            finish(w);
        }

        void javaArrays() {
            Arrays.fill(dvalid, 0);
            int at = 0;
            for (int i = 0; i < ROWS; i++) {
                if (valid[i]) {
                    int s = offsets[i], n = offsets[i + 1] - s;
                    System.arraycopy(bytes, s, dbytes, at, n);
                    at += n;
                    dvalid[i >>> 6] |= 1L << i;
                }
                doffsets[i + 1] = at;
            }
            sink = at + dvalid[1] + dbytes[at > 0 ? at - 1 : 0];
        }
    }

    static void utf8(boolean half) throws Throwable {
        String name = half ? "jvm_utf8_half" : "jvm_utf8_none";
        Utf8 d = new Utf8(half);
        Options o = Options.defaults().withBatchRows(ROWS);
        try (Writer w = Writer.create("s: utf8", o); RecordLayout l = RecordLayout.create(w)) {
            l.set(0, RecordLayout.PTR_LEN, 0, 8, RecordLayout.NULL_BYTE, 16, 0);
            result(name, "quiver_jvm_values", measure(() -> d.values(w), ROWS));
            result(name, "quiver_jvm_records", measure(() -> {
                w.writeRecords(l, d.recs, STRIDE_S, ROWS);
                finish(w);
            }, ROWS));
            result(name, "java_arrays", measure(d::javaArrays, ROWS));
        }
    }

    // ---- what one downcall costs -------------------------------------------------------------

    static void downcalls() throws Throwable {
        Linker linker = Linker.nativeLinker();
        Linker.Option crit = Linker.Option.critical(false);
        MemorySegment abs = linker.defaultLookup().find("abs").orElseThrow();
        FunctionDescriptor absFd = FunctionDescriptor.of(JAVA_INT, JAVA_INT);
        MethodHandle absPlain = linker.downcallHandle(abs, absFd);
        MethodHandle absCrit = linker.downcallHandle(abs, absFd, crit);
        SymbolLookup lib = SymbolLookup.libraryLookup(Path.of(System.getProperty("quiver.lib")), Arena.global());
        MemorySegment rows = lib.find("quiver_writer_rows").orElseThrow();
        FunctionDescriptor rowsFd = FunctionDescriptor.of(JAVA_LONG, ADDRESS);
        MethodHandle rowsPlain = linker.downcallHandle(rows, rowsFd);
        MethodHandle rowsCrit = linker.downcallHandle(rows, rowsFd, crit);
        MethodHandle rowsHeap = linker.downcallHandle(rows, rowsFd, Linker.Option.critical(true));
        MethodHandle rowsLong = linker.downcallHandle(rows, FunctionDescriptor.of(JAVA_LONG, JAVA_LONG), crit);
        Options o = Options.defaults().withBatchRows(ROWS);
        try (Writer w = Writer.create("a: int32", o)) {
            MemorySegment p = w.pointer();
            result("jvm_downcall", "abs_plain", measure(() -> {
                int s = 0;
                for (int i = 0; i < ROWS; i++) s += (int) absPlain.invokeExact(i);
                sink = s;
            }, ROWS));
            result("jvm_downcall", "abs_critical", measure(() -> {
                int s = 0;
                for (int i = 0; i < ROWS; i++) s += (int) absCrit.invokeExact(i);
                sink = s;
            }, ROWS));
            result("jvm_downcall", "quiver_writer_rows_plain", measure(() -> {
                long s = 0;
                for (int i = 0; i < ROWS; i++) s += (long) rowsPlain.invokeExact(p);
                sink = s;
            }, ROWS));
            result("jvm_downcall", "quiver_writer_rows_critical", measure(() -> {
                long s = 0;
                for (int i = 0; i < ROWS; i++) s += (long) rowsCrit.invokeExact(p);
                sink = s;
            }, ROWS));
            result("jvm_downcall", "quiver_writer_rows_critical_heap", measure(() -> {
                long s = 0;
                for (int i = 0; i < ROWS; i++) s += (long) rowsHeap.invokeExact(p);
                sink = s;
            }, ROWS));
            long addr = p.address();
            result("jvm_downcall", "quiver_writer_rows_critical_long_address", measure(() -> {
                long s = 0;
                for (int i = 0; i < ROWS; i++) s += (long) rowsLong.invokeExact(addr);
                sink = s;
            }, ROWS));
            result("jvm_downcall", "Writer.rows", measure(() -> {
                long s = 0;
                for (int i = 0; i < ROWS; i++) s += w.rows();
                sink = s;
            }, ROWS));
            result("jvm_downcall", "Writer.appendI32+endRow", measure(() -> {
                for (int i = 0; i < ROWS; i++) { w.appendI32(0, i); w.endRow(); }
                finish(w);
            }, ROWS));
        }
    }

    static final java.util.List<String> filters = new java.util.ArrayList<>();

    /** No filter given, or one that {@code name} starts with. */
    static boolean want(String name) {
        return filters.isEmpty() || filters.stream().anyMatch(name::startsWith);
    }

    public static void main(String[] args) throws Throwable {
        for (String a : args) {
            if (a.equals("--quick")) quick = true; else filters.add(a);
        }
        System.out.println("# quiver " + Quiver.version() + ", library " + Quiver.libraryOrigin() + ", java "
                + System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"));
        if (want("jvm_rows3_none")) rows3(false);
        if (want("jvm_rows3_half")) rows3(true);
        if (want("jvm_utf8_none")) utf8(false);
        if (want("jvm_utf8_half")) utf8(true);
        if (want("jvm_downcall")) downcalls();
        if (Quiver.liveArrays() != 0) throw new AssertionError("live arrays: " + Quiver.liveArrays());
    }
}
