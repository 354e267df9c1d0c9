package dev.tidemark.model;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.beam.sdk.io.FileSystems;
import org.apache.beam.sdk.io.fs.EmptyMatchTreatment;
import org.apache.beam.sdk.io.fs.MatchResult;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A directory or glob pattern of model files with their sidecars, and which of them is the newest
 * valid model.
 *
 * <p>Which files are models: every matched file whose name does not end in {@code .json}, and a
 * {@code .json} file whose own sidecar ({@code <file>.json}) matched too (an XGBoost model saved as
 * JSON). Newest: the latest last-modified time the filesystem reports; on a tie, the greater URI.
 * Valid: it has a sidecar, the sidecar parses, names the configured engine (if one is set) and the
 * spec's features in order, the file matches the sidecar's SHA-256 (when it has one), and the
 * engine loads it and scores a row with it ({@link LoadedModel#load}). A file that fails is
 * refused: it is skipped, the next newest is tried, and {@link #refusals()} says why. A valid
 * verdict is kept per file, last-modified time and size of the file and of its sidecar, so a valid
 * file is loaded again only when it or its sidecar changes. A refusal is not kept: the file is
 * checked again at the next listing, so a transient read error does not pin the old model, and a
 * model copied before its sidecar is picked up once the sidecar arrives. Each refused version of a
 * file is reported ({@link #refusals()}, a WARN) once, however often it is checked again.
 *
 * <p>Not thread-safe; one instance per DoFn instance.
 */
final class ModelDirectory {
  private static final Logger LOG = LoggerFactory.getLogger(ModelDirectory.class);

  private static final String GLOB_CHARACTERS = "*?[{";

  /** A valid model file: its URI, last-modified time and the SHA-256 of the content checked. */
  record Found(String uri, long lastModifiedMillis, String sha256) {
    /** The model as the watch names it: URI and content. */
    ModelIdentity identity() {
      return new ModelIdentity(uri, sha256);
    }
  }

  /** A refused file and why. */
  record Refusal(String uri, String reason) {}

  private final ScoringConfig config;
  private final String spec;
  private final Map<String, Found> valid = new HashMap<>();
  private final Set<String> reported = new HashSet<>();
  private final List<Refusal> refusals = new ArrayList<>();

  ModelDirectory(ScoringConfig config) {
    this.config = config;
    this.spec = matchSpec(config.modelUri);
  }

  /**
   * Whether {@code uri} names a directory or pattern of models rather than one model file: it has
   * a glob character ({@code * ? [ {}), ends in {@code /}, or is a local directory.
   */
  static boolean isWatched(String uri) {
    if (ModelLocation.kind(uri) == ModelLocation.Kind.CLASSPATH) {
      return false;
    }
    for (char c : GLOB_CHARACTERS.toCharArray()) {
      if (uri.indexOf(c) >= 0) {
        return true;
      }
    }
    if (uri.endsWith("/")) {
      return true;
    }
    return ModelLocation.kind(uri) == ModelLocation.Kind.LOCAL
        && Files.isDirectory(ModelLocation.localPath(uri));
  }

  /** The pattern Beam's {@link FileSystems#match} gets: a directory becomes its files. */
  static String matchSpec(String uri) {
    for (char c : GLOB_CHARACTERS.toCharArray()) {
      if (uri.indexOf(c) >= 0) {
        return uri;
      }
    }
    String spec = uri;
    if (ModelLocation.kind(uri) == ModelLocation.Kind.LOCAL && uri.startsWith("file:")) {
      spec = ModelLocation.localPath(uri).toString();
    }
    return spec.endsWith("/") ? spec + "*" : spec + "/*";
  }

  /** The newest valid model now; null when there is none. */
  @Nullable Found newest() {
    Map<String, MatchResult.Metadata> byUri;
    try {
      byUri = files(spec);
    } catch (IOException e) {
      LOG.warn("cannot list the models in {}: {}; the current model keeps scoring", spec, e);
      return null;
    }
    List<MatchResult.Metadata> models = new ArrayList<>();
    for (Map.Entry<String, MatchResult.Metadata> e : byUri.entrySet()) {
      String uri = e.getKey();
      if (!uri.endsWith(ModelMetadata.SIDECAR_SUFFIX)
          || byUri.containsKey(ModelLocation.sidecarUri(uri))) {
        models.add(e.getValue());
      }
    }
    models.sort(
        Comparator.comparingLong(MatchResult.Metadata::lastModifiedMillis)
            .thenComparing(m -> m.resourceId().toString())
            .reversed());
    for (MatchResult.Metadata model : models) {
      String uri = model.resourceId().toString();
      MatchResult.Metadata sidecar = byUri.get(ModelLocation.sidecarUri(uri));
      String key =
          uri
              + '|'
              + model.lastModifiedMillis()
              + '|'
              + model.sizeBytes()
              + '|'
              + (sidecar == null ? "-" : sidecar.lastModifiedMillis() + "|" + sidecar.sizeBytes());
      Found found = valid.get(key);
      if (found == null) {
        found = check(key, uri, model.lastModifiedMillis(), sidecar != null);
      }
      if (found != null) {
        valid.put(key, found);
        return found;
      }
    }
    return null;
  }

  /** The files (not directories) {@code spec} matches now, by URI; none when nothing matches. */
  static Map<String, MatchResult.Metadata> files(String spec) throws IOException {
    MatchResult match = FileSystems.match(spec, EmptyMatchTreatment.ALLOW);
    Map<String, MatchResult.Metadata> byUri = new HashMap<>();
    if (match.status() == MatchResult.Status.OK) {
      for (MatchResult.Metadata file : match.metadata()) {
        if (!file.resourceId().isDirectory()) {
          byUri.put(file.resourceId().toString(), file);
        }
      }
    }
    return byUri;
  }

  private @Nullable Found check(
      String key, String uri, long lastModifiedMillis, boolean hasSidecar) {
    String reason;
    if (!hasSidecar) {
      reason =
          "it has no sidecar "
              + ModelLocation.sidecarUri(uri)
              + "; copy the sidecar next to it (or copy it last)";
    } else {
      try (LoadedModel loaded = LoadedModel.load(config.withModelUri(uri))) {
        LOG.info(
            "model {} ({}:{}) is valid",
            uri,
            loaded.metadata().name(),
            loaded.metadata().version());
        return new Found(uri, lastModifiedMillis, loaded.contentSha256());
      } catch (RuntimeException e) {
        reason = e.getMessage();
      }
    }
    if (reported.add(key)) {
      LOG.warn(
          "model {} refused, the current model keeps scoring (checked again at each listing): {}",
          uri,
          reason);
      refusals.add(new Refusal(uri, reason));
    }
    return null;
  }

  /** The files refused since the last call; each refused file (and version of it) once. */
  List<Refusal> refusals() {
    List<Refusal> out = List.copyOf(refusals);
    refusals.clear();
    return out;
  }
}
