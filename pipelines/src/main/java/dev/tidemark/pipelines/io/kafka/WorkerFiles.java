package dev.tidemark.pipelines.io.kafka;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.apache.beam.sdk.io.FileSystems;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * The files a Kafka client needs, where the client is created (on the worker): the client
 * properties file and the key and trust stores, each named by a local path, a Beam file system URI
 * ({@code file:}, {@code gs://}, any scheme a registered {@code FileSystemRegistrar} serves) or,
 * for a store, a Secret Manager secret version.
 *
 * <p>A local path is read each time it is needed and handed to Kafka as it is. A URI or a secret is
 * fetched once per JVM and kept, like a Secret Manager password ({@link SecretManagerSecrets}); a
 * store fetched this way is written once to a temporary file that only this JVM's user may read or
 * write ({@code rw-------} where the file system has POSIX permissions), because Kafka's {@code
 * ssl.*.location} settings want a path. The file is deleted when the JVM exits, and written again
 * if something removed it meanwhile. Nothing here logs a file's content; messages name the location
 * and the option.
 */
final class WorkerFiles {
  /** A URI scheme of two or more characters: a one-letter prefix is a Windows drive. */
  private static final Pattern URI = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]+:.*", Pattern.DOTALL);

  /** Fetched URIs' contents, by URI; they may be secrets. */
  private static final ConcurrentMap<String, byte[]> FETCHED = new ConcurrentHashMap<>();

  /** Fetched stores written to private temporary files, by source. */
  private static final ConcurrentMap<String, Path> WRITTEN = new ConcurrentHashMap<>();

  private WorkerFiles() {}

  /** Whether {@code location} is a URI read through Beam's file systems, not a local path. */
  static boolean isUri(String location) {
    return URI.matcher(location).matches();
  }

  /**
   * Checks at construction what is cheap and local: that a local path is a readable file here, and
   * that a URI's scheme has a Beam file system. A file behind a URI is not read: the launcher may
   * lack the workers' access to it.
   */
  static void check(String location, String option, PipelineOptions options) {
    if (!isUri(location)) {
      if (!Files.isReadable(Paths.get(location))) {
        throw new IllegalArgumentException(option + "=" + location + ": no readable file there");
      }
      return;
    }
    FileSystems.registerFileSystemsOnce(options);
    try {
      FileSystems.matchNewResource(location, false);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          option
              + "="
              + location
              + ": no Beam file system reads this URI here ("
              + e.getMessage()
              + "); use a local path, file: or gs://",
          e);
    }
  }

  /** The content of {@code location}: a local file read now, a URI fetched once per JVM. */
  static byte[] read(String location, String option) {
    if (!isUri(location)) {
      try {
        return Files.readAllBytes(Paths.get(location));
      } catch (IOException e) {
        throw new IllegalStateException(
            "cannot read " + option + "=" + location + ": " + e.getMessage(), e);
      }
    }
    return FETCHED.computeIfAbsent(location, uri -> fetch(uri, option));
  }

  /** A path Kafka can open for the store at {@code location}: itself, or a private copy. */
  static String storePath(String location, String option) {
    if (!isUri(location)) {
      return location;
    }
    return written("uri|" + location, () -> read(location, option));
  }

  /** A private file holding the store that a Secret Manager secret version holds. */
  static String storePath(
      String secretVersion, @Nullable String endpoint, String option, String what) {
    return written(
        "secret|" + (endpoint == null ? "" : endpoint) + "|" + secretVersion,
        () -> SecretManagerSecrets.bytes(secretVersion, endpoint, option, what));
  }

  private static byte[] fetch(String uri, String option) {
    FileSystems.registerFileSystemsOnce(PipelineOptionsFactory.create());
    // match, not matchNewResource: only match reads a file: URI as a URI.
    try (InputStream in =
        Channels.newInputStream(
            FileSystems.open(FileSystems.matchSingleFileSpec(uri).resourceId()))) {
      return in.readAllBytes();
    } catch (IOException e) {
      throw new IllegalStateException(
          "cannot read "
              + option
              + "="
              + uri
              + " (a worker reads it when its first Kafka client starts): "
              + e.getMessage(),
          e);
    }
  }

  private static String written(String source, Supplier<byte[]> content) {
    return WRITTEN
        .compute(
            source,
            (key, path) -> path != null && Files.isRegularFile(path) ? path : write(content.get()))
        .toString();
  }

  /** Writes {@code content} to a new temporary file only its owner may read and write. */
  static Path write(byte[] content) {
    try {
      boolean posix =
          java.nio.file.FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
      Path file =
          posix
              ? Files.createTempFile(
                  "tidemark-kafka-",
                  ".store",
                  PosixFilePermissions.asFileAttribute(
                      PosixFilePermissions.fromString("rw-------")))
              : Files.createTempFile("tidemark-kafka-", ".store");
      file.toFile().deleteOnExit();
      if (!posix) {
        // Owner only, as far as java.io.File can say it.
        file.toFile().setReadable(false, false);
        file.toFile().setWritable(false, false);
        file.toFile().setReadable(true, true);
        file.toFile().setWritable(true, true);
      }
      Files.write(file, content);
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write a Kafka store to a temporary file", e);
    }
  }
}
