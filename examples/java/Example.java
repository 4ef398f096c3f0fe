import org.quiver.*;

public class Example {
    public static void main(String[] args) {
        System.out.println("quiver " + Quiver.version() + ", library " + Quiver.libraryOrigin());
        long[] next = {0};
        Options opts = Options.defaults().withBatchRows(4096);
        try (Stream stream = Stream.create("id: int64 not null, name: utf8", opts, (w, maxRows) -> {
            long n = Math.min(maxRows, 10_000 - next[0]);
            for (long i = 0; i < n; i++, next[0]++) {
                w.appendI64(0, next[0]);
                if (next[0] % 10 == 0) w.appendNull(1); else w.appendString(1, "user-" + next[0]);
                w.endRow();
            }
            return 0;                     // writing no row ends the stream
        })) {
            long total = 0;
            int batches = 0;
            for (ArrayView b; (b = stream.next()) != null; ) {
                System.out.println("batch " + ++batches + ": " + b.length() + " rows");
                total += b.length();
                b.release();              // its buffers go back to the writer
            }
            System.out.println("total: " + total + " rows in " + batches + " batches");
        }
    }
}
