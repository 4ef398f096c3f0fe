package org.quiver;

/**
 * A batched record call ({@link Writer#writeRecords}, {@link Writer#writeRecordPtrs}) stopped:
 * the first {@link #written()} records were committed; the bad record and those after it
 * changed nothing.
 */
public final class RecordsException extends QuiverException {
    private static final long serialVersionUID = 1L;
    private final long written;

    public RecordsException(String function, int code, String detail, long written) {
        super(function, code, detail);
        this.written = written;
    }

    /** Records committed by the call before it stopped. */
    public long written() { return written; }
}
