package dev.tidemark.transforms;

import dev.tidemark.spec.FieldValues;
import dev.tidemark.spec.SpecFeaturesFn.Accumulator;
import dev.tidemark.transforms.values.Features;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.beam.sdk.coders.CannotProvideCoderException;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderRegistry;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.SortedMapCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.sdk.transforms.Combine.CombineFn;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.IncompatibleWindowException;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.NonMergingWindowFn;
import org.apache.beam.sdk.transforms.windowing.TimestampCombiner;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.transforms.windowing.WindowFn;
import org.apache.beam.sdk.transforms.windowing.WindowMappingFn;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * A bounded input's sliding-window features: every window of every key from its events, each event
 * combined once into its slice (the fixed window of one period it falls in) and shuffled about
 * once, instead of once per window.
 *
 * <p>Beam assigns windows before it groups, so a sliding-window combine sends (and on Flink sorts)
 * every input once per window it lies in: {@code size / period} times. Here each event is keyed by
 * its key and a bucket of window starts ({@value #BUCKET_WINDOWS} window sizes of event time), a
 * key's events are combined into its slices (a map from slice start to accumulator, so runners lift
 * the combine and fold a key's events before the shuffle), and the windows starting in the bucket
 * are built in one pass over the sorted slices, emitted at their end and placed in their window by
 * {@link EndingAt}. An event goes to the buckets of every window it lies in: one, or two near a
 * bucket's end, so {@code 1 + (size - period) / bucket} copies on average. Memory: one key's slices
 * of one bucket at a time.
 *
 * <p>One combine does both steps (events into slices, then slices into buckets), not two: with many
 * keys nearly every event is a slice of its own, so a first combine's pre-combine would fold
 * nothing, and a second combine would add a whole shuffle and sort stage.
 *
 * <p>The grouping is a combine, not a {@code GroupByKey}: the key's output timestamp must be its
 * earliest event's (no window of the bucket ends before it, so every window is emitted at or after
 * the element's timestamp), and the FlinkRunner's batch {@code GroupByKey} takes the first
 * element's timestamp rather than the earliest.
 *
 * <p>Input: events keyed by their key, in the global window, timestamped with event time; windows
 * start at multiples of {@code period} (no offset), as {@code SlidingWindows} and {@code
 * FixedWindows} place them. Output: one pane per key and window holding an event, the global
 * window's only firing (ON_TIME on the DirectRunner; Flink's batch translation marks it {@code
 * NO_FIRING}, which {@link AssembleDecisions#timing} reads as ON_TIME), in the configured {@code
 * windowing}: the trigger, lateness and accumulation mode of the one-stage combine, for the steps
 * downstream.
 */
final class WindowsFromSlices
    extends PTransform<PCollection<KV<String, FieldValues>>, PCollection<KV<String, Features>>> {

  /**
   * Window sizes of event time per bucket: more copies of slices when smaller, more memory when
   * larger.
   */
  static final int BUCKET_WINDOWS = 10;

  private final Duration size;
  private final Duration period;
  private final FeaturesFn fn;
  private final Window<KV<String, Features>> windowing;

  /**
   * {@code size} and {@code period} as the sliding windows', whose starts are multiples of {@code
   * period} (no offset). {@code windowing} must use {@link EndingAt} of {@code size}.
   */
  WindowsFromSlices(
      Duration size, Duration period, FeaturesFn fn, Window<KV<String, Features>> windowing) {
    this.size = size;
    this.period = period;
    this.fn = fn;
    this.windowing = windowing;
  }

  @Override
  public PCollection<KV<String, Features>> expand(PCollection<KV<String, FieldValues>> events) {
    if (!(events.getWindowingStrategy().getWindowFn() instanceof GlobalWindows)) {
      throw new IllegalArgumentException(
          "WindowsFromSlices places events in slices itself; give it events in the global window");
    }
    Layout layout =
        new Layout(size.getMillis(), period.getMillis(), BUCKET_WINDOWS * size.getMillis());
    return events
        .apply("BucketEvents", ParDo.of(new BucketEventFn(layout)))
        .setCoder(
            KvCoder.of(
                KvCoder.of(StringUtf8Coder.of(), VarLongCoder.of()),
                KvCoder.of(VarLongCoder.of(), fn.combine().inputCoder())))
        .apply(
            "CollectBuckets",
            Window.<KV<KV<String, Long>, KV<Long, FieldValues>>>into(new GlobalWindows())
                .withTimestampCombiner(TimestampCombiner.EARLIEST))
        .apply("CollectSlices", Combine.perKey(new CollectSlicesFn(fn)))
        .apply("BuildWindows", ParDo.of(new BuildWindowsFn(layout, fn)))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), Features.FeaturesCoder.of()))
        .apply("WindowFeatures", windowing);
  }

  /**
   * Where windows and buckets lie, in epoch milliseconds: windows of {@code size} starting every
   * {@code period}, grouped by their start into buckets of {@code bucket}.
   */
  static final class Layout implements Serializable {
    private static final long serialVersionUID = 1L;

    final long size;
    final long period;
    final long bucket;

    Layout(long size, long period, long bucket) {
      this.size = size;
      this.period = period;
      this.bucket = bucket;
    }

    /** The first window start over the slice starting at {@code sliceStart}. */
    long firstWindowOver(long sliceStart) {
      return sliceStart - size + period;
    }

    long bucketOf(long windowStart) {
      return Math.floorDiv(windowStart, bucket);
    }

    /** The start of the slice (the period) that {@code millis} falls in. */
    long sliceOf(long millis) {
      return millis - Math.floorMod(millis, period);
    }
  }

  /**
   * Keys each event by its key and the bucket of every window start its slice lies under: window
   * starts from {@code slice - size + period} to {@code slice}, where {@code slice} is the start of
   * the period the event's timestamp falls in.
   */
  static final class BucketEventFn
      extends DoFn<KV<String, FieldValues>, KV<KV<String, Long>, KV<Long, FieldValues>>> {
    private final Layout layout;

    BucketEventFn(Layout layout) {
      this.layout = layout;
    }

    @ProcessElement
    public void processElement(
        @Element KV<String, FieldValues> event,
        @Timestamp Instant timestamp,
        OutputReceiver<KV<KV<String, Long>, KV<Long, FieldValues>>> out) {
      long slice = layout.sliceOf(timestamp.getMillis());
      KV<Long, FieldValues> value = KV.of(slice, event.getValue());
      long last = layout.bucketOf(slice);
      for (long b = layout.bucketOf(layout.firstWindowOver(slice)); b <= last; b++) {
        out.output(KV.of(KV.of(event.getKey(), b), value));
      }
    }
  }

  /** Combines a key's events into its slices, by slice start. */
  static final class CollectSlicesFn
      extends CombineFn<
          KV<Long, FieldValues>, SortedMap<Long, Accumulator>, SortedMap<Long, Accumulator>> {
    private final FeaturesFn fn;

    CollectSlicesFn(FeaturesFn fn) {
      this.fn = fn;
    }

    @Override
    public SortedMap<Long, Accumulator> createAccumulator() {
      return new TreeMap<>();
    }

    @Override
    public SortedMap<Long, Accumulator> addInput(
        SortedMap<Long, Accumulator> slices, KV<Long, FieldValues> event) {
      fn.addInput(
          slices.computeIfAbsent(event.getKey(), start -> fn.createAccumulator()),
          event.getValue());
      return slices;
    }

    @Override
    public SortedMap<Long, Accumulator> mergeAccumulators(
        Iterable<SortedMap<Long, Accumulator>> accumulators) {
      SortedMap<Long, Accumulator> merged = null;
      for (SortedMap<Long, Accumulator> slices : accumulators) {
        if (merged == null) {
          merged = slices;
        } else {
          for (Map.Entry<Long, Accumulator> slice : slices.entrySet()) {
            merged.merge(
                slice.getKey(),
                slice.getValue(),
                (into, other) -> fn.mergeAccumulators(List.of(into, other)));
          }
        }
      }
      return merged == null ? createAccumulator() : merged;
    }

    @Override
    public SortedMap<Long, Accumulator> extractOutput(SortedMap<Long, Accumulator> slices) {
      return slices;
    }

    @Override
    public Coder<SortedMap<Long, Accumulator>> getAccumulatorCoder(
        CoderRegistry registry, Coder<KV<Long, FieldValues>> inputCoder)
        throws CannotProvideCoderException {
      return slicesCoder(registry, inputCoder);
    }

    @Override
    public Coder<SortedMap<Long, Accumulator>> getDefaultOutputCoder(
        CoderRegistry registry, Coder<KV<Long, FieldValues>> inputCoder)
        throws CannotProvideCoderException {
      return slicesCoder(registry, inputCoder);
    }

    private Coder<SortedMap<Long, Accumulator>> slicesCoder(
        CoderRegistry registry, Coder<KV<Long, FieldValues>> inputCoder)
        throws CannotProvideCoderException {
      Coder<FieldValues> values = ((KvCoder<Long, FieldValues>) inputCoder).getValueCoder();
      return SortedMapCoder.of(VarLongCoder.of(), fn.getAccumulatorCoder(registry, values));
    }
  }

  /**
   * The windows starting in a key's bucket that hold at least one slice, each merged from the
   * slices it spans and emitted at its last millisecond (its end minus one, where a windowed
   * combine emits it). A window over the same slices as the one before it (no slice left, none
   * entered) reuses its features: a key with one event has ten equal windows.
   */
  static final class BuildWindowsFn
      extends DoFn<KV<KV<String, Long>, SortedMap<Long, Accumulator>>, KV<String, Features>> {
    private final Layout layout;
    private final FeaturesFn fn;

    BuildWindowsFn(Layout layout, FeaturesFn fn) {
      this.layout = layout;
      this.fn = fn;
    }

    @ProcessElement
    public void processElement(
        @Element KV<KV<String, Long>, SortedMap<Long, Accumulator>> element,
        OutputReceiver<KV<String, Features>> out) {
      String account = element.getKey().getKey();
      long size = layout.size;
      long period = layout.period;
      long firstStart = element.getKey().getValue() * layout.bucket;
      long lastStart = firstStart + layout.bucket - period;
      NavigableMap<Long, Accumulator> slices = asNavigable(element.getValue());
      long next = firstStart;
      Features features = null;
      long previous = Long.MIN_VALUE;
      for (long sliceStart : slices.keySet()) {
        // The windows over this slice, from the first not yet built, within the bucket.
        long from = Math.max(next, layout.firstWindowOver(sliceStart));
        long to = Math.min(lastStart, sliceStart);
        for (long start = from; start <= to; start += period) {
          boolean sameSlices =
              features != null
                  && start == previous + period
                  && !slices.containsKey(previous)
                  && !slices.containsKey(start + size - period);
          if (!sameSlices) {
            features = features(slices.subMap(start, true, start + size, false).values());
          }
          previous = start;
          out.outputWithTimestamp(KV.of(account, features), new Instant(start + size - 1));
        }
        next = Math.max(next, to + period);
      }
    }

    private Features features(Collection<Accumulator> slices) {
      List<Accumulator> window = new ArrayList<>(slices.size() + 1);
      window.add(fn.createAccumulator());
      window.addAll(slices);
      return fn.extractOutput(fn.mergeAccumulators(window));
    }

    private static NavigableMap<Long, Accumulator> asNavigable(SortedMap<Long, Accumulator> map) {
      return map instanceof NavigableMap
          ? (NavigableMap<Long, Accumulator>) map
          : new TreeMap<>(map);
    }
  }

  /**
   * Non-merging windows of {@code size} that end one millisecond after the element's timestamp: the
   * window of an element emitted at a window's last millisecond. Equal to the sliding windows' own
   * {@link IntervalWindow}s. Not for side inputs.
   */
  static final class EndingAt extends NonMergingWindowFn<Object, IntervalWindow> {
    private final Duration size;

    EndingAt(Duration size) {
      this.size = size;
    }

    @Override
    public Collection<IntervalWindow> assignWindows(
        WindowFn<Object, IntervalWindow>.AssignContext c) {
      Instant end = c.timestamp().plus(Duration.millis(1));
      return List.of(new IntervalWindow(end.minus(size), end));
    }

    @Override
    @SuppressWarnings("deprecation") // abstract in WindowFn; verifyCompatibility is the new check
    public boolean isCompatible(WindowFn<?, ?> other) {
      return equals(other);
    }

    @Override
    public void verifyCompatibility(WindowFn<?, ?> other) throws IncompatibleWindowException {
      if (!equals(other)) {
        throw new IncompatibleWindowException(
            other, "only feature windows of the same size (" + size + ") are compatible");
      }
    }

    @Override
    public Coder<IntervalWindow> windowCoder() {
      return IntervalWindow.getCoder();
    }

    @Override
    public WindowMappingFn<IntervalWindow> getDefaultWindowMappingFn() {
      throw new UnsupportedOperationException(
          "a bounded input's feature windows cannot be used as a side input");
    }

    @Override
    public boolean equals(@Nullable Object other) {
      return other instanceof EndingAt && ((EndingAt) other).size.equals(size);
    }

    @Override
    public int hashCode() {
      return Objects.hash(EndingAt.class, size);
    }
  }
}
