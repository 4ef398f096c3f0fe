package org.quiver;

/** A C API call returned a non-zero status (an errno value, see {@link Quiver}). */
public class QuiverException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int code;
    private final String function;
    private final String detail;

    public QuiverException(String function, int code, String detail) {
        super(function + " failed: " + codeName(code) + " (" + code + ")"
                + (detail == null ? "" : ": " + detail));
        this.function = function;
        this.code = code;
        this.detail = detail;
    }

    /** The errno value returned. */
    public int code() { return code; }

    /** The C function that failed. */
    public String function() { return function; }

    /** The library's message for the failure (last error), or null. */
    public String detail() { return detail; }

    public static String codeName(int code) {
        return switch (code) {
            case Quiver.EIO -> "EIO";
            case Quiver.ENOMEM -> "ENOMEM";
            case Quiver.EINVAL -> "EINVAL";
            case Quiver.ERANGE -> "ERANGE";
            case Quiver.ENOSYS -> "ENOSYS";
            case Quiver.EOVERFLOW -> "EOVERFLOW";
            case Quiver.ENOTRECOVERABLE -> "ENOTRECOVERABLE";
            default -> "error";
        };
    }
}
