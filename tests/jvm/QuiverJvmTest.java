import org.quiver.ArrayView;
import org.quiver.Fill;
import org.quiver.Options;
import org.quiver.Quiver;
import org.quiver.QuiverException;
import org.quiver.RecordLayout;
import org.quiver.RecordsException;
import org.quiver.SchemaView;
import org.quiver.Stats;
import org.quiver.Stream;
import org.quiver.Writer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;

/**
 * JVM consumer of quiver through the Java FFM binding (bindings/java): writers and streams
 * made through the C API, batches pulled through the ArrowArrayStream function pointers and
 * read straight from the ArrowArray buffers. Prints PASS/FAIL per check and a SUMMARY line.
 */
public final class QuiverJvmTest {
    // ---------------------------------------------------------------- reporting

    static int passed, failed, skipped;

    static void check(String name, boolean ok, String detail) {
        if (ok) {
            passed++;
            System.out.println("PASS: " + name);
        } else {
            failed++;
            System.out.println("FAIL: " + name + (detail == null || detail.isEmpty() ? "" : ": " + detail));
        }
    }

    static void check(String name, List<String> errors) {
        check(name, errors.isEmpty(), summarize(errors));
    }

    static void skip(String name, String reason) {
        skipped++;
        System.out.println("SKIPPED: " + name + ": " + reason);
    }

    static String summarize(List<String> errors) {
        if (errors.isEmpty()) return "";
        int shown = Math.min(errors.size(), 5);
        String s = String.join("; ", errors.subList(0, shown));
        return errors.size() > shown ? s + "; ... (" + errors.size() + " problems)" : s;
    }

    interface Section { void run() throws Throwable; }

    static void section(String name, Section body) {
        try {
            body.run();
        } catch (Throwable t) {
            check(name + ": section ran to the end", false, t.toString());
            t.printStackTrace(System.out);
        }
    }

    /** Collects mismatches, at most a few hundred. */
    static final class Errs extends ArrayList<String> {
        private static final long serialVersionUID = 1L;

        void eq(String what, long got, long want) {
            if (got != want) add(what + ": got " + got + ", want " + want);
        }

        void is(String what, boolean ok) {
            if (!ok) add(what);
        }

        @Override
        public boolean add(String s) {
            return size() < 300 && super.add(s);
        }
    }

    // ---------------------------------------------------------------- schema and generator

    static final String SCHEMA = "id: int64 not null, a: int32, x: float64, s: utf8, b: bool, "
            + "l: list<int32>, st: struct<p: int32, q: utf8>";
    static final int ID = 0, A = 1, X = 2, S = 3, B = 4, L = 5, L_ITEM = 6, ST = 7, ST_P = 8, ST_Q = 9;
    static final String[] NAMES = {"id", "a", "x", "s", "b", "l", "st"};
    static final String[] FORMATS = {"l", "i", "g", "u", "b", "+l", "+s"};
    /** ArrowArray structs per batch: the batch, 7 columns, the list item, 2 struct children. */
    static final int STRUCTS_PER_BATCH = 11;

    // Every null pattern and value length of a variable-size column repeats with a period
    // dividing BATCH, so every full batch needs exactly the same buffer sizes.
    static final int BATCH = 120;
    static final long TOTAL = BATCH * 9L + 37;
    static final String[] SUFFIX = {"", "\u00e9", "\u00f1\u20ac"};

    static long id(long r) { return r * 3 + 1; }
    static boolean aNull(long r) { return r % 5 == 0; }
    static int a(long r) { return (int) (r * 7 - 100); }
    static boolean xNull(long r) { return r % 7 == 3; }
    static double x(long r) { return r * 0.5 - 3.25; }
    static boolean sNull(long r) { return r % 4 == 1; }
    static String s(long r) { return String.format("%06x", r) + SUFFIX[(int) (r % 3)]; }
    static boolean bNull(long r) { return r % 6 == 2; }
    static boolean b(long r) { return r % 3 == 0; }
    static boolean lNull(long r) { return r % 8 == 4; }
    static int lLen(long r) { return (int) (r % 4); }
    static boolean itemNull(long r, int k) { return (r + k) % 5 == 2; }
    static int item(long r, int k) { return (int) (r * 10 + k); }
    static boolean stNull(long r) { return r % 8 == 5; }
    static boolean pNull(long r) { return r % 3 == 2; }
    static int p(long r) { return (int) (r * 11 - 7); }
    static boolean qNull(long r) { return r % 10 == 7; }
    static String q(long r) { return "q" + (r % 10); }

    static void writeRow(Writer w, long r) {
        w.appendI64(ID, id(r));
        if (aNull(r)) w.appendNull(A); else w.appendI32(A, a(r));
        if (xNull(r)) w.appendNull(X); else w.appendF64(X, x(r));
        if (sNull(r)) w.appendNull(S); else w.appendString(S, s(r));
        if (bNull(r)) w.appendNull(B); else w.appendBool(B, b(r));
        if (lNull(r)) {
            w.appendNull(L);
        } else {
            w.begin(L);
            for (int k = 0; k < lLen(r); k++) {
                if (itemNull(r, k)) w.appendNull(L_ITEM); else w.appendI32(L_ITEM, item(r, k));
            }
            w.end(L);
        }
        if (stNull(r)) {
            w.appendNull(ST);
        } else {
            w.begin(ST);
            if (pNull(r)) w.appendNull(ST_P); else w.appendI32(ST_P, p(r));
            if (qNull(r)) w.appendNull(ST_Q); else w.appendString(ST_Q, q(r));
            w.end(ST);
        }
        w.endRow();
    }

    // ---------------------------------------------------------------- batch verification

    /** Checks a batch holding rows first .. first+n-1 of the generator, value by value. */
    static List<String> verify(ArrayView batch, long first, long n) {
        Errs e = new Errs();
        if (batch.isReleased()) {
            e.add("batch is released");
            return e;
        }
        e.eq("batch.length", batch.length(), n);
        e.eq("batch.n_children", batch.nChildren(), 7);
        e.eq("batch.null_count", batch.nullCount(), 0);
        e.eq("batch.n_buffers", batch.nBuffers(), 1);
        if (!e.isEmpty()) return e;
        ArrayView[] c = new ArrayView[7];
        for (int j = 0; j < 7; j++) {
            c[j] = batch.child(j);
            e.eq(NAMES[j] + ".length", c[j].length(), n);
            e.eq(NAMES[j] + ".n_buffers", c[j].nBuffers(), switch (j) { case 3 -> 3; case 6 -> 1; default -> 2; });
            e.eq(NAMES[j] + ".n_children", c[j].nChildren(), switch (j) { case 5 -> 1; case 6 -> 2; default -> 0; });
        }
        if (!e.isEmpty()) return e;
        ArrayView item = c[5].child(0), sp = c[6].child(0), sq = c[6].child(1);
        e.eq("st.p.length", sp.length(), n);
        e.eq("st.q.length", sq.length(), n);
        e.eq("st.q.n_buffers", sq.nBuffers(), 3);
        if (!e.isEmpty()) return e;
        long[] nulls = new long[7];
        long pNulls = 0, qNulls = 0, itemNulls = 0;
        for (long i = 0; i < n; i++) {
            long r = first + i;
            String at = "row " + r + " ";
            // id: int64 not null
            e.is(at + "id is null", c[0].isValid(i));
            e.eq(at + "id", c[0].int64(i), id(r));
            // a: int32
            if (aNull(r)) nulls[1]++;
            e.is(at + "a validity", c[1].isValid(i) == !aNull(r));
            e.eq(at + "a value" + (aNull(r) ? " under null" : ""), c[1].int32(i), aNull(r) ? 0 : a(r));
            // x: float64, zero bits under null
            if (xNull(r)) nulls[2]++;
            e.is(at + "x validity", c[2].isValid(i) == !xNull(r));
            if (xNull(r)) e.eq(at + "x bits under null", Double.doubleToRawLongBits(c[2].float64(i)), 0);
            else e.is(at + "x value: got " + c[2].float64(i) + ", want " + x(r), c[2].float64(i) == x(r));
            // s: utf8, empty under null
            if (sNull(r)) nulls[3]++;
            e.is(at + "s validity", c[3].isValid(i) == !sNull(r));
            if (sNull(r)) e.eq(at + "s length under null", c[3].offsetAt(i + 1) - c[3].offsetAt(i), 0);
            else {
                String got = c[3].utf8(i);
                e.is(at + "s: got '" + got + "', want '" + s(r) + "'", got.equals(s(r)));
            }
            // b: bool, clear bit under null
            if (bNull(r)) nulls[4]++;
            e.is(at + "b validity", c[4].isValid(i) == !bNull(r));
            e.is(at + "b value" + (bNull(r) ? " under null (must be clear)" : ""),
                    c[4].boolValue(i) == (!bNull(r) && b(r)));
            // l: list<int32>, empty under null
            if (lNull(r)) nulls[5]++;
            e.is(at + "l validity", c[5].isValid(i) == !lNull(r));
            e.eq(at + "l length", c[5].listLength(i), lNull(r) ? 0 : lLen(r));
            if (!lNull(r) && c[5].listLength(i) == lLen(r)) {
                int start = c[5].listStart(i);
                for (int k = 0; k < lLen(r); k++) {
                    long ii = start + k - item.offset();
                    boolean nul = itemNull(r, k);
                    if (nul) itemNulls++;
                    e.is(at + "l[" + k + "] validity", item.isValid(ii) == !nul);
                    e.eq(at + "l[" + k + "]" + (nul ? " under null" : ""), item.int32(ii), nul ? 0 : item(r, k));
                }
            }
            // st: struct<p: int32, q: utf8>; a null struct has null, zeroed children
            if (stNull(r)) nulls[6]++;
            e.is(at + "st validity", c[6].isValid(i) == !stNull(r));
            boolean pn = stNull(r) || pNull(r), qn = stNull(r) || qNull(r);
            if (pn) pNulls++;
            if (qn) qNulls++;
            e.is(at + "st.p validity", sp.isValid(i) == !pn);
            e.eq(at + "st.p" + (pn ? " under null" : ""), sp.int32(i), pn ? 0 : p(r));
            e.is(at + "st.q validity", sq.isValid(i) == !qn);
            if (qn) e.eq(at + "st.q length under null", sq.offsetAt(i + 1) - sq.offsetAt(i), 0);
            else {
                String got = sq.utf8(i);
                e.is(at + "st.q: got '" + got + "', want '" + q(r) + "'", got.equals(q(r)));
            }
        }
        for (int j = 0; j < 7; j++) e.eq(NAMES[j] + ".null_count", c[j].nullCount(), nulls[j]);
        e.eq("st.p.null_count", sp.nullCount(), pNulls);
        e.eq("st.q.null_count", sq.nullCount(), qNulls);
        e.eq("l.item.null_count", item.nullCount(), itemNulls);
        e.is("l.item.length " + item.length() + " < last offset " + c[5].offsetAt(n),
                item.length() >= c[5].offsetAt(n) - item.offset());
        // Offsets never decrease.
        for (ArrayView v : new ArrayView[] {c[3], c[5], sq}) {
            for (long i = 0; i < n; i++) {
                if (v.offsetAt(i + 1) < v.offsetAt(i)) {
                    e.add("offsets decrease at " + i);
                    break;
                }
            }
        }
        // The unused bits of the last byte of every bitmap are zero (deterministic bytes).
        String[] bitmapNames = {"a", "x", "s", "b", "l", "st"};
        ArrayView[] withValidity = {c[1], c[2], c[3], c[4], c[5], c[6]};
        for (int j = 0; j < withValidity.length; j++) padBitsZero(e, bitmapNames[j] + " validity", withValidity[j], 0);
        padBitsZero(e, "b values", c[4], 1);
        padBitsZero(e, "l.item validity", item, 0);
        padBitsZero(e, "st.p validity", sp, 0);
        padBitsZero(e, "st.q validity", sq, 0);
        return e;
    }

    static void padBitsZero(Errs e, String what, ArrayView v, int buffer) {
        MemorySegment bm = v.bufferAddress(buffer);
        if (bm.address() == 0) return;
        long end = v.offset() + v.length();
        if (end % 8 == 0) return;
        int last = v.buffer(buffer, (end + 7) / 8).get(JAVA_BYTE, end / 8) & 0xff;
        int unused = last >>> (end % 8);
        if (unused != 0) e.add(what + ": bits after the last element are set (byte 0x" + Integer.toHexString(last) + ")");
    }

    // ---------------------------------------------------------------- buffers of a batch

    /** One buffer: where it is, and a copy of its readable bytes. */
    record Buf(String path, long address, byte[] bytes) {}

    /** Every buffer of the batch (pre-order), with its readable bytes, using the schema's formats. */
    static List<Buf> buffers(ArrayView batch, SchemaView schema) {
        List<Buf> out = new ArrayList<>();
        walk("batch", batch, schema, out);
        return out;
    }

    static void walk(String path, ArrayView a, SchemaView s, List<Buf> out) {
        String f = s.format();
        long end = a.offset() + a.length();
        long bits = (end + 7) / 8;
        add(out, path + ".validity", a, 0, a.bufferAddress(0).address() == 0 ? 0 : bits);
        switch (f) {
            case "l", "g" -> add(out, path + ".values", a, 1, end * 8);
            case "i" -> add(out, path + ".values", a, 1, end * 4);
            case "b" -> add(out, path + ".values", a, 1, bits);
            case "u" -> {
                add(out, path + ".offsets", a, 1, (end + 1) * 4);
                add(out, path + ".data", a, 2, a.offsetAt(a.length()));
            }
            case "+l" -> add(out, path + ".offsets", a, 1, (end + 1) * 4);
            case "+s" -> { }
            default -> throw new IllegalArgumentException("format " + f + " not handled by the test");
        }
        for (int i = 0; i < a.nChildren(); i++) {
            SchemaView cs = s.child(i);
            walk(path + "." + cs.name(), a.child(i), cs, out);
        }
    }

    static void add(List<Buf> out, String path, ArrayView a, int i, long size) {
        MemorySegment p = a.bufferAddress(i);
        byte[] bytes = p.address() == 0 || size == 0 ? new byte[0] : a.buffer(i, size).toArray(JAVA_BYTE);
        out.add(new Buf(path, p.address(), bytes));
    }

    // ---------------------------------------------------------------- fill callback of the tests

    /** Writes the generator's rows, batch by batch, and records what it sees from inside the upcall. */
    static final class Gen implements Fill {
        final long total;
        long next;
        int calls;
        final List<Long> maxRows = new ArrayList<>();
        /** Stats read through quiver_writer_stats at the start of each call. */
        final List<Stats> atStart = new ArrayList<>();
        /** Stats at the end of each call: the batch's buffers are taken (reused or new) by then. */
        final List<Stats> atEnd = new ArrayList<>();
        final List<Long> written = new ArrayList<>();

        Gen(long total) { this.total = total; }

        @Override
        public int fill(Writer w, long max) {
            calls++;
            maxRows.add(max);
            atStart.add(w.stats());
            long n = Math.min(max, total - next);
            for (long i = 0; i < n; i++) writeRow(w, next++);
            written.add(n);
            atEnd.add(w.stats());
            return 0;
        }
    }

    static Options batchOptions() { return Options.defaults().withBatchRows(BATCH); }

    static long expectedBatches() { return (TOTAL + BATCH - 1) / BATCH; }

    // ---------------------------------------------------------------- sections

    static void basics() {
        List<String> missing = Quiver.missingSymbols();
        check("library exports every C-API function and quiver_live_arrays", missing.isEmpty(),
                "missing: " + missing);
        String v = Quiver.version();
        String want = System.getProperty("quiver.expectedVersion");
        if (want == null || want.isEmpty()) {
            check("quiver_version is a version string", v != null && v.matches("\\d+\\.\\d+\\.\\d+.*"), "got " + v);
        } else {
            check("quiver_version matches Cargo.toml (" + want + ")", want.equals(v), "got " + v);
        }
        Options d = Options.defaults();
        check("quiver_options_default: batch_rows 8192, recycle, retain 3, validate_utf8",
                d.batchRows() == 8192 && d.recycle() && d.retain() == 3 && d.validateUtf8(), "got " + d);
    }

    static void schemaChecks(SchemaView s, String what) {
        Errs e = new Errs();
        e.is("format '" + s.format() + "' is not +s", "+s".equals(s.format()));
        e.eq("n_children", s.nChildren(), 7);
        if (e.isEmpty()) {
            for (int j = 0; j < 7; j++) {
                SchemaView c = s.child(j);
                e.is("child " + j + " name " + c.name(), NAMES[j].equals(c.name()));
                e.is("child " + j + " format " + c.format(), FORMATS[j].equals(c.format()));
                e.is("child " + j + " nullable flag", c.nullable() == (j != 0));
            }
            SchemaView l = s.child(5), st = s.child(6);
            e.is("l child: " + l, l.nChildren() == 1 && "i".equals(l.child(0).format()));
            e.is("st children: " + st, st.nChildren() == 2 && "p".equals(st.child(0).name())
                    && "i".equals(st.child(0).format()) && "q".equals(st.child(1).name())
                    && "u".equals(st.child(1).format()));
        }
        check(what + " describes " + SCHEMA, e);
    }

    static void schemaSection() {
        SchemaView s = SchemaView.parse(SCHEMA);
        schemaChecks(s, "quiver_schema_parse");
        s.release();
        check("schema release callback sets release to NULL", s.isReleased(), null);
        try {
            SchemaView bad = SchemaView.parse("id: int64 not null, : bogus<");
            bad.release();
            check("quiver_schema_parse rejects malformed text with EINVAL", false, "it succeeded");
        } catch (QuiverException ex) {
            check("quiver_schema_parse rejects malformed text with EINVAL", ex.code() == Quiver.EINVAL, ex.getMessage());
            check("quiver_last_error has a message after a failed parse", ex.detail() != null && !ex.detail().isEmpty(),
                    "got " + ex.detail());
        }
    }

    static int code(Runnable r) {
        try {
            r.run();
            return 0;
        } catch (QuiverException e) {
            return e.code();
        }
    }

    static void writerSection() {
        long live0 = Quiver.liveArrays();
        Writer w = Writer.create(SCHEMA, batchOptions());
        for (long r = 0; r < 50; r++) writeRow(w, r);
        check("writer: quiver_writer_rows counts committed rows", w.rows() == 50, "got " + w.rows());

        int rc = code(() -> w.appendI32(ID, 5));
        check("writer: append of the wrong type returns EINVAL", rc == Quiver.EINVAL, "got " + rc);
        String msg = w.lastError();
        check("writer: quiver_writer_last_error has a message after a failure", msg != null && !msg.isEmpty(), "got " + msg);
        rc = code(() -> w.appendI64(99, 1));
        check("writer: append to an unknown node returns EINVAL", rc == Quiver.EINVAL, "got " + rc);
        w.appendI64(ID, id(50));
        rc = code(w::endRow);
        check("writer: end_row of an incomplete row returns EINVAL", rc == Quiver.EINVAL, "got " + rc);
        w.abortRow();
        w.appendI64(ID, id(50));
        w.appendNull(A);
        w.appendNull(X);
        rc = code(() -> w.appendBytes(S, new byte[] {(byte) 0xff, (byte) 0xfe, 'a'}));
        check("writer: invalid UTF-8 returns EINVAL", rc == Quiver.EINVAL, "got " + rc);
        w.abortRow();
        check("writer: failed calls and abort_row leave the committed rows", w.rows() == 50, "got " + w.rows());
        for (long r = 50; r < 60; r++) writeRow(w, r);

        ArrayView b1 = w.finish();
        check("writer: finish gives the rows, values, validity and zeros under nulls", verify(b1, 0, 60));
        check("writer: finish starts an empty batch", w.rows() == 0, "got " + w.rows());
        Stats st = w.stats();
        check("writer: stats count one batch", st.batches() == 1, "got " + st);
        check("live arrays: one finished batch is " + STRUCTS_PER_BATCH + " structs",
                Quiver.liveArrays() - live0 == STRUCTS_PER_BATCH, "got " + (Quiver.liveArrays() - live0));

        SchemaView es = w.exportSchema();
        schemaChecks(es, "quiver_writer_export_schema");

        // Column path: write_array copies an Arrow array (here column a of batch 1).
        Writer wa = Writer.create("a: int32", null);
        wa.writeArray(0, b1.child(A), es.child(A));
        ArrayView ba = wa.finish();
        Errs e = new Errs();
        e.eq("length", ba.length(), 60);
        if (e.isEmpty() && ba.nChildren() == 1) {
            ArrayView c = ba.child(0);
            for (long r = 0; r < 60; r++) {
                e.is("row " + r + " validity", c.isValid(r) == !aNull(r));
                e.eq("row " + r + " value", c.int32(r), aNull(r) ? 0 : a(r));
            }
            e.eq("null_count", c.nullCount(), b1.child(A).nullCount());
        } else {
            e.add("n_children " + ba.nChildren());
        }
        check("writer: quiver_write_array copies an int32 column with its nulls", e);
        ba.release();
        wa.close();
        es.release();

        // A second, full batch; the first stays valid after the writer is freed.
        for (long r = 60; r < 60 + BATCH; r++) writeRow(w, r);
        ArrayView b2 = w.finish();
        check("writer: second batch", verify(b2, 60, BATCH));
        w.close();
        check("writer: batches stay valid after quiver_writer_free", verify(b1, 0, 60).isEmpty() && verify(b2, 60, BATCH).isEmpty(),
                summarize(verify(b1, 0, 60)) + summarize(verify(b2, 60, BATCH)));
        b1.release();
        b2.release();
        check("writer: release callbacks set release to NULL", b1.isReleased() && b2.isReleased(), null);
        check("live arrays: back to the start after releasing the batches", Quiver.liveArrays() == live0,
                "got " + Quiver.liveArrays() + ", want " + live0);
    }

    static void columnSection() {
        int n = 10;
        try (Arena arena = Arena.ofConfined(); Writer w = Writer.create("v: int64 not null, w: float64", null)) {
            MemorySegment v = arena.allocate(JAVA_LONG, n), d = arena.allocate(JAVA_DOUBLE, n);
            MemorySegment validity = arena.allocate(2);
            for (int i = 0; i < n; i++) {
                v.setAtIndex(JAVA_LONG, i, 1000L + i * i);
                d.setAtIndex(JAVA_DOUBLE, i, 99.5 + i); // also under the nulls: must come out as zero
                if (i % 3 != 0) validity.set(JAVA_BYTE, i / 8, (byte) (validity.get(JAVA_BYTE, i / 8) | (1 << (i % 8))));
            }
            w.writeColumn(0, v, MemorySegment.NULL, n);
            w.writeColumn(1, d, validity, n);
            ArrayView b = w.finish();
            Errs e = new Errs();
            e.eq("length", b.length(), n);
            if (e.isEmpty() && b.nChildren() == 2) {
                ArrayView cv = b.child(0), cd = b.child(1);
                long nulls = 0;
                for (int i = 0; i < n; i++) {
                    boolean valid = i % 3 != 0;
                    if (!valid) nulls++;
                    e.is("v[" + i + "] validity", cv.isValid(i));
                    e.eq("v[" + i + "]", cv.int64(i), 1000L + i * i);
                    e.is("w[" + i + "] validity", cd.isValid(i) == valid);
                    if (valid) e.is("w[" + i + "] = " + cd.float64(i), cd.float64(i) == 99.5 + i);
                    else e.eq("w[" + i + "] bits under null", Double.doubleToRawLongBits(cd.float64(i)), 0);
                }
                e.eq("w.null_count", cd.nullCount(), nulls);
            } else {
                e.add("n_children " + b.nChildren());
            }
            check("writer: quiver_write_column of int64 and nullable float64, zeros under nulls", e);
            b.release();
        }
    }


    /**
     * Records of {@code a: int32 (null flag byte @4), b: float64 @8, s: utf8 (u32 offset @16,
     * u32 length @20, bytes @24)}, 32 bytes each; record {@code bad} has invalid UTF-8.
     */
    static byte[] records(int n, int bad) {
        MemorySegment m = MemorySegment.ofArray(new byte[n * 32]);
        for (int i = 0; i < n; i++) {
            long r = i * 32L;
            byte[] text = i == bad ? new byte[] {(byte) 0xff} : ("r" + i).getBytes(StandardCharsets.UTF_8);
            m.set(JAVA_INT_UNALIGNED, r, i * 10);
            m.set(JAVA_BYTE, r + 4, (byte) (i % 3 == 1 ? 1 : 0));
            m.set(JAVA_DOUBLE_UNALIGNED, r + 8, i / 4.0);
            m.set(JAVA_INT_UNALIGNED, r + 16, 24);
            m.set(JAVA_INT_UNALIGNED, r + 20, text.length);
            MemorySegment.copy(text, 0, m, JAVA_BYTE, r + 24, text.length);
        }
        return m.toArray(JAVA_BYTE);
    }

    static RecordLayout recordLayout(Writer w) {
        RecordLayout l = RecordLayout.create(w);
        l.set(0, RecordLayout.FIXED, 0, 0, RecordLayout.NULL_BYTE, 4, 0);
        l.set(1, RecordLayout.FIXED, 8, 0, RecordLayout.NULL_NEVER, 0, 0);
        l.set(2, RecordLayout.REL_LEN, 16, 20, RecordLayout.NULL_NEVER, 0, 0);
        return l;
    }

    static void recordsSection() {
        int n = 40;
        try (Arena arena = Arena.ofConfined(); Writer w = Writer.create("a: int32, b: float64, s: utf8", null);
             RecordLayout l = recordLayout(w)) {
            MemorySegment native_ = arena.allocate(n * 32L, 8);
            MemorySegment.copy(MemorySegment.ofArray(records(n, -1)), 0, native_, 0, n * 32L);
            long got = w.writeRecords(l, native_, 32, 30);
            got += w.writeRecords(l, MemorySegment.ofArray(records(n, -1)).asSlice(30 * 32L), 32, 10);
            ArrayView b = w.finish();
            Errs e = new Errs();
            e.eq("written", got, n);
            e.eq("length", b.length(), n);
            if (e.isEmpty()) {
                ArrayView a = b.child(0), x = b.child(1), s = b.child(2);
                for (int i = 0; i < n; i++) {
                    boolean valid = i % 3 != 1;
                    e.is("a[" + i + "] validity", a.isValid(i) == valid);
                    e.eq("a[" + i + "]", a.int32(i), valid ? i * 10 : 0);
                    e.is("b[" + i + "]", x.float64(i) == i / 4.0);
                    e.is("s[" + i + "] = " + s.utf8(i), s.utf8(i).equals("r" + i));
                }
            }
            check("records: quiver_write_records from native and heap segments, zeros under nulls", e);
            b.release();
        }
        Errs e = new Errs();
        for (int bad = 0; bad < 5; bad++) {
            try (Writer w = Writer.create("a: int32, b: float64, s: utf8", null); RecordLayout l = recordLayout(w)) {
                try {
                    w.writeRecords(l, MemorySegment.ofArray(records(5, bad)), 32, 5);
                    e.add("bad record " + bad + ": no exception");
                } catch (RecordsException ex) {
                    e.eq("bad record " + bad + ": written", ex.written(), bad);
                    e.eq("bad record " + bad + ": code", ex.code(), Quiver.EINVAL);
                    e.is("bad record " + bad + ": message names it: " + ex.detail(),
                            ex.detail() != null && ex.detail().contains("record " + bad));
                }
                e.eq("bad record " + bad + ": rows", w.rows(), bad);
                ArrayView b = w.finish();
                for (int i = 0; i < bad; i++) e.is("bad " + bad + ": s[" + i + "]", b.child(2).utf8(i).equals("r" + i));
                b.release();
            }
        }
        check("records: a bad record at every position commits the records before it", e);
        // UnsafeRows (k: int64, s: utf8) by pointer, with sizes.
        try (Arena arena = Arena.ofConfined(); Writer w = Writer.create("k: int64, s: utf8", null);
             RecordLayout l = RecordLayout.unsafeRow(w)) {
            int rows = 6;
            MemorySegment ptrs = arena.allocate(ADDRESS, rows), sizes = arena.allocate(JAVA_LONG, rows);
            for (int i = 0; i < rows; i++) {
                byte[] text = "x".repeat(i).getBytes(StandardCharsets.UTF_8);
                long size = 24 + (text.length + 7) / 8 * 8;
                MemorySegment r = arena.allocate(size, 8);
                r.set(JAVA_LONG, 0, (i % 2 == 1) ? 2L : 0L); // bit 1: s is null on odd rows
                r.set(JAVA_LONG, 8, 100L + i);
                r.set(JAVA_LONG, 16, (24L << 32) | text.length);
                MemorySegment.copy(text, 0, r, JAVA_BYTE, 24, text.length);
                ptrs.setAtIndex(ADDRESS, i, r);
                sizes.setAtIndex(JAVA_LONG, i, size);
            }
            long got = w.writeRecordPtrs(l, ptrs, sizes, rows);
            ArrayView b = w.finish();
            Errs u = new Errs();
            u.eq("written", got, rows);
            for (int i = 0; i < rows && u.isEmpty(); i++) {
                u.eq("k[" + i + "]", b.child(0).int64(i), 100L + i);
                u.is("s[" + i + "] validity", b.child(1).isValid(i) == (i % 2 == 0));
                if (i % 2 == 0) u.is("s[" + i + "]", b.child(1).utf8(i).equals("x".repeat(i)));
            }
            check("records: UnsafeRows through quiver_layout_unsafe_row and quiver_write_record_ptrs", u);
            b.release();
        }
    }

    /** Writer.appendRow / appendSlots (quiver_append_slots): one downcall per row of fixed-width values. */
    static void slotsSection() {
        byte[] kinds = {Writer.SLOT_I32, Writer.SLOT_I64, Writer.SLOT_F64, Writer.SLOT_BOOL, Writer.SLOT_F32};
        String schema = "a: int32, b: int64, c: float64, d: bool, e: float32";
        int n = 50;
        try (Writer w = Writer.create(schema, null); Writer v = Writer.create(schema, null)) {
            long[] slots = new long[5];
            for (int i = 0; i < n; i++) {
                slots[0] = -i;
                slots[1] = 1000L * i;
                slots[2] = Double.doubleToRawLongBits(i / 8.0);
                slots[3] = i % 2;
                slots[4] = Float.floatToRawIntBits(i * 0.5f);
                long nulls = i % 5 == 0 ? 0b10010 : 0;
                if (i % 2 == 0) {
                    w.appendRow(kinds, slots, nulls);
                } else {
                    w.appendSlots(0, kinds, slots, 2, nulls, false);
                    w.appendSlots(2, new byte[] {kinds[2], kinds[3], kinds[4]}, new long[] {slots[2], slots[3], slots[4]},
                            3, nulls >>> 2, true);
                }
                v.appendI32(0, -i);
                if ((nulls & 2) != 0) v.appendNull(1); else v.appendI64(1, 1000L * i);
                v.appendF64(2, i / 8.0);
                v.appendBool(3, i % 2 == 1);
                if ((nulls & 16) != 0) v.appendNull(4); else v.appendF32(4, i * 0.5f);
                v.endRow();
            }
            ArrayView a = w.finish(), b = v.finish();
            Errs e = new Errs();
            e.eq("length", a.length(), n);
            for (int i = 0; i < n && e.isEmpty(); i++) {
                e.eq("a[" + i + "]", a.child(0).int32(i), b.child(0).int32(i));
                e.is("b[" + i + "] validity", a.child(1).isValid(i) == b.child(1).isValid(i));
                e.eq("b[" + i + "]", a.child(1).int64(i), b.child(1).int64(i));
                e.is("c[" + i + "]", a.child(2).float64(i) == b.child(2).float64(i));
                e.is("d[" + i + "]", a.child(3).boolValue(i) == b.child(3).boolValue(i));
                e.is("e[" + i + "] validity", a.child(4).isValid(i) == b.child(4).isValid(i));
                e.is("e[" + i + "]", a.child(4).float32(i) == b.child(4).float32(i));
            }
            check("slots: appendRow / appendSlots give the values of the per-value appends, nulls from the mask", e);
            a.release();
            b.release();
        }
        try (Writer w = Writer.create("a: int32, b: int64, c: int32", null)) {
            byte[] bad = {Writer.SLOT_I32, Writer.SLOT_I64, Writer.SLOT_I64};
            try {
                w.appendRow(bad, new long[] {1, 2, 3}, 0);
                check("slots: a wrong kind throws EINVAL", false, "no exception");
            } catch (QuiverException ex) {
                boolean ok = ex.code() == Quiver.EINVAL && "quiver_append_slots".equals(ex.function())
                        && ex.detail() != null && ex.detail().startsWith("append_i64: node 2");
                check("slots: a wrong kind throws EINVAL with the per-value append's message", ok, ex.getMessage());
            }
            // the row is open with a and b, as after the per-value appends: c completes it
            w.appendSlots(2, new byte[] {Writer.SLOT_I32}, new long[] {3}, 1, 0, true);
            check("slots: the values before the failing one stay in the open row", w.rows() == 1, "rows " + w.rows());
            ArrayView b = w.finish();
            check("slots: that row holds them", b.child(0).int32(0) == 1 && b.child(1).int64(0) == 2
                    && b.child(2).int32(0) == 3, b.toString());
            b.release();
        }
    }

    /** Pulls a whole stream; each batch is checked and then released (or held) before the next pull. */
    static final class Pulled {
        final List<ArrayView> held = new ArrayList<>();
        final List<List<Buf>> buffers = new ArrayList<>();
        final Errs errors = new Errs();
        long rows;
        int rcAtEnd = -1;
        boolean endIsReleased, endAgain;
        /** The failing get_next, if one failed. */
        String streamError;
    }

    static Pulled pull(Stream stream, SchemaView schema, boolean hold) {
        Pulled out = new Pulled();
        for (int k = 0; k < 1000; k++) {
            ArrayView batch = ArrayView.allocate(Arena.ofAuto());
            int rc = stream.getNext(batch);
            if (rc != 0) {
                out.streamError = "get_next #" + (k + 1) + " returned " + rc + ": " + stream.getLastError();
                return out;
            }
            if (batch.isReleased()) {
                out.endIsReleased = true;
                ArrayView again = ArrayView.allocate(Arena.ofAuto());
                int rc2 = stream.getNext(again);
                out.endAgain = rc2 == 0 && again.isReleased();
                out.rcAtEnd = rc;
                return out;
            }
            long n = batch.length();
            long want = Math.min(BATCH, TOTAL - out.rows);
            if (n != want) out.errors.add("batch " + (k + 1) + " has " + n + " rows, want " + want);
            for (String s : verify(batch, out.rows, n)) out.errors.add("batch " + (k + 1) + ": " + s);
            out.buffers.add(buffers(batch, schema));
            out.rows += n;
            if (hold) out.held.add(batch);
            else batch.release();
        }
        out.streamError = "stream did not end after 1000 batches";
        return out;
    }

    static List<Buf> releaseEachRun;

    static void streamReleaseEach() {
        int callbacks0 = Stream.liveCallbacks();
        long live0 = Quiver.liveArrays();
        Gen gen = new Gen(TOTAL);
        Stream stream = Stream.create(SCHEMA, batchOptions(), gen);
        SchemaView schema = stream.schema();
        schemaChecks(schema, "stream get_schema");
        Pulled p = pull(stream, schema, false);
        check("stream (release each): get_next succeeds up to the end", p.streamError == null, p.streamError);
        check("stream (release each): every batch has the generator's values, validity and zeros under nulls", p.errors);
        check("stream (release each): all rows arrive", p.rows == TOTAL, "got " + p.rows + ", want " + TOTAL);
        check("stream (release each): batch count", p.buffers.size() == expectedBatches(),
                "got " + p.buffers.size() + ", want " + expectedBatches());
        check("stream: end of stream is 0 with a released array, and stays so", p.rcAtEnd == 0 && p.endIsReleased && p.endAgain,
                "rc " + p.rcAtEnd + " released " + p.endIsReleased + " again " + p.endAgain);
        Errs e = new Errs();
        for (long m : gen.maxRows) e.is("max_rows " + m + " outside 1.." + BATCH, m > 0 && m <= BATCH);
        check("stream: fill gets max_rows within the batch row capacity", e);

        // Buffer reuse: the same addresses from batch 2 on.
        e = new Errs();
        List<Buf> firstBatch = p.buffers.isEmpty() ? List.of() : p.buffers.get(0);
        for (int k = 1; k < p.buffers.size(); k++) {
            List<Buf> bk = p.buffers.get(k);
            if (bk.size() != firstBatch.size()) {
                e.add("batch " + (k + 1) + " has " + bk.size() + " buffers, batch 1 has " + firstBatch.size());
                continue;
            }
            for (int i = 0; i < bk.size(); i++) {
                if (bk.get(i).address() != firstBatch.get(i).address()) {
                    e.add("batch " + (k + 1) + " " + bk.get(i).path() + " at 0x" + Long.toHexString(bk.get(i).address())
                            + ", batch 1 at 0x" + Long.toHexString(firstBatch.get(i).address()));
                }
            }
        }
        check("stream (release each): batches 2.." + p.buffers.size() + " reuse batch 1's buffer addresses",
                p.buffers.size() > 2 && e.isEmpty(), e.isEmpty() ? "too few batches" : summarize(e));

        // Stats read through quiver_writer_stats inside the fill upcall: gen.atStart.get(k) is
        // after k batches were finished, gen.atEnd.get(k) after the rows of batch k+1 were written.
        e = new Errs();
        int batches = p.buffers.size();
        if (gen.atStart.size() < batches + 1) {
            e.add("fill called " + gen.atStart.size() + " times for " + batches + " batches");
        } else {
            Stats first = gen.atEnd.get(0);
            e.is("buffers_allocated is 0 while writing batch 1", first.buffersAllocated() > 0);
            e.eq("buffers_reused while writing batch 1", first.buffersReused(), 0);
            for (int k = 1; k <= batches; k++) e.eq("stats.batches after " + k + " batches", gen.atStart.get(k).batches(), k);
            for (int k = 1; k < batches; k++) {
                Stats s = gen.atEnd.get(k), prev = gen.atEnd.get(k - 1);
                e.eq("buffers_allocated while writing batch " + (k + 1), s.buffersAllocated(), first.buffersAllocated());
                e.is("buffers_reused did not grow in batch " + (k + 1) + " (" + prev.buffersReused() + " -> " + s.buffersReused() + ")",
                        s.buffersReused() > prev.buffersReused());
            }
            e.eq("buffers_allocated after the last batch", gen.atStart.get(batches).buffersAllocated(), first.buffersAllocated());
        }
        check("stream (release each): buffers_allocated stops growing after batch 1 and buffers_reused grows (stats from the upcall)", e);

        stream.release();
        check("stream: release sets release to NULL", stream.isReleased(), null);
        check("stream: release calls release_ctx", Stream.liveCallbacks() == callbacks0,
                "callbacks left " + Stream.liveCallbacks() + ", before " + callbacks0);
        schema.release();
        check("live arrays: none left after releasing each batch", Quiver.liveArrays() == live0,
                "got " + Quiver.liveArrays() + ", want " + live0);
        releaseEachRun = new ArrayList<>();
        for (List<Buf> bs : p.buffers) releaseEachRun.addAll(bs);
    }

    static void streamHoldAll() {
        int callbacks0 = Stream.liveCallbacks();
        long live0 = Quiver.liveArrays();
        Gen gen = new Gen(TOTAL);
        Stream stream = Stream.create(SCHEMA, batchOptions(), gen);
        SchemaView schema = stream.schema();
        Pulled p = pull(stream, schema, true);
        check("stream (hold all): get_next succeeds up to the end", p.streamError == null, p.streamError);
        check("stream (hold all): every batch has the generator's values", p.errors);
        check("stream (hold all): all rows arrive", p.rows == TOTAL, "got " + p.rows);
        int batches = p.held.size();
        check("live arrays: " + batches + " held batches are " + batches * STRUCTS_PER_BATCH + " structs",
                Quiver.liveArrays() - live0 == (long) batches * STRUCTS_PER_BATCH,
                "got " + (Quiver.liveArrays() - live0));

        // No reuse while held: every non-empty buffer of every batch has its own address.
        Errs e = new Errs();
        Map<Long, String> seen = new HashMap<>();
        for (int k = 0; k < batches; k++) {
            for (Buf b : p.buffers.get(k)) {
                if (b.address() == 0 || b.bytes().length == 0) continue;
                String prev = seen.put(b.address(), "batch " + (k + 1) + " " + b.path());
                if (prev != null) e.add("batch " + (k + 1) + " " + b.path() + " at 0x" + Long.toHexString(b.address()) + " is also " + prev);
            }
        }
        check("stream (hold all): buffer addresses all distinct across held batches", batches > 2 && e.isEmpty(), summarize(e));

        e = new Errs();
        if (gen.atStart.size() < batches + 1) {
            e.add("fill called " + gen.atStart.size() + " times for " + batches + " batches");
        } else {
            for (int k = 0; k < batches; k++) {
                e.eq("buffers_reused while writing batch " + (k + 1) + " with all earlier ones held", gen.atEnd.get(k).buffersReused(), 0);
                if (k >= 1) e.is("buffers_allocated did not grow in held batch " + (k + 1),
                        gen.atEnd.get(k).buffersAllocated() > gen.atEnd.get(k - 1).buffersAllocated());
            }
        }
        check("stream (hold all): nothing reused and buffers_allocated grows every batch (stats from the upcall)", e);

        // Values still intact after more batches, and after the stream is gone.
        check("stream (hold all): held batches intact after pulling the rest", intact(p, schema));
        stream.release();
        check("stream (hold all): release calls release_ctx", Stream.liveCallbacks() == callbacks0, null);
        check("stream (hold all): held batches valid after the stream is released", intact(p, schema));

        // Deterministic bytes: reused memory gives the same bytes as fresh memory.
        e = new Errs();
        List<Buf> fresh = new ArrayList<>();
        for (List<Buf> bs : p.buffers) fresh.addAll(bs);
        if (releaseEachRun == null || releaseEachRun.size() != fresh.size()) {
            e.add("buffer lists differ in size: " + (releaseEachRun == null ? "no release-each run" : releaseEachRun.size() + " vs " + fresh.size()));
        } else {
            for (int i = 0; i < fresh.size(); i++) {
                if (!Arrays.equals(fresh.get(i).bytes(), releaseEachRun.get(i).bytes())) {
                    e.add(fresh.get(i).path() + " (buffer " + i + ") differs between reused and fresh memory");
                }
            }
        }
        check("stream: batches in reused buffers have the same readable bytes as batches in fresh buffers", e);

        // Release from a thread other than the one that pulled them.
        Thread releaser = new Thread(() -> p.held.forEach(ArrayView::release));
        releaser.start();
        try {
            releaser.join();
        } catch (InterruptedException ex) {
            throw new IllegalStateException(ex);
        }
        boolean allReleased = p.held.stream().allMatch(ArrayView::isReleased);
        check("stream (hold all): every batch released from another thread", allReleased, null);
        schema.release();
        check("live arrays: none left after releasing the held batches", Quiver.liveArrays() == live0,
                "got " + Quiver.liveArrays() + ", want " + live0);
    }

    /** A consumer keeps one column (moved out of the batch) and releases the rest. */
    static void streamKeepOneColumn() throws Exception {
        long live0 = Quiver.liveArrays();
        Gen gen = new Gen(TOTAL);
        Stream stream = Stream.create(SCHEMA, batchOptions(), gen);
        SchemaView schema = stream.schema();
        ArrayView b1 = stream.next();
        List<Buf> b1Bufs = buffers(b1, schema);
        // Move column s out (a bitwise copy, then the source child is marked released).
        MemorySegment moved = Arena.ofAuto().allocate(ArrayView.SIZE, 8);
        MemorySegment.copy(b1.child(S).segment(), 0, moved, 0, ArrayView.SIZE);
        b1.child(S).segment().set(ADDRESS, 64, MemorySegment.NULL); // release = NULL
        ArrayView kept = ArrayView.of(moved);
        b1.release();
        check("keep one column: the moved child outlives its released parent (1 struct live)",
                Quiver.liveArrays() - live0 == 1, "got " + (Quiver.liveArrays() - live0));

        ArrayView b2 = stream.next();
        List<Buf> b2Bufs = buffers(b2, schema);
        Errs e = new Errs();
        boolean otherReused = false;
        for (int i = 0; i < Math.min(b1Bufs.size(), b2Bufs.size()); i++) {
            Buf x = b1Bufs.get(i), y = b2Bufs.get(i);
            boolean kepts = x.path().startsWith("batch.s.");
            if (kepts && x.bytes().length > 0 && x.address() == y.address()) e.add(x.path() + " reused while its column is held");
            if (!kepts && x.bytes().length > 0 && x.address() == y.address()) otherReused = true;
        }
        check("keep one column: the held column's buffers are not reused by the next batch", e);
        check("keep one column: the released columns' buffers are reused by the next batch", otherReused, null);
        check("keep one column: the next batch has the generator's values", verify(b2, BATCH, BATCH));
        b2.release();
        for (ArrayView b; (b = stream.next()) != null; ) b.release();
        stream.release();
        schema.release();

        e = new Errs();
        e.eq("kept length", kept.length(), BATCH);
        for (long i = 0; i < BATCH && e.isEmpty(); i++) {
            e.is("row " + i + " s validity", kept.isValid(i) == !sNull(i));
            if (!sNull(i)) e.is("row " + i + " s = " + kept.utf8(i), kept.utf8(i).equals(s(i)));
        }
        check("keep one column: the held column keeps its values after more batches and the stream's release", e);

        // Release it from another thread.
        Thread t = new Thread(kept::release);
        t.start();
        t.join();
        check("keep one column: released from another thread", kept.isReleased(), null);
        check("live arrays: none left after the kept column's release", Quiver.liveArrays() == live0,
                "got " + Quiver.liveArrays() + ", want " + live0);
    }

    static List<String> intact(Pulled p, SchemaView schema) {
        Errs e = new Errs();
        long first = 0;
        for (int k = 0; k < p.held.size(); k++) {
            ArrayView b = p.held.get(k);
            for (String s : verify(b, first, b.length())) e.add("batch " + (k + 1) + ": " + s);
            List<Buf> now = buffers(b, schema), then = p.buffers.get(k);
            for (int i = 0; i < Math.min(now.size(), then.size()); i++) {
                if (!Arrays.equals(now.get(i).bytes(), then.get(i).bytes())) e.add("batch " + (k + 1) + " " + now.get(i).path() + " changed");
            }
            first += b.length();
        }
        return e;
    }

    static void memoryLimit() {
        int n = 4096;
        try (Arena arena = Arena.ofConfined(); Writer w = Writer.create("v: int64", null)) {
            MemorySegment v = arena.allocate(JAVA_LONG, n);
            for (int i = 0; i < n; i++) v.setAtIndex(JAVA_LONG, i, i);
            w.setMemoryLimit(1 << 14);
            int rc = code(() -> w.writeColumn(0, v, MemorySegment.NULL, n));
            check("memory limit: a column over it is ENOMEM", rc == Quiver.ENOMEM, "rc " + rc);
            String m = w.lastError();
            check("memory limit: the message names the limit", m != null && m.contains("memory limit of 16384 bytes"),
                    "got " + m);
            check("memory limit: the refused column wrote nothing", w.rows() == 0, "rows " + w.rows());
            w.writeColumn(0, v, MemorySegment.NULL, 100);
            ArrayView b = w.finish();
            check("memory limit: a column under it goes through", b.length() == 100, "length " + b.length());
            b.release();
            rc = code(() -> w.setMemoryLimit(-1));
            check("memory limit: a negative limit is EINVAL", rc == Quiver.EINVAL, "rc " + rc);
        }
        // A fill that lets ENOMEM out ends the batch early; every row comes out once.
        long total = 20000;
        Fill fill = new Fill() {
            long next;

            @Override
            public int fill(Writer w, long max) {
                if (next == 0) w.setMemoryLimit(1 << 14);
                for (long i = 0; i < max && next < total; i++) {
                    w.appendI64(0, next);
                    w.endRow();
                    next++;
                }
                return 0;
            }
        };
        Stream s = Stream.create("v: int64", null, fill);
        long rows = 0;
        int batches = 0, rc = 0;
        while (true) {
            ArrayView b = ArrayView.allocate(Arena.ofAuto());
            rc = s.getNext(b);
            if (rc != 0 || b.isReleased()) break;
            rows += b.length();
            batches++;
            b.release();
        }
        s.release();
        check("memory limit: a stream's batches end early under it", rc == 0 && rows == total && batches > 2,
                "rc " + rc + ", rows " + rows + ", batches " + batches);
    }

    static void streamErrors() {
        int callbacks0 = Stream.liveCallbacks();
        long live0 = Quiver.liveArrays();
        String message = "generator stopped at row " + BATCH;
        // Fill succeeds once, then returns non-zero after quiver_writer_set_error.
        Fill failing = new Fill() {
            int calls;
            long next;

            @Override
            public int fill(Writer w, long max) {
                if (++calls == 2) {
                    w.setError(message);
                    return 7;
                }
                for (long i = 0; i < max; i++) writeRow(w, next++);
                return 0;
            }
        };
        Stream s = Stream.create(SCHEMA, batchOptions(), failing);
        ArrayView b1 = ArrayView.allocate(Arena.ofAuto());
        int rc1 = s.getNext(b1);
        check("stream error: first batch before the failure", rc1 == 0 && !b1.isReleased() && verify(b1, 0, BATCH).isEmpty(),
                "rc " + rc1 + " " + (b1.isReleased() ? "released" : summarize(verify(b1, 0, BATCH))));
        ArrayView b2 = ArrayView.allocate(Arena.ofAuto());
        int rc2 = s.getNext(b2);
        check("stream error: fill returning non-zero makes get_next return EIO", rc2 == Quiver.EIO, "got " + rc2);
        String err = s.getLastError();
        check("stream error: get_last_error has the quiver_writer_set_error message", err != null && err.contains(message),
                "got " + err);
        check("stream error: the failed get_next leaves its out array released", b2.isReleased(), null);
        ArrayView b3 = ArrayView.allocate(Arena.ofAuto());
        int rc3 = s.getNext(b3);
        check("stream error: the error is sticky", rc3 == Quiver.EIO && b3.isReleased(), "got " + rc3);
        s.release();
        check("stream error: first batch still valid after the failure and the stream's release",
                verify(b1, 0, BATCH).isEmpty(), summarize(verify(b1, 0, BATCH)));
        b1.release();

        // A Java exception in the fill upcall, in the middle of a row: EIO, never a crash.
        Stream t = Stream.create(SCHEMA, batchOptions(), (w, max) -> {
            writeRow(w, 0);
            w.appendI64(ID, 42);
            throw new IllegalStateException("boom in the fill callback");
        });
        ArrayView tb = ArrayView.allocate(Arena.ofAuto());
        int rct = t.getNext(tb);
        check("stream error: a Java exception in fill makes get_next return EIO", rct == Quiver.EIO, "got " + rct);
        String terr = t.getLastError();
        check("stream error: get_last_error carries the exception's message",
                terr != null && terr.contains("boom in the fill callback"), "got " + terr);
        t.release();

        // A failing append inside fill propagates as a QuiverException, then EIO.
        Stream u = Stream.create(SCHEMA, batchOptions(), (w, max) -> {
            w.appendF64(ID, 1.0); // id is int64: EINVAL
            return 0;
        });
        ArrayView ub = ArrayView.allocate(Arena.ofAuto());
        int rcu = u.getNext(ub);
        String uerr = u.getLastError();
        check("stream error: a failed append in fill gives EIO naming the call",
                rcu == Quiver.EIO && uerr != null && uerr.contains("quiver_append_f64"), "rc " + rcu + ", error " + uerr);
        u.release();

        // No row written: the stream is empty.
        Stream empty = Stream.create(SCHEMA, batchOptions(), (w, max) -> 0);
        ArrayView eb = ArrayView.allocate(Arena.ofAuto());
        int rce = empty.getNext(eb);
        check("stream: a fill that writes no row ends the stream at once", rce == 0 && eb.isReleased(),
                "rc " + rce + " released " + eb.isReleased());
        empty.release();

        check("stream error: every stream called release_ctx", Stream.liveCallbacks() == callbacks0,
                "callbacks left " + Stream.liveCallbacks());
        check("live arrays: none left after the error cases", Quiver.liveArrays() == live0,
                "got " + Quiver.liveArrays() + ", want " + live0);
    }

    public static void main(String[] args) {
        System.out.println("quiver JVM test: java " + System.getProperty("java.version") + ", library "
                + Quiver.libraryOrigin());
        section("basics", QuiverJvmTest::basics);
        section("schema", QuiverJvmTest::schemaSection);
        section("writer", QuiverJvmTest::writerSection);
        section("column path", QuiverJvmTest::columnSection);
        section("records", QuiverJvmTest::recordsSection);
        section("slots", QuiverJvmTest::slotsSection);
        section("stream release each", QuiverJvmTest::streamReleaseEach);
        section("stream hold all", QuiverJvmTest::streamHoldAll);
        section("stream keep one column", QuiverJvmTest::streamKeepOneColumn);
        section("stream errors", QuiverJvmTest::streamErrors);
        section("memory limit", QuiverJvmTest::memoryLimit);
        section("final", () -> {
            System.gc();
            long live = Quiver.liveArrays();
            check("quiver_live_arrays() == 0 at the end", live == 0, "got " + live);
        });
        System.out.println("SUMMARY " + passed + " passed, " + failed + " failed, " + skipped + " skipped");
        System.exit(failed == 0 ? 0 : 1);
    }
}
