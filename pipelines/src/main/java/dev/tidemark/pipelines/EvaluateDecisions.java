package dev.tidemark.pipelines;

import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.transforms.BoundDeadLetters;
import dev.tidemark.transforms.DeduplicateLabels;
import dev.tidemark.transforms.DetectDrift;
import dev.tidemark.transforms.EvaluateLabels;
import dev.tidemark.transforms.ParseLabels;
import dev.tidemark.transforms.SummarizeEvaluations;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.DriftAlarm;
import dev.tidemark.transforms.values.DriftReferences;
import dev.tidemark.transforms.values.DuplicateRecord;
import dev.tidemark.transforms.values.Evaluation;
import dev.tidemark.transforms.values.EvaluationSummary;
import dev.tidemark.transforms.values.Label;
import dev.tidemark.transforms.values.RawRecord;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.WithFailures;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PInput;
import org.apache.beam.sdk.values.POutput;
import org.apache.beam.sdk.values.PValue;
import org.apache.beam.sdk.values.TupleTag;
import org.joda.time.Duration;

/**
 * The model's loop as one transform: raw label records in (a labels stream, {@code
 * tidemark.label.v1}), judged against the decisions {@link ScoreCloudEvents} made, out come the
 * online evaluation per model version and every label accounted for.
 *
 * <p>Steps: {@link ParseLabels} (bad records become dead letters with a reason), {@link
 * DeduplicateLabels} (first copy of each label identity within the spec's {@code labels.horizon}),
 * {@link EvaluateLabels} (each label against the edition in force of every window that held its
 * event) and {@link SummarizeEvaluations} (per model version and role, over the spec's evaluation
 * windows), and {@link DetectDrift} on the decisions' scores and the evaluations (the spec's {@code
 * labels.drift}; a run without labels applies {@link #detectDrift} to its decisions alone).
 * Counters: {@code labels.read} = {@code labels.valid} + {@code labels.deadLetters}; {@code
 * labels.valid} = {@code labels.unique} + {@code labels.duplicates}; every unique label, once
 * judged, is {@code labels.matched}, {@code labels.unmatched} or {@code labels.withoutKeyOrTime}.
 *
 * <pre>{@code
 * Outputs outputs = events.apply("ScoreCloudEvents", ScoreCloudEvents.of(spec));
 * EvaluateDecisions.Result evaluated =
 *     labels.apply("EvaluateDecisions", EvaluateDecisions.of(outputs.decisions, spec));
 * evaluated.summaries; // one EvaluationSummary per window, pane and model version
 * }</pre>
 */
public final class EvaluateDecisions
    extends PTransform<PCollection<RawRecord>, EvaluateDecisions.Result> {
  /** The file sink's directory of each output, in the order of {@link Result}'s fields. */
  public static final List<String> NAMES =
      List.of("evaluations", "unmatched-labels", "label-duplicates", "label-dead-letters");

  /** The file sink's directory of the drift alarms, written with or without labels. */
  public static final String DRIFT = "drift";

  private final PCollection<Decision> decisions;
  private final DriftReferences driftReferences;
  private final PipelineSpec.Labels labels;
  private final String flaggedDecision;
  private final Duration windowSize;
  private final Duration windowPeriod;
  private final Duration allowedLateness;
  private final BoundDeadLetters deadLetterBound;
  private final ParseLabels parser;

  private EvaluateDecisions(
      PCollection<Decision> decisions,
      DriftReferences driftReferences,
      PipelineSpec.Labels labels,
      String flaggedDecision,
      Duration windowSize,
      Duration windowPeriod,
      Duration allowedLateness,
      BoundDeadLetters deadLetterBound,
      ParseLabels parser) {
    this.decisions = decisions;
    this.driftReferences = driftReferences;
    this.labels = labels;
    this.flaggedDecision = flaggedDecision;
    this.windowSize = windowSize;
    this.windowPeriod = windowPeriod;
    this.allowedLateness = allowedLateness;
    this.deadLetterBound = deadLetterBound;
    this.parser = parser;
  }

  /** Labels judged against {@code decisions}, as {@code spec}'s labels and windows say. */
  public static EvaluateDecisions of(PCollection<Decision> decisions, PipelineSpec spec) {
    return new EvaluateDecisions(
        Objects.requireNonNull(decisions, "decisions"),
        DriftReferences.of(Map.of()),
        spec.labels(),
        spec.model().positiveLabel(),
        joda(spec.windows().size()),
        joda(spec.windows().period()),
        joda(spec.windows().allowedLateness()),
        BoundDeadLetters.create(),
        ParseLabels.create());
  }

  /** The decisions' windows, when a run's options changed the spec's. */
  public EvaluateDecisions withWindows(Duration size, Duration period, Duration allowedLateness) {
    return new EvaluateDecisions(
        decisions,
        driftReferences,
        labels,
        flaggedDecision,
        size,
        period,
        allowedLateness,
        deadLetterBound,
        parser);
  }

  /**
   * The drift tests' references by model version ({@code name:version}), from the sidecars; a model
   * version without one gets the error test on a baseline from its first evaluations (and no score
   * test).
   */
  public EvaluateDecisions withDriftReferences(DriftReferences references) {
    return new EvaluateDecisions(
        decisions,
        Objects.requireNonNull(references, "references"),
        labels,
        flaggedDecision,
        windowSize,
        windowPeriod,
        allowedLateness,
        deadLetterBound,
        parser);
  }

  /**
   * {@link DetectDrift} as {@code spec}'s {@code labels.drift} sets it, against {@code references}:
   * the score test alone when applied to decisions without evaluations.
   */
  public static DetectDrift detectDrift(PipelineSpec spec, DriftReferences references) {
    return detectDrift(spec.labels().drift(), references, spec.model().positiveLabel());
  }

  private static DetectDrift detectDrift(
      PipelineSpec.Drift drift, DriftReferences references, String flaggedDecision) {
    return DetectDrift.of(references, flaggedDecision)
        .withScoreTest(drift.scoreDelta(), drift.scoreThreshold())
        .withErrorTest(drift.errorDelta(), drift.errorThreshold())
        .withBaselineEvaluations(drift.baselineEvaluations());
  }

  /** The largest payload a label's dead letter keeps. */
  public EvaluateDecisions withDeadLetterBound(BoundDeadLetters deadLetterBound) {
    return new EvaluateDecisions(
        decisions,
        driftReferences,
        labels,
        flaggedDecision,
        windowSize,
        windowPeriod,
        allowedLateness,
        Objects.requireNonNull(deadLetterBound, "deadLetterBound"),
        parser);
  }

  /**
   * How far a label's own time may lie after its ingestion time (its Kafka record's timestamp, its
   * file's last-modified time) before it is dead-lettered as {@code time_in_future}.
   */
  public EvaluateDecisions withMaxFutureSkew(Duration maxFutureSkew) {
    return new EvaluateDecisions(
        decisions,
        driftReferences,
        labels,
        flaggedDecision,
        windowSize,
        windowPeriod,
        allowedLateness,
        deadLetterBound,
        parser.withMaxFutureSkew(maxFutureSkew));
  }

  private static Duration joda(java.time.Duration duration) {
    return Duration.millis(duration.toMillis());
  }

  @Override
  public Result expand(PCollection<RawRecord> raw) {
    Duration horizon = joda(labels.horizon());
    WithFailures.Result<PCollection<Label>, DeadLetter> parsed = raw.apply("ParseLabels", parser);
    DeduplicateLabels.Result deduped =
        parsed.output().apply("DeduplicateLabels", DeduplicateLabels.create().withHorizon(horizon));
    EvaluateLabels.Result judged =
        deduped
            .labels()
            .apply(
                "EvaluateLabels",
                EvaluateLabels.of(decisions, windowSize, windowPeriod, allowedLateness)
                    .withHorizon(horizon)
                    .withPositiveValues(new LinkedHashSet<>(labels.positive())));
    PCollection<EvaluationSummary> summaries =
        judged
            .evaluations()
            .apply(
                "SummarizeEvaluations",
                SummarizeEvaluations.flagging(flaggedDecision)
                    .withWindows(joda(labels.evaluationWindow()), joda(labels.evaluationPeriod()))
                    .withAllowedLateness(joda(labels.evaluationLateness())));
    PCollection<DriftAlarm> drift =
        decisions.apply(
            "DetectDrift",
            detectDrift(labels.drift(), driftReferences, flaggedDecision)
                .withEvaluations(judged.evaluations()));
    return new Result(
        summaries,
        drift,
        judged.evaluations(),
        judged.unmatched(),
        deduped.duplicates(),
        parsed.failures().apply("BoundLabelDeadLetters", deadLetterBound));
  }

  /** The outputs: summaries, the evaluations they sum, and every label not evaluated. */
  public static final class Result implements POutput {
    /** One per evaluation window, pane and model version (and role). */
    public final PCollection<EvaluationSummary> summaries;

    /** One per drift alarm, of the score test or the error test. */
    public final PCollection<DriftAlarm> drift;

    /** One per label and window with a decision in force. */
    public final PCollection<Evaluation> evaluations;

    /** Labels judged with nothing in force, or without a key or event time. */
    public final PCollection<Label> unmatched;

    /** Later copies of a label identity within the horizon. */
    public final PCollection<DuplicateRecord> duplicates;

    /** Label records that are not labels, with their reasons. */
    public final PCollection<DeadLetter> deadLetters;

    Result(
        PCollection<EvaluationSummary> summaries,
        PCollection<DriftAlarm> drift,
        PCollection<Evaluation> evaluations,
        PCollection<Label> unmatched,
        PCollection<DuplicateRecord> duplicates,
        PCollection<DeadLetter> deadLetters) {
      this.summaries = summaries;
      this.drift = drift;
      this.evaluations = evaluations;
      this.unmatched = unmatched;
      this.duplicates = duplicates;
      this.deadLetters = deadLetters;
    }

    @Override
    public Pipeline getPipeline() {
      return summaries.getPipeline();
    }

    @Override
    public Map<TupleTag<?>, PValue> expand() {
      return Map.of(
          new TupleTag<EvaluationSummary>("summaries"), summaries,
          new TupleTag<DriftAlarm>("drift"), drift,
          new TupleTag<Evaluation>("evaluations"), evaluations,
          new TupleTag<Label>("unmatched"), unmatched,
          new TupleTag<DuplicateRecord>("duplicates"), duplicates,
          new TupleTag<DeadLetter>("deadLetters"), deadLetters);
    }

    @Override
    public void finishSpecifyingOutput(
        String transformName, PInput input, PTransform<?, ?> transform) {}
  }
}
