package dev.tidemark.pipelines.flink;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Where a Flink cluster's processes read and write checkpoints and savepoints. A path is written by
 * the JobManager and the TaskManagers, not by the launcher that submits the job, so what matters is
 * whether each of those processes reaches it.
 *
 * <p><b>Launcher-local</b>: a {@code file:} URI, or a path without a scheme ({@code /data/cp},
 * {@code out/cp}). Each Flink process resolves it on its own file system ({@code fs.default-scheme}
 * defaults to {@code file}), so with a master in other processes every process would write its part
 * of a checkpoint to its own disk and a restore on another machine would not find it. Tidemark
 * cannot tell a shared mount from a local disk, so it treats every such path alike. A URI with
 * another scheme ({@code s3://}, {@code gs://}, {@code hdfs://}, ...) names a store every process
 * reaches.
 */
public final class ClusterPaths {
  private ClusterPaths() {}

  /** Whether {@code path} is on the launcher's file system: {@code file:} or no scheme. */
  public static boolean isLauncherLocal(String path) {
    String scheme = scheme(path);
    return scheme == null || scheme.equalsIgnoreCase("file");
  }

  /**
   * A savepoint directory or path as the cluster's processes should get it: a URI with a scheme as
   * given, a plain path made absolute against the launcher's working directory ({@code file:}). A
   * relative path would otherwise be resolved against each Flink process's own working directory.
   */
  public static String forCluster(String path) {
    if (scheme(path) != null) {
      return path.trim();
    }
    Path absolute = Paths.get(path.trim()).toAbsolutePath().normalize();
    return absolute.toUri().toString();
  }

  /**
   * A {@code file:} URI or plain path as a local path (savepoint locations are URIs such as {@code
   * file:/tmp/sp/savepoint-...}); null for other schemes.
   */
  public static @Nullable Path toLocalPath(String location) {
    String scheme = scheme(location);
    if (scheme == null) {
      return Paths.get(location.trim());
    }
    if (!scheme.equalsIgnoreCase("file")) {
      return null;
    }
    return Paths.get(URI.create(location.trim()).getPath());
  }

  /** The URI scheme of {@code path}, or null for a plain path (a Windows drive is a plain path). */
  static @Nullable String scheme(String path) {
    String trimmed = path.trim();
    try {
      String scheme = new URI(trimmed).getScheme();
      return scheme == null || scheme.length() == 1 ? null : scheme;
    } catch (URISyntaxException e) {
      // Spaces and other characters a URI does not allow: a plain path, or a scheme before them.
      int colon = trimmed.indexOf(':');
      return colon > 1 && trimmed.substring(0, colon).matches("[A-Za-z][A-Za-z0-9+.-]*")
          ? trimmed.substring(0, colon)
          : null;
    }
  }
}
