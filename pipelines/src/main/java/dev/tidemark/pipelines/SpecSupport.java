package dev.tidemark.pipelines;

import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecException;
import java.util.ArrayList;
import java.util.List;

/**
 * What the graph ({@link ScoreCloudEvents}) takes from a spec, and what it refuses rather than run
 * something else: every part of a spec drives the graph (events and their fields, key, event time,
 * identity, windows, features, model, threshold and labels) except a {@code custom} feature, whose
 * combine only Java can supply ({@link ScoreCloudEvents#withFeatureFn}).
 */
public final class SpecSupport {
  private SpecSupport() {}

  /**
   * Refuses a spec the graph cannot follow.
   *
   * @throws SpecException naming {@code location} and every problem
   */
  public static void check(PipelineSpec spec, String location) {
    check(spec, location, false);
  }

  /**
   * {@link #check(PipelineSpec, String)}; with {@code customFns}, a {@code custom} feature passes:
   * the caller supplies its combine in Java ({@link ScoreCloudEvents#withFeatureFn}).
   */
  public static void check(PipelineSpec spec, String location, boolean customFns) {
    List<SpecException.Problem> problems = problems(spec, customFns);
    if (!problems.isEmpty()) {
      throw new SpecException(location, problems);
    }
  }

  /** Each part of {@code spec} the graph cannot follow, with its path; empty when it can. */
  public static List<SpecException.Problem> problems(PipelineSpec spec) {
    return problems(spec, false);
  }

  private static List<SpecException.Problem> problems(PipelineSpec spec, boolean customFns) {
    List<SpecException.Problem> problems = new ArrayList<>();
    List<PipelineSpec.Feature> features = spec.features();
    for (int i = 0; i < features.size(); i++) {
      PipelineSpec.Feature feature = features.get(i);
      if (feature.aggregation() == PipelineSpec.Aggregation.CUSTOM && !customFns) {
        problems.add(
            new SpecException.Problem(
                "features[" + i + "]",
                "'"
                    + feature.name()
                    + "' is custom: a run from a spec cannot supply its combine; apply"
                    + " ComputeFeatures.withFeatureFn(\""
                    + feature.name()
                    + "\", fn) in a pipeline of your own"));
      }
    }
    return problems;
  }
}
