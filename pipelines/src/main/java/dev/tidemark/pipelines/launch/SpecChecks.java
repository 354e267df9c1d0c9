package dev.tidemark.pipelines.launch;

import dev.tidemark.model.ScoreFeatures;
import dev.tidemark.pipelines.RunSpecs;
import dev.tidemark.pipelines.SpecOptions;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecException;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.transforms.values.PaymentFields;
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
   * Refuses what a spec declares that this build does not yet derive from it, instead of running
   * something else: every declared field is checked as the spec says, but the features, the
   * decision labels and the sink names are still the payments ones, so a spec must declare the
   * payment fields ({@link PaymentFields}; other fields may be added and any field's rules
   * changed), the bundled payments spec's features and labels, the event time {@code time}, and the
   * default output names. The rest (event types, size limit, identity, clocks, windows, model and
   * threshold) is taken from any spec.
   */
  public static void checkSupported(PipelineSpec spec, String location) {
    PipelineSpec payments = RunSpecs.load(SpecLoader.DEFAULT_BUNDLED);
    String why =
        " this build aggregates payments only (the features of specs/payments.yaml over its payment"
            + " fields); a spec of other events is refused until the pipeline derives its features"
            + " from the spec";
    List<SpecException.Problem> problems = new ArrayList<>();
    try {
      PaymentFields.of(spec.events());
    } catch (IllegalArgumentException e) {
      problems.add(new SpecException.Problem("events.fields", e.getMessage() + ";" + why));
    }
    if (!spec.features().equals(payments.features())) {
      problems.add(
          new SpecException.Problem(
              "features",
              "the features are not the payments spec's " + payments.featureNames() + ":" + why));
    }
    if (!spec.clocks().eventTime().equals(PipelineSpec.Clocks.TIME_ATTRIBUTE)) {
      problems.add(
          new SpecException.Problem(
              "clocks.eventTime",
              "'"
                  + spec.clocks().eventTime()
                  + "': this build takes the event time from the CloudEvents attribute 'time'"
                  + " only"));
    }
    PipelineSpec.Model model = spec.model();
    if (!model.positiveLabel().equals(payments.model().positiveLabel())
        || !model.negativeLabel().equals(payments.model().negativeLabel())) {
      problems.add(
          new SpecException.Problem(
              "model.labels",
              "this build decides 'review' and 'allow' only; leave model.labels out"));
    }
    for (Map.Entry<String, PipelineSpec.Output> output : new TreeMap<>(spec.outputs()).entrySet()) {
      if (!output.getValue().names().equals(SpecLoader.defaultNames(output.getValue().sink()))) {
        problems.add(
            new SpecException.Problem(
                "outputs." + output.getKey() + ".names",
                "this build writes the default names "
                    + SpecLoader.defaultNames(output.getValue().sink())
                    + "; leave names out and give them with the options of the sink (--output,"
                    + " --kafkaDecisionsTopic and the other --kafka*Topic, --bigQueryDataset)"));
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
