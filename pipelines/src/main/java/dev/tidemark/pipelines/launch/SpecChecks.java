package dev.tidemark.pipelines.launch;

import dev.tidemark.model.ScoreFeatures;
import dev.tidemark.pipelines.RunSpecs;
import dev.tidemark.pipelines.SpecOptions;
import dev.tidemark.pipelines.SpecSupport;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecException;
import java.util.List;

/**
 * The spec checks of a run's start: the spec loads ({@link RunSpecs#of}), and the model that will
 * decide (and a shadow model, if any) takes the spec's features as input, name for name and in
 * order ({@link PipelineSpec#checkModelFeatures}). Either failure is a {@link SpecException} that
 * names the spec and lists every problem; the CLI exits 2 with it.
 */
public final class SpecChecks {
  private SpecChecks() {}

  /** Loads the run's spec and checks the models against it; returns the spec. */
  public static PipelineSpec check(TidemarkOptions options) {
    PipelineSpec spec = RunSpecs.of(options);
    String location = RunSpecs.location(options.as(SpecOptions.class).getSpecUri());
    checkModel(spec, location, options.getModelUri());
    String shadow = options.getShadowModelUri();
    if (shadow != null && !shadow.isBlank()) {
      checkModel(spec, location, shadow.trim());
    }
    SpecSupport.check(spec, location);
    return spec;
  }

  /**
   * Refuses {@code modelUri} when its sidecar's features are not {@code spec}'s; a watched
   * directory and a remote model are checked by the scoring step instead, as each model is loaded.
   */
  static void checkModel(PipelineSpec spec, String location, String modelUri) {
    List<String> names = ScoreFeatures.sidecarFeatureNames(modelUri);
    if (names != null) {
      spec.checkModelFeatures(location, modelUri, names);
    }
  }
}
