package dev.tidemark.model;

import dev.tidemark.transforms.values.DriftReference;
import dev.tidemark.transforms.values.DriftReferences;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.beam.sdk.io.FileSystems;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds a model version's drift reference while the pipeline runs, in the sidecars at a model URI
 * that cannot be read when the pipeline is built: every sidecar of a watched directory or pattern
 * (a version copied in later), or the one sidecar of a model on a remote filesystem. {@link
 * DriftReferences} asks once per version and worker; a version's decisions reach the drift tests
 * only after the scoring step loaded it, so its sidecar is there by then.
 */
final class SidecarDriftLookup implements DriftReferences.Lookup {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(SidecarDriftLookup.class);

  private final String modelUri;

  SidecarDriftLookup(String modelUri) {
    this.modelUri = modelUri;
  }

  @Override
  public @Nullable DriftReference find(String modelVersion) {
    List<String> sidecars;
    try {
      sidecars = sidecars();
    } catch (IOException e) {
      LOG.warn("drift: cannot list {} for model {}'s reference: {}", modelUri, modelVersion, e);
      return null;
    }
    for (String sidecar : sidecars) {
      ModelMetadata metadata;
      try {
        metadata = ModelMetadata.parse(read(sidecar), sidecar);
      } catch (IOException | RuntimeException e) {
        LOG.warn("drift: cannot read {} for model {}'s reference: {}", sidecar, modelVersion, e);
        continue;
      }
      if (modelVersion.equals(metadata.name() + ":" + metadata.version())) {
        return metadata.driftReference();
      }
    }
    return null;
  }

  /** The sidecars at the URI: of each matched file whose sidecar matched too, in URI order. */
  private List<String> sidecars() throws IOException {
    if (!ModelDirectory.isWatched(modelUri)) {
      return List.of(ModelLocation.sidecarUri(modelUri));
    }
    Set<String> files = ModelDirectory.files(ModelDirectory.matchSpec(modelUri)).keySet();
    List<String> sidecars = new ArrayList<>();
    for (String file : files) {
      if (files.contains(ModelLocation.sidecarUri(file))) {
        sidecars.add(ModelLocation.sidecarUri(file));
      }
    }
    sidecars.sort(null);
    return sidecars;
  }

  private static byte[] read(String uri) throws IOException {
    try (InputStream in =
        Channels.newInputStream(
            FileSystems.open(FileSystems.matchSingleFileSpec(uri).resourceId()))) {
      return in.readAllBytes();
    }
  }
}
