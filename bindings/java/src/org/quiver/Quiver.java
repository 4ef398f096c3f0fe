package org.quiver;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * Entry point of the Java binding of quiver: loads {@code libquiver.so} and holds one
 * downcall handle per function of the C API ({@code include/quiver.h}).
 *
 * <p>The library is found, in this order, at the path of the system property
 * {@code quiver.lib}, at the path of the environment variable {@code QUIVER_LIB}, inside the
 * jar ({@code org/quiver/native/linux-x86_64/libquiver.so}, as {@code scripts/build-jar.sh}
 * packs it), or by the dynamic loader under the name {@code libquiver.so}
 * ({@code LD_LIBRARY_PATH}). {@link #libraryOrigin()} says which one was used.
 *
 * <p>Run the JVM with {@code --enable-native-access=ALL-UNNAMED} (class path) or
 * {@code --enable-native-access=org.quiver} (module path) so the restricted FFM methods used
 * here do not warn.
 *
 * <p>Most users need only {@link Writer}, {@link Stream}, {@link ArrayView} and
 * {@link SchemaView}; the handles are package-private.
 */
public final class Quiver {
    private Quiver() {}

    /** errno values of the C API (Linux). */
    public static final int EIO = 5;
    public static final int ENOMEM = 12;
    public static final int EINVAL = 22;
    public static final int ERANGE = 34;
    public static final int ENOSYS = 38;
    public static final int EOVERFLOW = 75;
    public static final int ENOTRECOVERABLE = 131;

    static final Linker LINKER = Linker.nativeLinker();
    static final SymbolLookup LIB = loadLibrary();
    private static final List<String> MISSING = Collections.synchronizedList(new ArrayList<>());

    /** Where the jar keeps the native library of each platform it carries. */
    static final String NATIVE_RESOURCE_DIR = "/org/quiver/native/";
    private static String libraryOrigin; // set by loadLibrary (no initializer: LIB is initialised first)

    private static SymbolLookup loadLibrary() {
        String path = System.getProperty("quiver.lib");
        String from = "-Dquiver.lib";
        if (path == null || path.isEmpty()) {
            path = System.getenv("QUIVER_LIB");
            from = "QUIVER_LIB";
        }
        if (path != null && !path.isEmpty()) {
            Path p = Path.of(path);
            if (!Files.exists(p)) {
                throw new UnsatisfiedLinkError("quiver: library not found at " + p.toAbsolutePath()
                        + " (from -Dquiver.lib or QUIVER_LIB)");
            }
            libraryOrigin = p.toAbsolutePath() + " (" + from + ")";
            return SymbolLookup.libraryLookup(p, Arena.global());
        }
        String resource = NATIVE_RESOURCE_DIR + platform() + "/libquiver.so";
        try (InputStream in = Quiver.class.getResourceAsStream(resource)) {
            if (in != null) {
                // The loader needs a file: copy it out, load it, delete the copy (the mapping
                // stays valid once loaded, so nothing is left in the temporary directory).
                Path tmp = Files.createTempFile("libquiver-", ".so");
                try {
                    Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
                    SymbolLookup lookup = SymbolLookup.libraryLookup(tmp, Arena.global());
                    libraryOrigin = "jar:" + resource;
                    return lookup;
                } finally {
                    Files.deleteIfExists(tmp);
                }
            }
        } catch (IOException e) {
            throw new UnsatisfiedLinkError("quiver: cannot extract " + resource + " from the jar: " + e);
        }
        libraryOrigin = "libquiver.so (dynamic loader)";
        return SymbolLookup.libraryLookup("libquiver.so", Arena.global());
    }

    /** The platform directory name of the running JVM, e.g. {@code linux-x86_64}. */
    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        if (os.startsWith("linux")) os = "linux";
        if (arch.equals("amd64") || arch.equals("x86_64")) arch = "x86_64";
        if (arch.equals("arm64")) arch = "aarch64";
        return os + "-" + arch;
    }

    /**
     * Where the native library was loaded from: a path with {@code (-Dquiver.lib)} or
     * {@code (QUIVER_LIB)}, {@code jar:/org/quiver/native/<platform>/libquiver.so} when the
     * jar's own copy was used, or {@code libquiver.so (dynamic loader)}.
     */
    public static String libraryOrigin() {
        return libraryOrigin;
    }

    /**
     * A downcall handle for {@code name}; when the library lacks the symbol, a handle of the
     * same type that throws {@link UnsupportedOperationException} (so one missing function
     * does not make the whole binding unusable), and the name is listed by
     * {@link #missingSymbols()}.
     */
    static MethodHandle fn(String name, FunctionDescriptor fd, Linker.Option... options) {
        Optional<MemorySegment> sym = LIB.find(name);
        if (sym.isPresent()) return LINKER.downcallHandle(sym.get(), fd, options);
        MISSING.add(name);
        MethodType type = fd.toMethodType();
        try {
            MethodHandle thrower = MethodHandles.lookup().findStatic(Quiver.class, "missing",
                    MethodType.methodType(void.class, String.class));
            thrower = MethodHandles.insertArguments(thrower, 0, name);
            // void -> the function's return type (a zero that is never returned).
            thrower = MethodHandles.explicitCastArguments(thrower, MethodType.methodType(type.returnType()));
            return MethodHandles.dropArguments(thrower, 0, type.parameterList());
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static void missing(String name) {
        throw new UnsupportedOperationException("quiver: libquiver.so does not export " + name);
    }

    /** Handle for calling a C function pointer: the pointer is the first argument. */
    static MethodHandle pointerCall(FunctionDescriptor fd) {
        return LINKER.downcallHandle(fd);
    }

    /** Appends (and quiver_writer_rows) are short and never call back into Java. */
    private static final Linker.Option[] CRITICAL = {Linker.Option.critical(false)};
    /** Appends of bytes may take heap segments (byte arrays) directly, without a copy. */
    private static final Linker.Option[] CRITICAL_HEAP = {Linker.Option.critical(true)};

    private static final FunctionDescriptor APPEND_NODE = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT);

    // Status and errors.
    static final MethodHandle WRITER_LAST_ERROR = fn("quiver_writer_last_error", FunctionDescriptor.of(ADDRESS, ADDRESS));
    static final MethodHandle LAST_ERROR = fn("quiver_last_error", FunctionDescriptor.of(ADDRESS));
    static final MethodHandle WRITER_SET_ERROR = fn("quiver_writer_set_error", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    static final MethodHandle WRITER_SET_MEMORY_LIMIT = fn("quiver_writer_set_memory_limit", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));

    // Options, schema, writer life cycle.
    static final MethodHandle OPTIONS_DEFAULT = fn("quiver_options_default", FunctionDescriptor.ofVoid(ADDRESS));
    static final MethodHandle WRITER_NEW = fn("quiver_writer_new", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    static final MethodHandle SCHEMA_PARSE = fn("quiver_schema_parse", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    static final MethodHandle WRITER_FREE = fn("quiver_writer_free", FunctionDescriptor.ofVoid(ADDRESS));

    // Row path.
    static final MethodHandle APPEND_NULL = fn("quiver_append_null", APPEND_NODE, CRITICAL);
    static final MethodHandle APPEND_BOOL = fn("quiver_append_bool", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_BOOLEAN), CRITICAL);
    static final MethodHandle APPEND_I8 = fn("quiver_append_i8", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_BYTE), CRITICAL);
    static final MethodHandle APPEND_I16 = fn("quiver_append_i16", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_SHORT), CRITICAL);
    static final MethodHandle APPEND_I32 = fn("quiver_append_i32", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT), CRITICAL);
    static final MethodHandle APPEND_I64 = fn("quiver_append_i64", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG), CRITICAL);
    static final MethodHandle APPEND_U8 = fn("quiver_append_u8", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_BYTE), CRITICAL);
    static final MethodHandle APPEND_U16 = fn("quiver_append_u16", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_SHORT), CRITICAL);
    static final MethodHandle APPEND_U32 = fn("quiver_append_u32", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT), CRITICAL);
    static final MethodHandle APPEND_U64 = fn("quiver_append_u64", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG), CRITICAL);
    static final MethodHandle APPEND_F32 = fn("quiver_append_f32", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_FLOAT), CRITICAL);
    static final MethodHandle APPEND_F64 = fn("quiver_append_f64", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_DOUBLE), CRITICAL);
    static final MethodHandle APPEND_BYTES = fn("quiver_append_bytes", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_LONG), CRITICAL_HEAP);
    static final MethodHandle APPEND_DECIMAL = fn("quiver_append_decimal", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_LONG), CRITICAL_HEAP);
    static final MethodHandle BEGIN = fn("quiver_begin", APPEND_NODE, CRITICAL);
    static final MethodHandle END = fn("quiver_end", APPEND_NODE, CRITICAL);
    static final MethodHandle END_ROW = fn("quiver_end_row", FunctionDescriptor.of(JAVA_INT, ADDRESS), CRITICAL);
    static final MethodHandle ABORT_ROW = fn("quiver_abort_row", FunctionDescriptor.of(JAVA_INT, ADDRESS), CRITICAL);
    /** kinds and slots may be heap segments (a byte[] and a long[]), passed without a copy. */
    static final MethodHandle APPEND_SLOTS = fn("quiver_append_slots", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT,
            ADDRESS, ADDRESS, JAVA_LONG, JAVA_BOOLEAN), CRITICAL_HEAP);

    // Column path.
    static final MethodHandle WRITE_COLUMN = fn("quiver_write_column", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG));
    static final MethodHandle WRITE_ARRAY = fn("quiver_write_array", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, ADDRESS));

    // Records.
    static final MethodHandle LAYOUT_NEW = fn("quiver_layout_new", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    static final MethodHandle LAYOUT_UNSAFE_ROW = fn("quiver_layout_unsafe_row", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    static final MethodHandle LAYOUT_FREE = fn("quiver_layout_free", FunctionDescriptor.ofVoid(ADDRESS));
    static final MethodHandle LAYOUT_SET = fn("quiver_layout_set", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT,
            JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT));
    /** Records may be a heap segment (a byte[]) too. */
    static final MethodHandle WRITE_RECORDS = fn("quiver_write_records", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS,
            JAVA_LONG, JAVA_LONG, ADDRESS), CRITICAL_HEAP);
    static final MethodHandle WRITE_RECORD_PTRS = fn("quiver_write_record_ptrs", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS,
            ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));

    // Batches and streams.
    static final MethodHandle WRITER_FINISH = fn("quiver_writer_finish", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    static final MethodHandle WRITER_EXPORT_SCHEMA = fn("quiver_writer_export_schema", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    static final MethodHandle WRITER_ROWS = fn("quiver_writer_rows", FunctionDescriptor.of(JAVA_LONG, ADDRESS), CRITICAL);
    static final MethodHandle WRITER_STATS = fn("quiver_writer_stats", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    static final MethodHandle STREAM_NEW = fn("quiver_stream_new",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    static final MethodHandle VERSION = fn("quiver_version", FunctionDescriptor.of(ADDRESS));
    static final MethodHandle LIVE_ARRAYS = fn("quiver_live_arrays", FunctionDescriptor.of(JAVA_LONG));

    // The standard C Data / C Stream callbacks, called through their function pointers.
    static final MethodHandle CALL_RELEASE = pointerCall(FunctionDescriptor.ofVoid(ADDRESS));
    static final MethodHandle CALL_STREAM_GET = pointerCall(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    static final MethodHandle CALL_STREAM_LAST_ERROR = pointerCall(FunctionDescriptor.of(ADDRESS, ADDRESS));

    /** Names of C API functions this libquiver.so does not export (empty when complete). */
    public static List<String> missingSymbols() {
        synchronized (MISSING) {
            return List.copyOf(MISSING);
        }
    }

    /** {@code quiver_version()}: the crate version. */
    public static String version() {
        try {
            return cString((MemorySegment) VERSION.invokeExact());
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code quiver_live_arrays()}: ArrowArray structs this process got from quiver (batches and
     * each of their children) whose release callback has not run yet.
     */
    public static long liveArrays() {
        try {
            return (long) LIVE_ARRAYS.invokeExact();
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code quiver_last_error()}: thread-local message of the last failure without a writer. */
    public static String lastError() {
        try {
            return cString((MemorySegment) LAST_ERROR.invokeExact());
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** A NUL-terminated C string at {@code p}, or null for NULL. */
    static String cString(MemorySegment p) {
        if (p == null || p.address() == 0) return null;
        return p.reinterpret(Long.MAX_VALUE).getString(0);
    }

    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) return r;
        if (t instanceof Error e) throw e;
        return new RuntimeException(t);
    }
}
