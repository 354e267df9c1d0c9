package dev.tidemark.transforms;

import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Evaluation;
import dev.tidemark.transforms.values.EvaluationCounts;
import dev.tidemark.transforms.values.EvaluationSummary;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderRegistry;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.sdk.transforms.Combine.CombineFn;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.AfterPane;
import org.apache.beam.sdk.transforms.windowing.AfterWatermark;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.transforms.windowing.SlidingWindows;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Duration;

/**
 * Online evaluation per model version: {@link Evaluation}s in rolling windows of the time they were
 * judged at (sliding windows of {@code size} every {@code period}), summed per model version into
 * {@link EvaluationSummary EvaluationSummaries} (precision, recall and review rate at the
 * threshold, label delay, calibration by score bin). A decision scored beside a shadow model counts
 * for the shadow model too, with the shadow's score and verdict.
 *
 * <p>Panes: one when the watermark passes the window's end, then one per late evaluation within the
 * allowed lateness, accumulating (each pane holds the whole window so far). The on-time pane fires
 * only with evaluations in it ({@code OnTimeBehavior.FIRE_IF_NON_EMPTY}): a pane without labels
 * says nothing, and with Beam's default the FlinkRunner at parallelism 2 emitted one per key beside
 * the on-time pane that held the window's labels.
 */
public final class SummarizeEvaluations
    extends PTransform<PCollection<Evaluation>, PCollection<EvaluationSummary>> {
  public static final Duration DEFAULT_SIZE = Duration.standardDays(1);
  public static final Duration DEFAULT_PERIOD = Duration.standardHours(1);

  private final Duration size;
  private final Duration period;
  private final Duration allowedLateness;
  private final String flaggedDecision;

  private SummarizeEvaluations(
      Duration size, Duration period, Duration allowedLateness, String flaggedDecision) {
    this.size = size;
    this.period = period;
    this.allowedLateness = allowedLateness;
    this.flaggedDecision = flaggedDecision;
  }

  /**
   * Day-long windows every hour, no allowed lateness; {@code flaggedDecision} is the verdict at or
   * above the threshold ({@code review} for payments).
   */
  public static SummarizeEvaluations flagging(String flaggedDecision) {
    return new SummarizeEvaluations(
        DEFAULT_SIZE,
        DEFAULT_PERIOD,
        Duration.ZERO,
        Objects.requireNonNull(flaggedDecision, "flaggedDecision"));
  }

  /** Rolling windows of {@code size} every {@code period}. */
  public SummarizeEvaluations withWindows(Duration size, Duration period) {
    if (size.getMillis() <= 0 || period.getMillis() <= 0 || period.isLongerThan(size)) {
      throw new IllegalArgumentException(
          "evaluation windows of "
              + size
              + " every "
              + period
              + ": both positive, the period at most the size");
    }
    return new SummarizeEvaluations(size, period, allowedLateness, flaggedDecision);
  }

  /** How long after a window's end a late evaluation still updates it. */
  public SummarizeEvaluations withAllowedLateness(Duration allowedLateness) {
    if (allowedLateness.getMillis() < 0) {
      throw new IllegalArgumentException("negative allowed lateness " + allowedLateness);
    }
    return new SummarizeEvaluations(size, period, allowedLateness, flaggedDecision);
  }

  @Override
  public PCollection<EvaluationSummary> expand(PCollection<Evaluation> evaluations) {
    return evaluations
        .apply("CountByModel", ParDo.of(new CountByModelFn(flaggedDecision)))
        .setCoder(Evaluation.EvaluationCoder.of())
        .apply(
            "LabelTimeWindows",
            Window.<Evaluation>into(SlidingWindows.of(size).every(period))
                .triggering(
                    AfterWatermark.pastEndOfWindow()
                        .withLateFirings(AfterPane.elementCountAtLeast(1)))
                .withAllowedLateness(allowedLateness)
                .withOnTimeBehavior(Window.OnTimeBehavior.FIRE_IF_NON_EMPTY)
                .accumulatingFiredPanes())
        .apply("ByModelVersion", ParDo.of(new ByModelFn(flaggedDecision)))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), EvaluationCounts.CountsCoder.of()))
        .apply("SumCounts", Combine.perKey(new SumCountsFn()))
        .apply("Summaries", ParDo.of(new SummaryFn()))
        .setCoder(EvaluationSummary.SummaryCoder.of());
  }

  static final char SEPARATOR = '\u0000';

  /** The key of a model version in a role: role, name and version. */
  static String modelKey(String role, String name, String version) {
    return role + SEPARATOR + name + SEPARATOR + version;
  }

  /** One judged decision's counts under its model, and under its shadow model if it had one. */
  static final class ByModelFn extends DoFn<Evaluation, KV<String, EvaluationCounts>> {
    private final String flaggedDecision;

    ByModelFn(String flaggedDecision) {
      this.flaggedDecision = flaggedDecision;
    }

    @ProcessElement
    public void processElement(
        @Element Evaluation evaluation, OutputReceiver<KV<String, EvaluationCounts>> out) {
      long delay = evaluation.labelDelayMillis();
      for (Verdict verdict : verdicts(evaluation, flaggedDecision)) {
        out.output(
            KV.of(
                modelKey(verdict.role(), verdict.modelName(), verdict.modelVersion()),
                EvaluationCounts.of(
                    verdict.score(), verdict.flagged(), evaluation.positive(), delay)));
      }
    }
  }

  /** What one model in one role made of the judged decision. */
  record Verdict(
      String role, String modelName, String modelVersion, double score, boolean flagged) {}

  /**
   * The verdicts an evaluation judges: the deciding model's, and its shadow model's when the
   * decision was scored beside one.
   */
  static List<Verdict> verdicts(Evaluation evaluation, String flaggedDecision) {
    Evaluation.Edition edition = evaluation.edition();
    Verdict deciding =
        new Verdict(
            EvaluationSummary.DECIDING,
            edition.modelName(),
            edition.modelVersion(),
            edition.score(),
            flaggedDecision.equals(edition.decision()));
    Decision.Shadow shadow = edition.shadow();
    if (shadow == null) {
      return List.of(deciding);
    }
    return List.of(
        deciding,
        new Verdict(
            EvaluationSummary.SHADOW,
            shadow.model().name(),
            shadow.model().version(),
            shadow.score(),
            flaggedDecision.equals(shadow.decision())));
  }

  /**
   * Counts each evaluation under its model version and role, over the whole run ({@link
   * TidemarkMetrics#EVALUATIONS_BY_MODEL_PREFIX}): the run's summary reads them. Before the
   * windows, so each evaluation counts once.
   */
  static final class CountByModelFn extends DoFn<Evaluation, Evaluation> {
    private final String flaggedDecision;
    private transient Map<String, Counter> counters;

    CountByModelFn(String flaggedDecision) {
      this.flaggedDecision = flaggedDecision;
    }

    @Setup
    public void setup() {
      counters = new HashMap<>();
    }

    @ProcessElement
    public void processElement(@Element Evaluation evaluation, OutputReceiver<Evaluation> out) {
      boolean positive = evaluation.positive();
      for (Verdict verdict : verdicts(evaluation, flaggedDecision)) {
        String prefix =
            TidemarkMetrics.EVALUATIONS_BY_MODEL_PREFIX
                + verdict.role()
                + "/"
                + verdict.modelName()
                + ":"
                + verdict.modelVersion()
                + "/";
        counter(prefix + "labels").inc();
        if (positive) {
          counter(prefix + "positives").inc();
        }
        if (verdict.flagged()) {
          counter(prefix + "flagged").inc();
        }
        if (verdict.flagged() && positive) {
          counter(prefix + "truePositives").inc();
        }
      }
      out.output(evaluation);
    }

    private Counter counter(String name) {
      return counters.computeIfAbsent(name, TidemarkMetrics::counter);
    }
  }

  /** Sums counts. */
  static final class SumCountsFn
      extends CombineFn<EvaluationCounts, EvaluationCounts, EvaluationCounts> {
    @Override
    public EvaluationCounts createAccumulator() {
      return new EvaluationCounts();
    }

    @Override
    public EvaluationCounts addInput(EvaluationCounts accumulator, EvaluationCounts input) {
      return accumulator.merge(input);
    }

    @Override
    public EvaluationCounts mergeAccumulators(Iterable<EvaluationCounts> accumulators) {
      EvaluationCounts sum = new EvaluationCounts();
      for (EvaluationCounts counts : accumulators) {
        sum.merge(counts);
      }
      return sum;
    }

    @Override
    public EvaluationCounts extractOutput(EvaluationCounts accumulator) {
      return accumulator;
    }

    @Override
    public Coder<EvaluationCounts> getAccumulatorCoder(
        CoderRegistry registry, Coder<EvaluationCounts> inputCoder) {
      return EvaluationCounts.CountsCoder.of();
    }
  }

  /** A model version's counts in its window and pane. */
  static final class SummaryFn extends DoFn<KV<String, EvaluationCounts>, EvaluationSummary> {
    @ProcessElement
    public void processElement(
        @Element KV<String, EvaluationCounts> element,
        BoundedWindow window,
        PaneInfo pane,
        OutputReceiver<EvaluationSummary> out) {
      String[] parts = element.getKey().split(String.valueOf(SEPARATOR), 3);
      IntervalWindow interval = (IntervalWindow) window;
      out.output(
          new EvaluationSummary(
              parts[0],
              parts[1],
              parts[2],
              interval.start(),
              interval.end(),
              pane.getTiming().name(),
              pane.getIndex(),
              element.getValue()));
    }
  }
}
