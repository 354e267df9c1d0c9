package dev.tidemark.model;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.channels.Channels;
import java.nio.channels.ReadableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.beam.sdk.io.FileSystems;
import org.apache.beam.sdk.io.fs.ResourceId;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Where a model lives, and how to get a local copy of it and its sidecar ({@code <uri>.json}).
 *
 * <ul>
 *   <li>a local path or a {@code file:} URI: used in place;
 *   <li>{@code classpath:/models/x.ubj}: a resource of the job's jar (the shaded jar carries the
 *       default model), copied to a temporary directory;
 *   <li>any other scheme ({@code gs://bucket/x.ubj}, ...): read through Beam's {@link FileSystems}
 *       (the scheme's filesystem must be on the classpath) and copied to a temporary directory.
 * </ul>
 *
 * <p>Copies keep the file name, because engines read the format from the extension ({@code
 * .json}/{@code .ubj} for XGBoost).
 */
final class ModelLocation {
  static final String CLASSPATH_PREFIX = "classpath:";

  private static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]*:.*");

  /** How a model URI is read. */
  enum Kind {
    LOCAL,
    CLASSPATH,
    BEAM_FILESYSTEM
  }

  /** A model file and its sidecar on the local disk; deletes them on close if they are copies. */
  static final class LocalCopy implements AutoCloseable {
    final Path modelFile;
    final Path sidecarFile;
    private final @Nullable Path tempDir;

    LocalCopy(Path modelFile, Path sidecarFile, @Nullable Path tempDir) {
      this.modelFile = modelFile;
      this.sidecarFile = sidecarFile;
      this.tempDir = tempDir;
    }

    @Override
    public void close() {
      if (tempDir == null) {
        return;
      }
      try (Stream<Path> paths = Files.walk(tempDir)) {
        paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      } catch (IOException e) {
        // Best effort: a leftover temporary copy is harmless.
      }
    }
  }

  private ModelLocation() {}

  static Kind kind(String uri) {
    if (uri.startsWith(CLASSPATH_PREFIX)) {
      return Kind.CLASSPATH;
    }
    if (uri.startsWith("file:") || !SCHEME.matcher(uri).matches() || isWindowsDrive(uri)) {
      return Kind.LOCAL;
    }
    return Kind.BEAM_FILESYSTEM;
  }

  private static boolean isWindowsDrive(String uri) {
    return uri.length() > 2
        && uri.charAt(1) == ':'
        && (uri.charAt(2) == '\\' || uri.charAt(2) == '/');
  }

  /** The local path of a {@link Kind#LOCAL} URI. */
  static Path localPath(String uri) {
    return uri.startsWith("file:") ? Paths.get(URI.create(uri)) : Paths.get(uri);
  }

  /** The sidecar URI of a model URI. */
  static String sidecarUri(String modelUri) {
    return modelUri + ModelMetadata.SIDECAR_SUFFIX;
  }

  /** The file name (last path segment) of a URI. */
  static String fileName(String uri) {
    String path = uri.startsWith(CLASSPATH_PREFIX) ? uri.substring(CLASSPATH_PREFIX.length()) : uri;
    int slash = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
    return path.substring(slash + 1);
  }

  /**
   * Reads only the sidecar, for checks at pipeline construction; null for {@link
   * Kind#BEAM_FILESYSTEM} URIs (those are checked on the workers).
   */
  static @Nullable byte[] readSidecarIfCheap(String modelUri) {
    switch (kind(modelUri)) {
      case LOCAL:
        Path model = localPath(modelUri);
        requireLocalFile(model, "model file", modelUri);
        Path sidecar = ModelMetadata.sidecarOf(model);
        requireLocalFile(sidecar, "model sidecar", modelUri);
        try {
          return Files.readAllBytes(sidecar);
        } catch (IOException e) {
          throw new ModelLoadException("cannot read model sidecar " + sidecar + ": " + e, e);
        }
      case CLASSPATH:
        try (InputStream side = openResource(sidecarUri(modelUri), "model sidecar")) {
          openResource(modelUri, "model file").close();
          return side.readAllBytes();
        } catch (IOException e) {
          throw new ModelLoadException("cannot read " + sidecarUri(modelUri) + ": " + e, e);
        }
      default:
        return null;
    }
  }

  /** A local copy (or the local files themselves) of the model and its sidecar. */
  static LocalCopy fetch(String modelUri) {
    switch (kind(modelUri)) {
      case LOCAL:
        {
          Path model = localPath(modelUri);
          requireLocalFile(model, "model file", modelUri);
          Path sidecar = ModelMetadata.sidecarOf(model);
          requireLocalFile(sidecar, "model sidecar", modelUri);
          return new LocalCopy(model, sidecar, null);
        }
      case CLASSPATH:
        {
          Path dir = tempDir();
          Path model = dir.resolve(fileName(modelUri));
          Path sidecar = ModelMetadata.sidecarOf(model);
          try (InputStream in = openResource(modelUri, "model file");
              InputStream side = openResource(sidecarUri(modelUri), "model sidecar")) {
            Files.copy(in, model, StandardCopyOption.REPLACE_EXISTING);
            Files.copy(side, sidecar, StandardCopyOption.REPLACE_EXISTING);
          } catch (IOException e) {
            new LocalCopy(model, sidecar, dir).close();
            throw new ModelLoadException("cannot copy " + modelUri + " to " + dir + ": " + e, e);
          } catch (RuntimeException e) {
            new LocalCopy(model, sidecar, dir).close();
            throw e;
          }
          return new LocalCopy(model, sidecar, dir);
        }
      default:
        {
          Path dir = tempDir();
          Path model = dir.resolve(fileName(modelUri));
          Path sidecar = ModelMetadata.sidecarOf(model);
          try {
            copyFromBeamFileSystem(modelUri, model, "model file");
            copyFromBeamFileSystem(sidecarUri(modelUri), sidecar, "model sidecar");
          } catch (RuntimeException e) {
            new LocalCopy(model, sidecar, dir).close();
            throw e;
          }
          return new LocalCopy(model, sidecar, dir);
        }
    }
  }

  private static void requireLocalFile(Path file, String what, String uri) {
    if (!Files.isRegularFile(file)) {
      throw new ModelLoadException(
          what
              + " not found: "
              + file.toAbsolutePath()
              + " (model URI "
              + uri
              + "); every model needs its file and a sidecar <model file>.json next to it."
              + " Check the path given to ScoreFeatures.of(...) / --modelUri");
    }
  }

  private static InputStream openResource(String uri, String what) {
    String name = uri.substring(CLASSPATH_PREFIX.length());
    String resource = name.startsWith("/") ? name.substring(1) : name;
    ClassLoader loader = Thread.currentThread().getContextClassLoader();
    InputStream in = loader == null ? null : loader.getResourceAsStream(resource);
    if (in == null) {
      in = ModelLocation.class.getClassLoader().getResourceAsStream(resource);
    }
    if (in == null) {
      throw new ModelLoadException(
          what
              + " not found on the classpath: "
              + uri
              + "; the jar must contain "
              + resource
              + " (and its sidecar "
              + resource
              + ModelMetadata.SIDECAR_SUFFIX
              + ")");
    }
    return in;
  }

  private static void copyFromBeamFileSystem(String uri, Path target, String what) {
    ResourceId resource;
    try {
      resource = FileSystems.matchNewResource(uri, false);
    } catch (IllegalArgumentException e) {
      throw new ModelLoadException(
          "cannot read "
              + what
              + " "
              + uri
              + ": "
              + e.getMessage()
              + "; put the Beam filesystem for that scheme on the classpath (for gs:,"
              + " beam-sdks-java-extensions-google-cloud-platform-core)",
          e);
    }
    try (ReadableByteChannel channel = FileSystems.open(resource);
        InputStream in = Channels.newInputStream(channel)) {
      Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
    } catch (FileNotFoundException e) {
      throw new ModelLoadException(
          what + " not found: " + uri + "; every model needs its file and a sidecar <uri>.json", e);
    } catch (IOException | RuntimeException e) {
      throw new ModelLoadException("cannot read " + what + " " + uri + ": " + e, e);
    }
  }

  private static Path tempDir() {
    try {
      return Files.createTempDirectory("tidemark-model-");
    } catch (IOException e) {
      throw new ModelLoadException("cannot create a temporary directory for the model: " + e, e);
    }
  }
}
