package dev.tidemark.transforms.values;

import java.io.Serializable;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * The {@link DriftReference} of each model version ({@code name:version}): those known when the
 * pipeline is built (a model file's sidecar), and for versions that appear while it runs (a watched
 * model directory) a {@link Lookup} asked once per version on each worker. A version neither knows
 * gets {@link DriftReference#none()}.
 */
public final class DriftReferences implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Finds a model version's reference while the pipeline runs; null when it has none. */
  @FunctionalInterface
  public interface Lookup extends Serializable {
    @Nullable DriftReference find(String modelVersion);
  }

  private final Map<String, DriftReference> known;
  private final @Nullable Lookup lookup;
  private transient @Nullable Map<String, DriftReference> found;

  private DriftReferences(Map<String, DriftReference> known, @Nullable Lookup lookup) {
    this.known = Map.copyOf(Objects.requireNonNull(known, "known"));
    this.lookup = lookup;
  }

  /** The references known when the pipeline is built, by model version. */
  public static DriftReferences of(Map<String, DriftReference> known) {
    return new DriftReferences(known, null);
  }

  /** These, and {@code lookup} for a version they do not know (after any earlier lookup). */
  public DriftReferences withLookup(Lookup lookup) {
    Objects.requireNonNull(lookup, "lookup");
    Lookup earlier = this.lookup;
    return new DriftReferences(
        known,
        earlier == null
            ? lookup
            : version -> {
              DriftReference first = earlier.find(version);
              return first != null ? first : lookup.find(version);
            });
  }

  /**
   * The reference of {@code modelVersion}: the known one, else what the lookup finds (kept, so it
   * is asked once per version), else {@link DriftReference#none()}.
   */
  public DriftReference of(String modelVersion) {
    DriftReference reference = known.get(modelVersion);
    if (reference != null) {
      return reference;
    }
    if (lookup == null) {
      return DriftReference.none();
    }
    Map<String, DriftReference> cache = found;
    if (cache == null) {
      cache = new ConcurrentHashMap<>();
      found = cache;
    }
    return cache.computeIfAbsent(
        modelVersion,
        version -> {
          DriftReference looked = lookup.find(version);
          return looked != null ? looked : DriftReference.none();
        });
  }

  /** The references known when the pipeline is built. */
  public Map<String, DriftReference> known() {
    return known;
  }
}
