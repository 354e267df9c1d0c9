package dev.tidemark.pipelines.launch;

import dev.tidemark.model.ScoreFeatures;
import dev.tidemark.pipelines.RunSpecs;
import dev.tidemark.pipelines.SpecDefaults;
import dev.tidemark.pipelines.SpecOptions;
import dev.tidemark.pipelines.SpecSupport;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecException;
import dev.tidemark.spec.SpecLoader;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

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
    checkSupported(spec, location);
    return spec;
  }

  /**
   * Refuses what a run cannot yet take from a spec: what the graph cannot ({@link
   * SpecSupport#check}), and file output names other than the defaults (Kafka topics and BigQuery
   * tables take theirs from the spec: {@link SpecDefaults#outputNames}).
   */
  public static void checkSupported(PipelineSpec spec, String location) {
    List<SpecException.Problem> problems = new ArrayList<>(SpecSupport.problems(spec));
    for (Map.Entry<String, PipelineSpec.Output> output : new TreeMap<>(spec.outputs()).entrySet()) {
      PipelineSpec.Sink sink = output.getValue().sink();
      if (sink == PipelineSpec.Sink.FILES
          && !output.getValue().names().equals(SpecLoader.defaultNames(sink))) {
        problems.add(
            new SpecException.Problem(
                "outputs." + output.getKey() + ".names",
                "files are written under the default names "
                    + SpecLoader.defaultNames(sink)
                    + ", which the run report and the output comparison read; leave names out"
                    + " and give the place with --output (Kafka topics and BigQuery tables may"
                    + " be named)"));
      }
    }
    if (!problems.isEmpty()) {
      throw new SpecException(location, problems);
    }
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
