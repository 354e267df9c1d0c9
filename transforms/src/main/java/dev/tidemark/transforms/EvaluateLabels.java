package dev.tidemark.transforms;

import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Evaluation;
import dev.tidemark.transforms.values.Evaluation.Edition;
import dev.tidemark.transforms.values.Label;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.NullableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.state.BagState;
import org.apache.beam.sdk.state.MapState;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.Timer;
import org.apache.beam.sdk.state.TimerSpec;
import org.apache.beam.sdk.state.TimerSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.Flatten;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.DefaultTrigger;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionList;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.TupleTagList;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * Judges each label against the decisions that were acted on for the labelled event: one {@link
 * Evaluation} per window that held the event and has an edition in force ({@link
 * Evaluation.Edition#inForce}: the on-time edition, else the first late one).
 *
 * <p>Semantics, keyed by the decisions' key (a label names it with {@code data.key} and {@code
 * data.eventTime}):
 *
 * <ul>
 *   <li>The windows of a label are those of the features that contain its event time (the sliding
 *       windows of {@code size} every {@code period}, as Beam's {@code SlidingWindows} assigns
 *       them).
 *   <li>A label is judged once none of its windows can change: when the watermark passes the end of
 *       its last window plus the allowed lateness, and not before the label's own time. Labels come
 *       hours after their events, so in a stream that moment has usually passed when the label
 *       arrives; a replay that brings a label before its decisions holds it until then. Each
 *       evaluation carries that moment as its timestamp, so evaluations can be windowed by when the
 *       truth was known.
 *   <li>The decisions of a window are kept for the {@code horizon} after the window's end (default
 *       {@link #DEFAULT_HORIZON}): a label later than that finds none.
 *   <li>A label none of whose windows has an edition in force (its event was too late, or the
 *       horizon passed, or the key or event time is not one the run decided) goes to {@link
 *       Result#unmatched()}, as does a label without a key or event time; it is counted, never
 *       dropped. So every label judged is counted once: {@code labels.matched} (one evaluation or
 *       more), {@code labels.unmatched} or {@code labels.withoutKeyOrTime}.
 * </ul>
 *
 * <p>Input: labels, each copy once (deduplicate them first, as events are). The decisions are given
 * at construction; only their scored on-time and late editions are used.
 */
public final class EvaluateLabels extends PTransform<PCollection<Label>, EvaluateLabels.Result> {
  /** How long a window's decisions wait for labels after the window's end. */
  public static final Duration DEFAULT_HORIZON = Duration.standardDays(7);

  static final String EVALUATIONS = TidemarkMetrics.LABELS_EVALUATIONS;
  static final String UNMATCHED = TidemarkMetrics.LABELS_UNMATCHED;
  static final String MATCHED = TidemarkMetrics.LABELS_MATCHED;
  static final String WITHOUT_KEY_OR_TIME = TidemarkMetrics.LABELS_WITHOUT_KEY_OR_TIME;

  private final PCollection<Decision> decisions;
  private final Duration size;
  private final Duration period;
  private final Duration allowedLateness;
  private final Duration horizon;
  private final Set<String> positiveValues;

  private EvaluateLabels(
      PCollection<Decision> decisions,
      Duration size,
      Duration period,
      Duration allowedLateness,
      Duration horizon,
      Set<String> positiveValues) {
    this.decisions = decisions;
    this.size = size;
    this.period = period;
    this.allowedLateness = allowedLateness;
    this.horizon = horizon;
    this.positiveValues = positiveValues;
  }

  /**
   * Labels judged against {@code decisions}, whose windows are {@code size} long every {@code
   * period} with {@code allowedLateness}, as the features that made them; positive values {@code
   * fraud} and {@code takeover}.
   */
  public static EvaluateLabels of(
      PCollection<Decision> decisions, Duration size, Duration period, Duration allowedLateness) {
    if (size.getMillis() <= 0 || period.getMillis() <= 0 || period.isLongerThan(size)) {
      throw new IllegalArgumentException(
          "windows of "
              + size
              + " every "
              + period
              + ": both positive, the period at most the size");
    }
    if (allowedLateness.getMillis() < 0) {
      throw new IllegalArgumentException("negative allowed lateness " + allowedLateness);
    }
    return new EvaluateLabels(
        Objects.requireNonNull(decisions, "decisions"),
        size,
        period,
        allowedLateness,
        DEFAULT_HORIZON,
        new TreeSet<>(List.of("fraud", "takeover")));
  }

  /** How long after its end a window's decisions are kept for labels; longer than the lateness. */
  public EvaluateLabels withHorizon(Duration horizon) {
    if (!horizon.isLongerThan(allowedLateness)) {
      throw new IllegalArgumentException(
          "the label horizon "
              + horizon
              + " must be longer than the allowed lateness "
              + allowedLateness
              + ": a window's decisions must outlive its last pane");
    }
    return new EvaluateLabels(decisions, size, period, allowedLateness, horizon, positiveValues);
  }

  /** The label values that mean the positive class (what the model should flag). */
  public EvaluateLabels withPositiveValues(Set<String> values) {
    if (values.isEmpty()) {
      throw new IllegalArgumentException("no positive label value");
    }
    return new EvaluateLabels(
        decisions, size, period, allowedLateness, horizon, new TreeSet<>(values));
  }

  /** Evaluations, and the labels that none could be made for. */
  public static final class Result extends PairedOutput<Evaluation, Label> {
    Result(PCollectionTuple outputs) {
      super(outputs, EVALUATED, UNMATCHED_LABELS);
    }

    /** One per label and window with an edition in force. */
    public PCollection<Evaluation> evaluations() {
      return main();
    }

    /** Labels with no window in force, or without a key or event time. */
    public PCollection<Label> unmatched() {
      return audit();
    }
  }

  private static final TupleTag<KV<String, KV<Edition, Label>>> KEYED = new TupleTag<>() {};
  private static final TupleTag<Label> UNKEYED = new TupleTag<>() {};
  private static final TupleTag<Evaluation> EVALUATED = new TupleTag<>() {};
  private static final TupleTag<Label> UNEVALUATED = new TupleTag<>() {};
  private static final TupleTag<Label> UNMATCHED_LABELS = new TupleTag<>() {};

  @Override
  public Result expand(PCollection<Label> labels) {
    KvCoder<String, KV<Edition, Label>> coder =
        KvCoder.of(
            StringUtf8Coder.of(),
            KvCoder.of(
                NullableCoder.of(Evaluation.EditionCoder.of()),
                NullableCoder.of(Label.LabelCoder.of())));
    PCollection<KV<String, KV<Edition, Label>>> editions =
        decisions
            .apply("UnwindowDecisions", global())
            .apply("EditionsInForce", ParDo.of(new EditionsFn()))
            .setCoder(coder);
    PCollectionTuple keyed =
        labels
            .apply("UnwindowLabels", global())
            .apply(
                "KeyLabels",
                ParDo.of(new KeyLabelsFn()).withOutputTags(KEYED, TupleTagList.of(UNKEYED)));
    PCollectionTuple judged =
        PCollectionList.of(editions)
            .and(keyed.get(KEYED).setCoder(coder))
            .apply("EditionsAndLabels", Flatten.pCollections())
            .setCoder(coder)
            .apply(
                "JudgeLabels",
                ParDo.of(
                        new JudgeFn(
                            size.getMillis(),
                            period.getMillis(),
                            allowedLateness.getMillis(),
                            horizon.getMillis(),
                            positiveValues))
                    .withOutputTags(EVALUATED, TupleTagList.of(UNEVALUATED)));
    PCollection<Label> unmatched =
        PCollectionList.of(keyed.get(UNKEYED).setCoder(Label.LabelCoder.of()))
            .and(judged.get(UNEVALUATED).setCoder(Label.LabelCoder.of()))
            .apply("CollectUnmatched", Flatten.pCollections());
    return new Result(
        PCollectionTuple.of(
                EVALUATED, judged.get(EVALUATED).setCoder(Evaluation.EvaluationCoder.of()))
            .and(UNMATCHED_LABELS, unmatched));
  }

  private static <T> Window<T> global() {
    return Window.<T>into(new GlobalWindows())
        .triggering(DefaultTrigger.of())
        .withAllowedLateness(Duration.ZERO)
        .discardingFiredPanes();
  }

  /** Scored on-time and late editions, keyed by their key; the rest cannot be in force. */
  static final class EditionsFn extends DoFn<Decision, KV<String, KV<Edition, Label>>> {
    @ProcessElement
    public void processElement(
        @Element Decision decision, OutputReceiver<KV<String, KV<Edition, Label>>> out) {
      if (Edition.counts(decision.paneTiming()) && decision.score() != null) {
        out.output(KV.of(decision.key(), KV.of(Edition.of(decision), null)));
      }
    }
  }

  /** Labels keyed by the key they name; one without a key or event time cannot be judged. */
  static final class KeyLabelsFn extends DoFn<Label, KV<String, KV<Edition, Label>>> {
    private final Counter withoutKeyOrTime =
        Metrics.counter(TidemarkMetrics.NAMESPACE, WITHOUT_KEY_OR_TIME);

    @ProcessElement
    public void processElement(@Element Label label, MultiOutputReceiver out) {
      String key = label.key();
      if (key == null || label.eventTime() == null) {
        withoutKeyOrTime.inc();
        out.get(UNKEYED).output(label);
        return;
      }
      out.get(KEYED).output(KV.of(key, KV.of(null, label)));
    }
  }

  /**
   * Per key: the edition in force of each window (map state by window start), the labels waiting
   * for their windows to be final (a bag), a timer that judges them, and a timer that forgets a
   * window's edition once the horizon has passed. The judging timer holds the output watermark at
   * the earliest waiting label's moment, at which its evaluations are emitted; the forgetting timer
   * holds nothing.
   */
  static final class JudgeFn extends DoFn<KV<String, KV<Edition, Label>>, Evaluation> {
    private static final String EDITIONS = "editions";
    private static final String WAITING = "waiting";
    private static final String NEXT_JUDGING = "nextJudging";
    private static final String NEXT_FORGETTING = "nextForgetting";
    private static final String JUDGE = "judge";
    private static final String FORGET = "forget";

    private final long size;
    private final long period;
    private final long allowedLateness;
    private final long horizon;
    private final Set<String> positiveValues;

    private final Counter evaluations = Metrics.counter(TidemarkMetrics.NAMESPACE, EVALUATIONS);
    private final Counter unmatched = Metrics.counter(TidemarkMetrics.NAMESPACE, UNMATCHED);
    private final Counter matched = Metrics.counter(TidemarkMetrics.NAMESPACE, MATCHED);

    @StateId(EDITIONS)
    private final StateSpec<MapState<Long, Edition>> editionsSpec =
        StateSpecs.map(VarLongCoder.of(), Evaluation.EditionCoder.of());

    @StateId(WAITING)
    private final StateSpec<BagState<Label>> waitingSpec = StateSpecs.bag(Label.LabelCoder.of());

    @StateId(NEXT_JUDGING)
    private final StateSpec<ValueState<Long>> nextJudgingSpec = StateSpecs.value(VarLongCoder.of());

    @StateId(NEXT_FORGETTING)
    private final StateSpec<ValueState<Long>> nextForgettingSpec =
        StateSpecs.value(VarLongCoder.of());

    @TimerId(JUDGE)
    private final TimerSpec judgeSpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

    @TimerId(FORGET)
    private final TimerSpec forgetSpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

    JudgeFn(long size, long period, long allowedLateness, long horizon, Set<String> positive) {
      this.size = size;
      this.period = period;
      this.allowedLateness = allowedLateness;
      this.horizon = horizon;
      this.positiveValues = Set.copyOf(positive);
    }

    @ProcessElement
    public void processElement(
        @Element KV<String, KV<Edition, Label>> element,
        @Timestamp Instant timestamp,
        @StateId(EDITIONS) MapState<Long, Edition> editions,
        @StateId(WAITING) BagState<Label> waiting,
        @StateId(NEXT_JUDGING) ValueState<Long> nextJudging,
        @StateId(NEXT_FORGETTING) ValueState<Long> nextForgetting,
        @TimerId(JUDGE) Timer judge,
        @TimerId(FORGET) Timer forget) {
      Edition edition = element.getValue().getKey();
      if (edition != null) {
        long start = edition.windowStart().getMillis();
        Edition kept = editions.get(start).read();
        Edition inForce = kept == null ? edition : Edition.inForce(kept, edition);
        if (!inForce.equals(kept)) {
          editions.put(start, inForce);
        }
        long forgetAt = capped(edition.windowEnd().getMillis() + horizon);
        Long next = nextForgetting.read();
        if (next == null || forgetAt < next) {
          forget.withNoOutputTimestamp().set(new Instant(forgetAt));
          nextForgetting.write(forgetAt);
        }
      }
      Label label = element.getValue().getValue();
      if (label != null) {
        waiting.add(label);
        // Not before the element's own timestamp, should its source have stamped it after the
        // label's time: a timer may not hold the output behind its element.
        long judgeAt = Math.max(judgeAt(label), timestamp.getMillis());
        Long next = nextJudging.read();
        if (next == null || judgeAt < next) {
          judge.set(new Instant(judgeAt));
          nextJudging.write(judgeAt);
        }
      }
    }

    @OnTimer(JUDGE)
    public void onJudge(
        OnTimerContext context,
        @StateId(EDITIONS) MapState<Long, Edition> editions,
        @StateId(WAITING) BagState<Label> waiting,
        @StateId(NEXT_JUDGING) ValueState<Long> nextJudging,
        @TimerId(JUDGE) Timer judge) {
      long now = context.timestamp().getMillis();
      List<Label> later = new ArrayList<>();
      long next = Long.MAX_VALUE;
      for (Label label : waiting.read()) {
        long judgeAt = judgeAt(label);
        if (judgeAt > now) {
          later.add(label);
          next = Math.min(next, judgeAt);
          continue;
        }
        boolean positive = positiveValues.contains(label.value());
        boolean matched = false;
        for (long start : windowStarts(label.eventTime().getMillis())) {
          Edition edition = editions.get(start).read();
          if (edition != null) {
            matched = true;
            evaluations.inc();
            context.output(EVALUATED, new Evaluation(label, positive, edition));
          }
        }
        if (matched) {
          this.matched.inc();
        } else {
          unmatched.inc();
          context.output(UNEVALUATED, label);
        }
      }
      waiting.clear();
      later.forEach(waiting::add);
      if (later.isEmpty()) {
        nextJudging.clear();
      } else {
        judge.set(new Instant(next));
        nextJudging.write(next);
      }
    }

    @OnTimer(FORGET)
    public void onForget(
        OnTimerContext context,
        @StateId(EDITIONS) MapState<Long, Edition> editions,
        @StateId(NEXT_FORGETTING) ValueState<Long> nextForgetting,
        @TimerId(FORGET) Timer forget) {
      long now = context.timestamp().getMillis();
      long next = Long.MAX_VALUE;
      List<Long> expired = new ArrayList<>();
      for (Map.Entry<Long, Edition> entry : editions.entries().read()) {
        long forgetAt = capped(entry.getValue().windowEnd().getMillis() + horizon);
        if (forgetAt <= now) {
          expired.add(entry.getKey());
        } else {
          next = Math.min(next, forgetAt);
        }
      }
      expired.forEach(editions::remove);
      if (next == Long.MAX_VALUE) {
        nextForgetting.clear();
      } else {
        forget.withNoOutputTimestamp().set(new Instant(next));
        nextForgetting.write(next);
      }
    }

    /**
     * When a label can be judged: once its last window can fire no more panes, and not before its
     * own time (the label's timestamp, which its evaluations must not precede).
     */
    long judgeAt(Label label) {
      long eventTime = label.eventTime().getMillis();
      long lastEnd = lastStart(eventTime) + size;
      return capped(Math.max(label.time().getMillis(), lastEnd + allowedLateness));
    }

    /** The start of the last window containing {@code time}, as Beam's SlidingWindows has it. */
    long lastStart(long time) {
      return time - Math.floorMod(time, period);
    }

    /** Starts of every window containing {@code time}, latest first. */
    List<Long> windowStarts(long time) {
      List<Long> starts = new ArrayList<>();
      for (long start = lastStart(time); start > time - size; start -= period) {
        starts.add(start);
      }
      return starts;
    }

    private static long capped(long millis) {
      return Math.min(millis, GlobalWindow.INSTANCE.maxTimestamp().getMillis());
    }
  }
}
