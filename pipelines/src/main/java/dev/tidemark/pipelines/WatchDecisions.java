package dev.tidemark.pipelines;

import dev.tidemark.model.ScoreFeatures;
import dev.tidemark.pipelines.io.Sinks;
import dev.tidemark.pipelines.io.Sources;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.transforms.values.DriftAlarm;
import dev.tidemark.transforms.values.DriftReferences;
import dev.tidemark.transforms.values.RawRecord;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.values.PCollection;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * What a run learns about its own decisions, as its options say: with labels ({@code
 * --labelsInput}, {@code --kafkaLabelsTopic}, {@code --pubsubLabelsSubscription} or {@code
 * --labelsInReplay}), the labels judged by {@link EvaluateDecisions} (evaluations, and drift alarms
 * on scores and labelled errors); without, drift alarms on the decisions' scores alone. The drift
 * tests compare with the sidecars of {@code --modelUri} and {@code --shadowModelUri} where they are
 * cheap to read.
 */
final class WatchDecisions {
  private WatchDecisions() {}

  /**
   * Adds the label branch (if any, with its sink) and the drift tests to {@code pipeline}; returns
   * the drift alarms, which the outputs' sink writes. {@code replayLabels}: the labels split off a
   * replay ({@code --labelsInReplay}), else null and the labels, if any, are read as the options
   * say.
   */
  static PCollection<DriftAlarm> apply(
      Pipeline pipeline,
      Outputs outputs,
      @Nullable PCollection<RawRecord> replayLabels,
      TidemarkOptions options) {
    DriftReferences references = driftReferences(options);
    PCollection<DriftAlarm> drift;
    if (Sources.readsLabels(options)) {
      EvaluateDecisions.Result labels =
          (replayLabels != null ? replayLabels : Sources.readLabels(pipeline, options))
              .apply("EvaluateDecisions", evaluation(outputs, options, references));
      Sinks.writeLabels(labels, outputs, options);
      drift = labels.drift;
    } else {
      drift =
          outputs.decisions.apply(
              "DetectDrift", EvaluateDecisions.detectDrift(RunSpecs.of(options), references));
    }
    return drift;
  }

  /** {@link EvaluateDecisions} of {@code outputs}' decisions, with the run's windows. */
  static EvaluateDecisions evaluation(
      Outputs outputs, TidemarkOptions options, DriftReferences references) {
    PipelineSpec spec = RunSpecs.of(options);
    return EvaluateDecisions.of(outputs.decisions, spec)
        .withWindows(
            Durations.parse("windowSize", options.getWindowSize()),
            Durations.parse("windowPeriod", options.getWindowPeriod()),
            Durations.parse("allowedLateness", options.getAllowedLateness()))
        .withDeadLetterBound(TidemarkPipeline.deadLetterBound(options))
        .withMaxFutureSkew(Sources.maxFutureSkewOf(options))
        .withDriftReferences(references);
  }

  /**
   * The drift references of the run's model and shadow model: read now where cheap, found on the
   * workers for a watched directory's versions and a model on a remote filesystem.
   */
  static DriftReferences driftReferences(TidemarkOptions options) {
    List<String> models = new ArrayList<>();
    models.add(options.getModelUri());
    String shadow = options.getShadowModelUri();
    if (shadow != null && !shadow.isBlank()) {
      models.add(shadow.trim());
    }
    return ScoreFeatures.driftReferencesOf(models);
  }
}
