/**
 * The Java binding of quiver (Java 22+, {@code java.lang.foreign}). The jar built by
 * {@code scripts/build-jar.sh} carries {@code libquiver.so} for linux-x86_64 and loads it
 * when no path is given; run with {@code --enable-native-access=org.quiver}.
 */
module org.quiver {
    exports org.quiver;
}
