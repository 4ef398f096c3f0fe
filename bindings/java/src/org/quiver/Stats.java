package org.quiver;

/** {@code struct QuiverStats}: counters of one writer. */
public record Stats(long batches, long buffersReused, long buffersAllocated, long bytesAllocated, long bytesRetained) {
    /** Size of {@code struct QuiverStats}: five uint64_t. */
    static final long SIZE = 40;
}
