package dev.tidemark.transforms;

import com.google.auto.value.AutoValue;
import dev.tidemark.spec.FieldValues;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecFeaturesFn;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.Event;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.TooLateRecord;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import org.apache.beam.sdk.coders.InstantCoder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.NullableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.sdk.transforms.Combine.CombineFn;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.Flatten;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.SimpleFunction;
import org.apache.beam.sdk.transforms.windowing.AfterPane;
import org.apache.beam.sdk.transforms.windowing.AfterProcessingTime;
import org.apache.beam.sdk.transforms.windowing.AfterWatermark;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.transforms.windowing.SlidingWindows;
import org.apache.beam.sdk.transforms.windowing.Trigger;
import org.apache.beam.sdk.transforms.windowing.Trigger.OnceTrigger;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.transforms.windowing.WindowFn;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionList;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.TupleTagList;
import org.apache.beam.sdk.values.WindowingStrategy.AccumulationMode;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * Per-key features in event-time sliding windows, with explicit triggers, allowed lateness and
 * too-late capture.
 *
 * <p>The four windowing decisions, all explicit: {@code SlidingWindows.of(size).every(period)}
 * (fixed windows when they are equal); a trigger {@code AfterWatermark.pastEndOfWindow()} with
 * early firings a processing-time delay after the first element of a pane (or on every element for
 * a zero delay, or none) and late firings likewise; {@code withAllowedLateness(lateness)}; and
 * accumulating (default) or discarding panes. Output: one {@code KV<key, Features>} per fired pane
 * per key and window, in that window, with the pane's {@code PaneInfo}.
 *
 * <p>The features are a spec's ({@link #withFeatures}; by default the bundled payments spec's),
 * computed by {@link SpecFeaturesFn} over the fields of each event; {@link #withFeatureFn} computes
 * one named feature with a {@code CombineFn} of the caller's.
 *
 * <p>Too-late capture: Beam drops data behind window end plus allowed lateness and only bumps its
 * {@code droppedDueToLateness} counter. Here every event passes {@link GateTooLateFn} first, which
 * diverts each window the event is too late for to {@link Result#tooLate()} (with the missed
 * windows; an event that misses only some of its sliding windows is {@code partiallyLate} and still
 * counts in the others) and holds the watermark so that Beam never drops what it passes. Every
 * unique event is therefore either windowed or too late, and the runner's own drop counters stay at
 * zero. Cost: one extra keyed shuffle onto {@link #withGateShards gate shards} (default one; the
 * pipelines use the job's parallelism), and a watermark at the windowing step that trails the
 * source's by up to one window period.
 *
 * <p>A bounded input (a backfill) skips the gate: its watermark stays at the minimum until the
 * input is exhausted, and every element waiting at a step holds that step's watermark at or below
 * its own timestamp (no step here moves a timestamp back), so no window of any event can be behind
 * the watermark and the gate would pass everything. {@link Result#tooLate()} is then empty, and the
 * shuffle and sort onto one gate key, a serial step, are saved.
 *
 * <p>Sliding windows are built from slices by default ({@link Aggregation#SLICES}): each event is
 * combined once, into its slice (a fixed window of one period), and each window from the
 * accumulators of its slices, instead of combining each event once per window: {@link
 * WindowsFromSlices} for a bounded input (which then gets exactly one on-time pane per key and
 * window on every runner; the one-stage combine fires early panes for a bounded input on runners
 * that run its triggers), {@link PanesFromSlices} for a stream with accumulating panes, whose
 * on-time and final panes equal the one-stage combine's (docs/sliding-windows.md).
 *
 * <p>Input must be in the global window, timestamped with event time (the output of {@link
 * DeduplicateEvents}).
 *
 * <pre>{@code
 * ComputeFeatures.Result features = unique.apply("ComputeFeatures",
 *     ComputeFeatures.of(Duration.standardMinutes(5), Duration.standardSeconds(30))
 *         .withEarlyFiringDelay(Duration.standardSeconds(10))
 *         .withAllowedLateness(Duration.standardHours(1)));
 * }</pre>
 */
@AutoValue
public abstract class ComputeFeatures
    extends PTransform<PCollection<Event>, ComputeFeatures.Result> {

  public static final Duration DEFAULT_WINDOW_SIZE = Duration.standardMinutes(5);
  public static final Duration DEFAULT_WINDOW_PERIOD = Duration.standardSeconds(30);
  public static final Duration DEFAULT_EARLY_FIRING_DELAY = Duration.standardSeconds(10);
  public static final Duration DEFAULT_LATE_FIRING_DELAY = Duration.ZERO;
  public static final Duration DEFAULT_ALLOWED_LATENESS = Duration.standardHours(1);
  public static final AccumulationMode DEFAULT_ACCUMULATION_MODE =
      AccumulationMode.ACCUMULATING_FIRED_PANES;
  public static final int DEFAULT_GATE_SHARDS = 1;

  /**
   * How sliding windows (a period shorter than the size) are aggregated. Fixed windows are always
   * one combine per window.
   */
  public enum Aggregation {
    /**
     * Each event combined once, into its slice (a fixed window of one period), and each window
     * merged from its slices: {@link WindowsFromSlices} for a bounded input, {@link
     * PanesFromSlices} for a stream with accumulating panes. A stream with discarding panes keeps
     * the one-stage combine: a slice's delta would reach its windows when the slice fires, not when
     * they do.
     */
    SLICES,
    /** Beam's {@code SlidingWindows} and one combine: each event combined once per window. */
    ONE_STAGE
  }

  public static final Aggregation DEFAULT_AGGREGATION = Aggregation.SLICES;

  abstract Duration size();

  abstract Duration period();

  /** Null: no early firings. */
  abstract @Nullable Duration earlyFiringDelay();

  abstract Duration lateFiringDelay();

  abstract Duration allowedLateness();

  /** Whether each pane holds the whole window so far or only what is new since the last. */
  public abstract AccumulationMode accumulationMode();

  abstract int gateShards();

  abstract Aggregation aggregation();

  /** What each pane's features are computed by. */
  abstract FeaturesFn featuresFn();

  /** The name of the key field, for the too-late records. */
  abstract String keyName();

  abstract Builder toBuilder();

  @AutoValue.Builder
  abstract static class Builder {
    abstract Builder setSize(Duration size);

    abstract Builder setPeriod(Duration period);

    abstract Builder setEarlyFiringDelay(@Nullable Duration delay);

    abstract Builder setLateFiringDelay(Duration delay);

    abstract Builder setAllowedLateness(Duration lateness);

    abstract Builder setAccumulationMode(AccumulationMode mode);

    abstract Builder setGateShards(int shards);

    abstract Builder setAggregation(Aggregation aggregation);

    abstract Builder setFeaturesFn(FeaturesFn fn);

    abstract Builder setKeyName(String name);

    abstract ComputeFeatures build();
  }

  /**
   * The windows a spec's {@code windows} section declares: size and period, early firings after
   * {@code earlyFiring} (none when it is null), late firings, allowed lateness and accumulation.
   * The gate's shards keep their default ({@link #withGateShards}).
   */
  public static ComputeFeatures of(PipelineSpec.Windows windows) {
    ComputeFeatures features =
        of(joda(windows.size()), joda(windows.period()))
            .withLateFiringDelay(joda(windows.lateFiring()))
            .withAllowedLateness(joda(windows.allowedLateness()))
            .withAccumulationMode(
                windows.accumulation() == PipelineSpec.Accumulation.DISCARDING
                    ? AccumulationMode.DISCARDING_FIRED_PANES
                    : AccumulationMode.ACCUMULATING_FIRED_PANES);
    return windows.earlyFiring() == null
        ? features.withoutEarlyFirings()
        : features.withEarlyFiringDelay(joda(windows.earlyFiring()));
  }

  private static Duration joda(java.time.Duration duration) {
    return Duration.millis(duration.toMillis());
  }

  /** Sliding windows of {@code size} starting every {@code period}; the other settings default. */
  public static ComputeFeatures of(Duration size, Duration period) {
    if (size == null || size.getMillis() <= 0) {
      throw new IllegalArgumentException(
          "window size must be a positive duration such as PT5M, got " + size + " (--windowSize)");
    }
    if (period == null || period.getMillis() <= 0) {
      throw new IllegalArgumentException(
          "window period must be a positive duration such as PT30S, got "
              + period
              + " (--windowPeriod)");
    }
    if (period.isLongerThan(size)) {
      throw new IllegalArgumentException(
          "window period "
              + period
              + " is longer than window size "
              + size
              + ": events between windows would be lost; set --windowPeriod to at most"
              + " --windowSize (equal gives fixed windows)");
    }
    if (size.getMillis() % period.getMillis() != 0) {
      throw new IllegalArgumentException(
          "window size "
              + size
              + " is not a whole multiple of period "
              + period
              + "; choose a period that divides the size (e.g. PT5M every PT30S)");
    }
    return new AutoValue_ComputeFeatures.Builder()
        .setSize(size)
        .setPeriod(period)
        .setEarlyFiringDelay(DEFAULT_EARLY_FIRING_DELAY)
        .setLateFiringDelay(DEFAULT_LATE_FIRING_DELAY)
        .setAllowedLateness(DEFAULT_ALLOWED_LATENESS)
        .setAccumulationMode(DEFAULT_ACCUMULATION_MODE)
        .setGateShards(DEFAULT_GATE_SHARDS)
        .setAggregation(DEFAULT_AGGREGATION)
        .setFeaturesFn(new FeaturesFn(SpecFeaturesFn.of(BundledPayments.SPEC)))
        .setKeyName(BundledPayments.SPEC.events().key())
        .build();
  }

  /** The bundled payments spec, read once: the default features. */
  private static final class BundledPayments {
    static final PipelineSpec SPEC = SpecLoader.loadBundled(SpecLoader.DEFAULT_BUNDLED);
  }

  /** The features {@code spec} declares, over the fields of its events. */
  public ComputeFeatures withFeatures(PipelineSpec spec) {
    return toBuilder()
        .setFeaturesFn(new FeaturesFn(SpecFeaturesFn.of(spec)))
        .setKeyName(spec.events().key())
        .build();
  }

  /**
   * The feature {@code name} computed by {@code fn} instead of its spec's aggregation (or for a
   * feature the spec declares {@code custom}); see {@link SpecFeaturesFn#withFeatureFn}.
   */
  public ComputeFeatures withFeatureFn(
      String name, CombineFn<FieldValues, ?, ? extends Number> fn) {
    return toBuilder()
        .setFeaturesFn(new FeaturesFn(featuresFn().combine().withFeatureFn(name, fn)))
        .build();
  }

  /** Early firings this long after the first element of a pane; zero fires on every element. */
  public ComputeFeatures withEarlyFiringDelay(Duration delay) {
    checkDelay(delay, "early firing delay", "--earlyFiringDelay");
    return toBuilder().setEarlyFiringDelay(delay).build();
  }

  /** No early (speculative) panes: only on-time and late ones. */
  public ComputeFeatures withoutEarlyFirings() {
    return toBuilder().setEarlyFiringDelay(null).build();
  }

  /** Late firings this long after the first late element of a pane; zero fires on every one. */
  public ComputeFeatures withLateFiringDelay(Duration delay) {
    checkDelay(delay, "late firing delay", "--lateFiringDelay");
    return toBuilder().setLateFiringDelay(delay).build();
  }

  /** How long after the end of a window late events still revise it. */
  public ComputeFeatures withAllowedLateness(Duration lateness) {
    if (lateness == null || lateness.getMillis() < 0) {
      throw new IllegalArgumentException(
          "allowed lateness must be zero or positive, such as PT1H, got "
              + lateness
              + "; set it with withAllowedLateness(...) or --allowedLateness");
    }
    return toBuilder().setAllowedLateness(lateness).build();
  }

  /** Whether each pane carries everything so far (accumulating) or only what is new. */
  public ComputeFeatures withAccumulationMode(AccumulationMode mode) {
    if (mode != AccumulationMode.ACCUMULATING_FIRED_PANES
        && mode != AccumulationMode.DISCARDING_FIRED_PANES) {
      throw new IllegalArgumentException(
          "accumulation mode must be ACCUMULATING or DISCARDING, got "
              + mode
              + " (--accumulationMode)");
    }
    return toBuilder().setAccumulationMode(mode).build();
  }

  /**
   * How many keys the too-late gate spreads over (its parallelism). Events go to a shard by
   * identity; every shard also hears of the window periods the other shards' events fall in, so
   * each moves its bound at the window ends of the whole stream, and a shard without events of its
   * own does not hold the watermark back. A job restored from a savepoint must keep the count it
   * was started with: a shard the restored job no longer uses releases its hold, but a shard it did
   * not use before has no bound and would pass events Beam may drop.
   */
  public ComputeFeatures withGateShards(int shards) {
    if (shards < 1) {
      throw new IllegalArgumentException(
          "gate shards must be at least 1, got " + shards + " (--gateShards)");
    }
    return toBuilder().setGateShards(shards).build();
  }

  /** How sliding windows are aggregated: from slices (the default) or one combine per window. */
  public ComputeFeatures withAggregation(Aggregation aggregation) {
    if (aggregation == null) {
      throw new IllegalArgumentException(
          "aggregation must be SLICES or ONE_STAGE (--windowAggregation)");
    }
    return toBuilder().setAggregation(aggregation).build();
  }

  private static void checkDelay(Duration delay, String what, String flag) {
    if (delay == null || delay.getMillis() < 0) {
      throw new IllegalArgumentException(
          what + " must be zero or positive, such as PT10S, got " + delay + " (" + flag + ")");
    }
  }

  /** Zero delay: fire on every element; otherwise a processing-time delay after the first. */
  private static OnceTrigger firing(Duration delay) {
    return delay.getMillis() == 0
        ? AfterPane.elementCountAtLeast(1)
        : AfterProcessingTime.pastFirstElementInPane().plusDelayOf(delay);
  }

  /** The trigger: watermark, with the configured early and late firings. */
  Trigger trigger() {
    return earlyFiringDelay() == null
        ? AfterWatermark.pastEndOfWindow().withLateFirings(firing(lateFiringDelay()))
        : AfterWatermark.pastEndOfWindow()
            .withEarlyFirings(firing(earlyFiringDelay()))
            .withLateFirings(firing(lateFiringDelay()));
  }

  @Override
  public Result expand(PCollection<Event> events) {
    if (!(events.getWindowingStrategy().getWindowFn() instanceof GlobalWindows)) {
      throw new IllegalArgumentException(
          "ComputeFeatures windows its input itself; give it events in the global window");
    }
    SlidingWindows windowFn = SlidingWindows.of(size()).every(period());
    KvCoder<String, FieldValues> inputCoder =
        KvCoder.of(StringUtf8Coder.of(), featuresFn().combine().inputCoder());
    PCollection<KV<String, Features>> features;
    PCollection<TooLateRecord> tooLate;
    if (events.isBounded() == PCollection.IsBounded.BOUNDED) {
      // Nothing in a bounded input is too late: no gate, no missed windows to drop.
      PCollection<KV<String, FieldValues>> keyed =
          events
              .apply("PassBoundedInput", MapElements.via(new PassOnTimeFn()))
              .setCoder(inputCoder);
      features =
          sliced()
              ? combineSlices(keyed)
              : combine(keyed.apply("WindowFeatures", windowing(windowFn)));
      tooLate =
          events
              .getPipeline()
              .apply("NoTooLateEvents", Create.empty(TooLateRecord.TooLateRecordCoder.of()));
    } else {
      PCollectionTuple gates = gate(events, windowFn);
      PCollection<KV<Instant, Event>> gated =
          gates.get(GATED_TAG).setCoder(KvCoder.of(InstantCoder.of(), Event.EventCoder.of()));
      features =
          sliced() && accumulationMode() == AccumulationMode.ACCUMULATING_FIRED_PANES
              ? gated.apply(
                  "PanesFromSlices",
                  new PanesFromSlices(
                      size(),
                      period(),
                      allowedLateness(),
                      trigger(),
                      earlyFiringDelay(),
                      featuresFn(),
                      windowing(windowFn).getOutputStrategyInternal(events.getWindowingStrategy())))
              : combine(
                  gated
                      .apply("WindowFeatures", windowing(windowFn))
                      .apply(
                          "DropMissedWindows", ParDo.of(new KeepOpenWindowsFn(allowedLateness())))
                      .setCoder(inputCoder));
      tooLate = gates.get(TOO_LATE_TAG);
    }
    tooLate.setCoder(TooLateRecord.TooLateRecordCoder.of());
    return new Result(
        PCollectionTuple.of(FEATURES_TAG, features).and(TOO_LATE_TAG, tooLate),
        FEATURES_TAG,
        TOO_LATE_TAG);
  }

  /** Whether sliding windows are built from slices. */
  private boolean sliced() {
    return aggregation() == Aggregation.SLICES && !size().equals(period());
  }

  /** The configured windows, trigger, allowed lateness and accumulation mode. */
  private <T> Window<T> windowing(WindowFn<? super T, ?> windowFn) {
    Window<T> windowing =
        Window.<T>into(windowFn).triggering(trigger()).withAllowedLateness(allowedLateness());
    return accumulationMode() == AccumulationMode.ACCUMULATING_FIRED_PANES
        ? windowing.accumulatingFiredPanes()
        : windowing.discardingFiredPanes();
  }

  /** One combine per key, window and pane, of events already in their windows. */
  private PCollection<KV<String, Features>> combine(PCollection<KV<String, FieldValues>> windowed) {
    return windowed
        .apply("AggregateFeatures", Combine.perKey(featuresFn()))
        .apply("DropEmptyFirstPanes", ParDo.of(new DropEmptyFirstPaneFn()));
  }

  /**
   * A bounded input's features by {@link WindowsFromSlices}: each event is combined once, into the
   * slice (the fixed window of one period) it falls in, and each sliding window is built from the
   * accumulators of its {@code size / period} slices. This saves combining every event once per
   * window, and shuffling (on Flink, sorting) every event once per window: Beam assigns windows
   * before it groups.
   */
  private PCollection<KV<String, Features>> combineSlices(
      PCollection<KV<String, FieldValues>> keyed) {
    return keyed.apply(
        "WindowsFromSlices",
        new WindowsFromSlices(
            size(), period(), featuresFn(), windowing(new WindowsFromSlices.EndingAt(size()))));
  }

  private static final TupleTag<KV<String, Features>> FEATURES_TAG =
      new TupleTag<KV<String, Features>>() {};
  private static final TupleTag<KV<Instant, Event>> GATED_TAG =
      new TupleTag<KV<Instant, Event>>() {};
  private static final TupleTag<TooLateRecord> TOO_LATE_TAG = new TupleTag<TooLateRecord>() {};

  /**
   * The too-late gate of an unbounded input: shards the events, seeds every shard and applies
   * {@link GateTooLateFn}; outputs {@link #GATED_TAG} and {@link #TOO_LATE_TAG}.
   */
  private PCollectionTuple gate(PCollection<Event> events, SlidingWindows windowFn) {
    KvCoder<Integer, Event> shardedCoder =
        KvCoder.of(VarIntCoder.of(), NullableCoder.of(Event.EventCoder.of()));
    PCollection<KV<Integer, Event>> sharded =
        events
            .apply("ShardForGate", new ShardForGate(gateShards(), period()))
            .setCoder(shardedCoder);
    PCollection<KV<Integer, Event>> seeded =
        PCollectionList.of(sharded)
            .and(
                events
                    .getPipeline()
                    .apply("GateSeeds", GenerateSequence.from(0).to(gateShards()))
                    .apply("SeedPerShard", MapElements.via(new SeedFn()))
                    .setCoder(shardedCoder))
            .apply("SeedGate", Flatten.pCollections());
    return seeded.apply(
        "GateTooLateEvents",
        ParDo.of(
                new GateTooLateFn(
                    windowFn, allowedLateness(), gateShards(), keyName(), GATED_TAG, TOO_LATE_TAG))
            .withOutputTags(GATED_TAG, TupleTagList.of(TOO_LATE_TAG)));
  }

  /**
   * Shard {@code n}'s seed: {@code KV(n, null)}. The seeds come from a bounded read, whose elements
   * carry the minimum timestamp, rather than from {@code Create}: on Flink, {@code Create} is an
   * {@code Impulse}, the one operator without a stable uid, whose generated id changes with the
   * job's parallelism (chained or not) and so fails a restore at another parallelism.
   */
  static final class SeedFn extends SimpleFunction<Long, KV<Integer, @Nullable Event>> {
    @Override
    public KV<Integer, @Nullable Event> apply(Long shard) {
      return KV.of(shard.intValue(), null);
    }
  }

  /**
   * A bounded input's stand-in for the gate: every event is windowed (no window missed), counted as
   * {@code windowed} as the gate would, and keyed by the event's key.
   */
  static final class PassOnTimeFn extends SimpleFunction<Event, KV<String, FieldValues>> {
    private final Counter windowed = TidemarkMetrics.counter(TidemarkMetrics.WINDOWED);

    @Override
    public KV<String, FieldValues> apply(Event event) {
      windowed.inc();
      return KV.of(event.key(), event.fields());
    }
  }

  /** The windowed features and the too-late records. */
  public static final class Result extends PairedOutput<KV<String, Features>, TooLateRecord> {
    Result(
        PCollectionTuple outputs,
        TupleTag<KV<String, Features>> featuresTag,
        TupleTag<TooLateRecord> tooLateTag) {
      super(outputs, featuresTag, tooLateTag);
    }

    /** One element per fired pane per key and window, in that window. */
    public PCollection<KV<String, Features>> features() {
      return main();
    }

    /** Events that missed one or more of their windows (fully or partially late). */
    public PCollection<TooLateRecord> tooLate() {
      return audit();
    }
  }

  /** The gate shard of {@code event}: its identity's hash, spread evenly over {@code shards}. */
  static int gateShardOf(Event event, int shards) {
    return Math.floorMod(31 * event.source().hashCode() + event.id().hashCode(), shards);
  }

  /**
   * Keys each event to its gate shard, and tells every other shard of each window period the events
   * fall in: a {@code null} at the event's timestamp, from which a shard sets the probes of that
   * time's windows as if the event were its own ({@link GateTooLateFn}). Times in one window period
   * have the same windows, so a bundle tells each period once.
   *
   * <p>The step is applied as {@code ShardForGate/Map} with an anonymous DoFn, the name and shape
   * of the {@code MapElements} it replaced: the FlinkRunner derives an operator's uid from them,
   * and savepoints taken before keep restoring.
   */
  static final class ShardForGate
      extends PTransform<PCollection<Event>, PCollection<KV<Integer, Event>>> {
    private final int shards;
    private final long periodMillis;

    ShardForGate(int shards, Duration period) {
      this.shards = shards;
      this.periodMillis = period.getMillis();
    }

    @Override
    public PCollection<KV<Integer, Event>> expand(PCollection<Event> events) {
      return events.apply("Map", ParDo.of(shardFn(shards, periodMillis)));
    }

    private static DoFn<Event, KV<Integer, Event>> shardFn(int shards, long periodMillis) {
      return new DoFn<Event, KV<Integer, Event>>() {
        private transient @Nullable Set<Long> told;

        @StartBundle
        public void startBundle() {
          told = new HashSet<>();
        }

        @ProcessElement
        public void process(
            @Element Event event,
            @Timestamp Instant timestamp,
            OutputReceiver<KV<Integer, Event>> out) {
          int own = gateShardOf(event, shards);
          out.output(KV.of(own, event));
          if (shards > 1
              && Objects.requireNonNull(told)
                  .add(Math.floorDiv(timestamp.getMillis(), periodMillis))) {
            for (int shard = 0; shard < shards; shard++) {
              if (shard != own) {
                out.output(KV.of(shard, null));
              }
            }
          }
        }
      };
    }
  }

  /**
   * Drops a window's first pane when it holds no event. A window has state only once an event
   * reached it, and that event is in its first pane, so an empty first pane is never real. The
   * FlinkRunner emits one when a single watermark jump both fires a window and garbage-collects it:
   * an end-of-window timer fires again after the state was cleared, and Beam's default on-time
   * behaviour (fire always) emits an empty ON_TIME pane with pane index 0 -- a second version 0 of
   * the window's decision, with zero features that would also win a compacted topic. Empty later
   * panes (discarding mode after early panes) are real and pass.
   */
  static final class DropEmptyFirstPaneFn extends DoFn<KV<String, Features>, KV<String, Features>> {
    private final Counter dropped =
        Metrics.counter(TidemarkMetrics.NAMESPACE, TidemarkMetrics.EMPTY_FIRST_PANES);

    @ProcessElement
    public void processElement(
        @Element KV<String, Features> features,
        PaneInfo pane,
        OutputReceiver<KV<String, Features>> out) {
      if (pane.getIndex() == 0
          && features.getValue().values().latestEventMillis() == Long.MIN_VALUE) {
        dropped.inc();
        return;
      }
      out.output(features);
    }
  }

  /**
   * Drops the windows the gate reported as missed (so Beam never sees them) and keys the rest by
   * their key, keeping only what the features are computed from. Observing the window makes the
   * runner process each window of an event separately.
   */
  static final class KeepOpenWindowsFn extends DoFn<KV<Instant, Event>, KV<String, FieldValues>> {
    private final Duration allowedLateness;

    KeepOpenWindowsFn(Duration allowedLateness) {
      this.allowedLateness = allowedLateness;
    }

    @ProcessElement
    public void processElement(
        @Element KV<Instant, Event> element,
        BoundedWindow window,
        OutputReceiver<KV<String, FieldValues>> out) {
      if (!GateTooLateFn.isExpired(window, allowedLateness, element.getKey())) {
        Event event = element.getValue();
        out.output(KV.of(event.key(), event.fields()));
      }
    }
  }
}
