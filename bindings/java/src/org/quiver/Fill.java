package org.quiver;

/**
 * The fill callback of a {@link Stream}: write up to {@code maxRows} rows into {@code w} and
 * return 0; writing no row ends the stream. A non-zero return ends the stream with EIO; set
 * the message first with {@link Writer#setError(String)}. An exception thrown here becomes a
 * non-zero return, with the exception as the writer's error message; it never crosses into C.
 *
 * <p>The writer is borrowed for the duration of the call only: do not keep it.
 */
@FunctionalInterface
public interface Fill {
    int fill(Writer w, long maxRows) throws Exception;
}
