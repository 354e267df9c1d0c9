package dev.tidemark.transforms;

import dev.tidemark.spec.FieldValues;
import dev.tidemark.spec.SpecFeaturesFn;
import dev.tidemark.spec.SpecFeaturesFn.Accumulator;
import dev.tidemark.transforms.values.Event;
import dev.tidemark.transforms.values.Features;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.beam.sdk.coders.CannotProvideCoderException;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderRegistry;
import org.apache.beam.sdk.coders.CustomCoder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.SortedMapCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.state.MapState;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.Timer;
import org.apache.beam.sdk.state.TimerSpec;
import org.apache.beam.sdk.state.TimerSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.sdk.transforms.Combine.CombineFn;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.DefaultTrigger;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.transforms.windowing.Trigger;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.WindowingStrategy;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * A stream's sliding-window features from slices: each event is combined once, into its slice (a
 * fixed Beam window of one period, with the features' trigger), and a keyed stateful step turns the
 * slices' panes into the sliding windows' panes, merging each window from the latest pane of each
 * of its slices. A sliding-window combine instead keeps trigger, combine and watermark-hold state
 * in every one of an event's {@code size / period} windows. The pane semantics (when each pane of a
 * window fires, its index and timing, and where they differ from Beam's {@code SlidingWindows} with
 * the same trigger) are in {@code docs/semantics.md}.
 *
 * <p>The steps:
 *
 * <ol>
 *   <li>{@code AssignSlices}: the too-late gate passed the event with its bound, a lower bound of
 *       the watermark; the windows of the event's slice that the bound has closed are a prefix of
 *       them (the earliest-ending), so the event is keyed by its key and that prefix's length, its
 *       <em>variant</em>: a slice pane of variant {@code k} counts only in the slice's windows
 *       after the first {@code k}.
 *   <li>{@code WindowSlices}, {@code CombineSlices}: fixed windows of one period, the features'
 *       trigger, accumulating, an on-time pane only when it has something new, and an allowed
 *       lateness longer by {@code size - period}: an event late for its slice's first window is on
 *       time or late for the later ones. Each pane carries the slice's accumulator and the largest
 *       gate bound of its events.
 *   <li>{@code BuildWindowPanes}: per key, the latest accumulator of every live slice and variant
 *       and the panes each window has fired. A slice pane fires a pane of every window it counts in
 *       that has not expired: late once the watermark passed the window's end; before it, an early
 *       pane the early-firing delay later (a processing-time timer per key; at once for a zero
 *       delay, never without early firings). An event-time timer at each window's end fires its
 *       on-time pane with every slice in it; then windows and slices past their allowed lateness
 *       are dropped.
 * </ol>
 *
 * <p>Output: {@code KV<key, Features>} in the sliding windows (the output's windowing strategy is
 * the one-stage combine's), each with the {@code PaneInfo} of the window's pane and its window's
 * last millisecond as timestamp.
 */
final class PanesFromSlices
    extends PTransform<PCollection<KV<Instant, Event>>, PCollection<KV<String, Features>>> {

  /** {@link Layout#earlyDelay} of a trigger without early firings. */
  static final long NO_EARLY_FIRINGS = -1;

  private final Duration size;
  private final Duration period;
  private final Duration allowedLateness;
  private final Trigger trigger;
  private final @Nullable Duration earlyFiringDelay;
  private final FeaturesFn fn;
  private final WindowingStrategy<?, ?> outputStrategy;

  /**
   * Windows of {@code size} every {@code period} (a whole divisor, less than the size), fired by
   * {@code trigger} (whose early firings come {@code earlyFiringDelay} after a pane's first
   * element; null: none), kept {@code allowedLateness} after their end; the output gets {@code
   * outputStrategy}, the one-stage combine's.
   */
  PanesFromSlices(
      Duration size,
      Duration period,
      Duration allowedLateness,
      Trigger trigger,
      @Nullable Duration earlyFiringDelay,
      FeaturesFn fn,
      WindowingStrategy<?, ?> outputStrategy) {
    this.size = size;
    this.period = period;
    this.allowedLateness = allowedLateness;
    this.trigger = trigger;
    this.earlyFiringDelay = earlyFiringDelay;
    this.fn = fn;
    this.outputStrategy = outputStrategy;
  }

  @Override
  public PCollection<KV<String, Features>> expand(PCollection<KV<Instant, Event>> gated) {
    Layout layout =
        new Layout(
            size.getMillis(),
            period.getMillis(),
            allowedLateness.getMillis(),
            earlyFiringDelay == null ? NO_EARLY_FIRINGS : earlyFiringDelay.getMillis());
    Coder<Accumulator> accumulatorCoder;
    try {
      accumulatorCoder =
          fn.getAccumulatorCoder(gated.getPipeline().getCoderRegistry(), fn.combine().inputCoder());
    } catch (CannotProvideCoderException e) {
      throw new IllegalStateException("the features' accumulator has no coder", e);
    }
    KvCoder<Long, Accumulator> sliceCoder = KvCoder.of(VarLongCoder.of(), accumulatorCoder);
    PCollection<KV<String, Features>> panes =
        gated
            .apply("AssignSlices", ParDo.of(new AssignSliceFn(layout)))
            .setCoder(
                KvCoder.of(
                    KvCoder.of(StringUtf8Coder.of(), VarIntCoder.of()),
                    KvCoder.of(VarLongCoder.of(), fn.combine().inputCoder())))
            .apply(
                "WindowSlices",
                Window.<KV<KV<String, Integer>, KV<Long, FieldValues>>>into(FixedWindows.of(period))
                    .triggering(trigger)
                    .withAllowedLateness(allowedLateness.plus(size).minus(period))
                    .accumulatingFiredPanes()
                    .withOnTimeBehavior(Window.OnTimeBehavior.FIRE_IF_NON_EMPTY))
            .apply("CombineSlices", Combine.perKey(new SliceFn(fn, sliceCoder)))
            .apply("ToSlicePanes", ParDo.of(new ToSlicePaneFn()))
            .setCoder(KvCoder.of(StringUtf8Coder.of(), SlicePane.coder(accumulatorCoder)))
            .apply(
                "UnwindowSlices",
                Window.<KV<String, SlicePane>>into(new GlobalWindows())
                    .triggering(DefaultTrigger.of())
                    .withAllowedLateness(Duration.ZERO)
                    .discardingFiredPanes())
            .apply("BuildWindowPanes", ParDo.of(new BuildPanesFn(layout, fn, accumulatorCoder)))
            .setCoder(KvCoder.of(StringUtf8Coder.of(), Features.FeaturesCoder.of()));
    // The panes are emitted into their sliding windows, with their own PaneInfo.
    panes.setWindowingStrategyInternal(outputStrategy);
    return panes;
  }

  /**
   * Where slices and windows lie, in epoch milliseconds: windows of {@code size} every {@code
   * period}, starting at multiples of it; {@code lateness} the allowed lateness; {@code earlyDelay}
   * the early firings' delay in milliseconds of processing time ({@link #NO_EARLY_FIRINGS}: none).
   */
  static final class Layout implements java.io.Serializable {
    private static final long serialVersionUID = 1L;

    final long size;
    final long period;
    final long lateness;
    final long earlyDelay;

    Layout(long size, long period, long lateness, long earlyDelay) {
      this.size = size;
      this.period = period;
      this.lateness = lateness;
      this.earlyDelay = earlyDelay;
    }

    /** How many windows each slice lies in. */
    int windowsPerSlice() {
      return (int) (size / period);
    }

    /** The start of the slice {@code millis} falls in. */
    long sliceOf(long millis) {
      return millis - Math.floorMod(millis, period);
    }

    /** The start of the {@code j}-th window (by start, from 0) over the slice at {@code slice}. */
    long windowOver(long slice, int j) {
      return slice - size + period + j * period;
    }

    /** Which window over the slice at {@code slice} the window starting at {@code start} is. */
    int indexOver(long slice, long start) {
      return (int) ((start - windowOver(slice, 0)) / period);
    }

    long maxTimestamp(long windowStart) {
      return windowStart + size - 1;
    }

    /**
     * Whether the window starting at {@code start} has expired once the watermark is at least
     * {@code watermarkAtLeast}: its end plus the allowed lateness is behind it, as Beam decides.
     */
    boolean expired(long start, long watermarkAtLeast) {
      return GateTooLateFn.saturatedAdd(maxTimestamp(start), lateness) < watermarkAtLeast;
    }
  }

  /**
   * Keys each event by its key and its variant (how many of its slice's windows, from the first,
   * the gate's bound has closed), with the bound beside its fields.
   */
  static final class AssignSliceFn
      extends DoFn<KV<Instant, Event>, KV<KV<String, Integer>, KV<Long, FieldValues>>> {
    private final Layout layout;

    AssignSliceFn(Layout layout) {
      this.layout = layout;
    }

    @ProcessElement
    public void processElement(
        @Element KV<Instant, Event> element,
        @Timestamp Instant timestamp,
        OutputReceiver<KV<KV<String, Integer>, KV<Long, FieldValues>>> out) {
      long bound = element.getKey().getMillis();
      long slice = layout.sliceOf(timestamp.getMillis());
      int closed = 0;
      while (closed < layout.windowsPerSlice()
          && layout.expired(layout.windowOver(slice, closed), bound)) {
        closed++;
      }
      Event event = element.getValue();
      out.output(KV.of(KV.of(event.key(), closed), KV.of(bound, event.fields())));
    }
  }

  /**
   * A slice's accumulator and the largest gate bound of its events; the output is a copy, so that
   * no later input changes a pane already emitted.
   */
  static final class SliceFn
      extends CombineFn<KV<Long, FieldValues>, KV<Long, Accumulator>, KV<Long, Accumulator>> {
    private final FeaturesFn fn;
    private final Coder<KV<Long, Accumulator>> coder;

    SliceFn(FeaturesFn fn, Coder<KV<Long, Accumulator>> coder) {
      this.fn = fn;
      this.coder = coder;
    }

    @Override
    public KV<Long, Accumulator> createAccumulator() {
      return KV.of(Long.MIN_VALUE, fn.createAccumulator());
    }

    @Override
    public KV<Long, Accumulator> addInput(KV<Long, Accumulator> slice, KV<Long, FieldValues> in) {
      Accumulator accumulator = fn.addInput(slice.getValue(), in.getValue());
      return KV.of(Math.max(slice.getKey(), in.getKey()), accumulator);
    }

    @Override
    public KV<Long, Accumulator> mergeAccumulators(Iterable<KV<Long, Accumulator>> slices) {
      long bound = Long.MIN_VALUE;
      List<Accumulator> accumulators = new ArrayList<>();
      for (KV<Long, Accumulator> slice : slices) {
        bound = Math.max(bound, slice.getKey());
        accumulators.add(slice.getValue());
      }
      return KV.of(
          bound,
          accumulators.isEmpty() ? fn.createAccumulator() : fn.mergeAccumulators(accumulators));
    }

    @Override
    public KV<Long, Accumulator> extractOutput(KV<Long, Accumulator> slice) {
      return KV.of(
          slice.getKey(), fn.mergeAccumulators(List.of(fn.createAccumulator(), slice.getValue())));
    }

    @Override
    public Coder<KV<Long, Accumulator>> getAccumulatorCoder(
        CoderRegistry registry, Coder<KV<Long, FieldValues>> inputCoder) {
      return coder;
    }

    @Override
    public Coder<KV<Long, Accumulator>> getDefaultOutputCoder(
        CoderRegistry registry, Coder<KV<Long, FieldValues>> inputCoder) {
      return coder;
    }
  }

  /**
   * A pane of a slice: the slice's start, the variant, the pane's index, the largest gate bound of
   * its events, and the slice's accumulator.
   */
  static final class SlicePane {
    final long start;
    final int variant;
    final long index;
    final long bound;
    final Accumulator accumulator;

    SlicePane(long start, int variant, long index, long bound, Accumulator accumulator) {
      this.start = start;
      this.variant = variant;
      this.index = index;
      this.bound = bound;
      this.accumulator = accumulator;
    }

    static Coder<SlicePane> coder(Coder<Accumulator> accumulatorCoder) {
      return new SlicePaneCoder(accumulatorCoder);
    }
  }

  /** The fields of a {@link SlicePane} in order, the accumulator in its own coder. */
  static final class SlicePaneCoder extends CustomCoder<SlicePane> {
    private static final long serialVersionUID = 1L;

    private final Coder<Accumulator> accumulatorCoder;

    SlicePaneCoder(Coder<Accumulator> accumulatorCoder) {
      this.accumulatorCoder = accumulatorCoder;
    }

    @Override
    public void encode(SlicePane pane, OutputStream out) throws IOException {
      VarLongCoder.of().encode(pane.start, out);
      VarIntCoder.of().encode(pane.variant, out);
      VarLongCoder.of().encode(pane.index, out);
      VarLongCoder.of().encode(pane.bound, out);
      accumulatorCoder.encode(pane.accumulator, out);
    }

    @Override
    public SlicePane decode(InputStream in) throws IOException {
      return new SlicePane(
          VarLongCoder.of().decode(in),
          VarIntCoder.of().decode(in),
          VarLongCoder.of().decode(in),
          VarLongCoder.of().decode(in),
          accumulatorCoder.decode(in));
    }

    @Override
    public void verifyDeterministic() throws NonDeterministicException {
      accumulatorCoder.verifyDeterministic();
    }
  }

  /**
   * A slice pane, keyed by the event key. An empty pane (a runner's empty on-time pane of a slice
   * whose state was already cleared) is dropped.
   */
  static final class ToSlicePaneFn
      extends DoFn<KV<KV<String, Integer>, KV<Long, Accumulator>>, KV<String, SlicePane>> {
    @ProcessElement
    public void processElement(
        @Element KV<KV<String, Integer>, KV<Long, Accumulator>> pane,
        BoundedWindow window,
        PaneInfo info,
        OutputReceiver<KV<String, SlicePane>> out) {
      if (SpecFeaturesFn.isEmpty(pane.getValue().getValue())) {
        return;
      }
      out.output(
          KV.of(
              pane.getKey().getKey(),
              new SlicePane(
                  ((IntervalWindow) window).start().getMillis(),
                  pane.getKey().getValue(),
                  info.getIndex(),
                  pane.getValue().getKey(),
                  pane.getValue().getValue())));
    }
  }

  /**
   * Turns slice panes into window panes; see the class comment. State per key: the latest pane
   * (index and accumulator) of each slice and variant, one map entry per slice (a slice pane reads
   * and writes its own entry, a window pane reads its window's slices); per window, the panes fired
   * and the non-speculative (on-time and late) panes among them, or -1 before its on-time moment;
   * the latest time the watermark is known to have passed. A slice is kept exactly as long as the
   * window starting at it (its last window): it is stored only when that window has not expired,
   * which then holds an entry too, and it goes when that window does.
   */
  static final class BuildPanesFn extends DoFn<KV<String, SlicePane>, KV<String, Features>> {
    static final String SLICES = "slices";
    static final String WINDOWS = "windows";
    static final String WATERMARK = "watermarkAtLeast";
    static final String ON_TIME = "onTime";
    static final String EXPIRY = "expiry";
    static final String EARLY = "early";

    @StateId(SLICES)
    private final StateSpec<MapState<Long, SortedMap<Integer, KV<Long, Accumulator>>>> slicesSpec;

    @StateId(WINDOWS)
    private final StateSpec<ValueState<SortedMap<Long, KV<Integer, Integer>>>> windowsSpec =
        StateSpecs.value(
            SortedMapCoder.of(VarLongCoder.of(), KvCoder.of(VarIntCoder.of(), VarIntCoder.of())));

    @StateId(WATERMARK)
    private final StateSpec<ValueState<Long>> watermarkSpec = StateSpecs.value(VarLongCoder.of());

    @TimerId(ON_TIME)
    private final TimerSpec onTimeSpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

    @TimerId(EXPIRY)
    private final TimerSpec expirySpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

    @TimerId(EARLY)
    private final TimerSpec earlySpec = TimerSpecs.timer(TimeDomain.PROCESSING_TIME);

    private final Layout layout;
    private final FeaturesFn fn;

    BuildPanesFn(Layout layout, FeaturesFn fn, Coder<Accumulator> accumulatorCoder) {
      this.layout = layout;
      this.fn = fn;
      this.slicesSpec =
          StateSpecs.map(
              VarLongCoder.of(),
              SortedMapCoder.of(VarIntCoder.of(), KvCoder.of(VarLongCoder.of(), accumulatorCoder)));
    }

    /** A window's panes before its on-time moment: none non-speculative yet. */
    private static final int BEFORE_ON_TIME = -1;

    /** Before its on-time moment, with new slices since its last pane: an early pane is due. */
    private static final int EARLY_DUE = -2;

    /**
     * A late slice pane carries its slice's garbage-collection time as timestamp (Beam's hold for
     * late data), later than the end of the windows it updates; their panes still carry their
     * window's last millisecond, as the one-stage combine's do, so outputs and timers may be
     * earlier than the input.
     */
    @Override
    @SuppressWarnings("deprecation") // the only way to emit before the input's timestamp
    public Duration getAllowedTimestampSkew() {
      return Duration.millis(Long.MAX_VALUE);
    }

    @ProcessElement
    public void processElement(
        @Element KV<String, SlicePane> element,
        @StateId(SLICES) MapState<Long, SortedMap<Integer, KV<Long, Accumulator>>> slicesState,
        @StateId(WINDOWS) ValueState<SortedMap<Long, KV<Integer, Integer>>> windowsState,
        @StateId(WATERMARK) ValueState<Long> watermarkState,
        @TimerId(ON_TIME) Timer onTime,
        @TimerId(EXPIRY) Timer expiry,
        @TimerId(EARLY) Timer earlyTimer,
        OutputReceiver<KV<String, Features>> out) {
      String key = element.getKey();
      SlicePane slicePane = element.getValue();
      long slice = slicePane.start;
      int variant = slicePane.variant;
      long known = orMin(watermarkState.read());
      long watermark = Math.max(slicePane.bound, known);
      if (watermark > known) {
        watermarkState.write(watermark);
      }
      if (layout.expired(slice, watermark)) {
        // Its last window, and so every window over it, has expired.
        return;
      }
      Slices slices = new Slices(slicesState);
      SortedMap<Integer, KV<Long, Accumulator>> variants = slices.get(slice);
      if (variants == null) {
        variants = new TreeMap<>();
        slices.put(slice, variants);
      }
      KV<Long, Accumulator> latest = variants.get(variant);
      if (latest != null && latest.getKey() >= slicePane.index) {
        // A runner that does not keep a key's elements in order delivered an older pane late:
        // the newer one, which holds all of it, has been counted.
        return;
      }
      variants.put(variant, KV.of(slicePane.index, slicePane.accumulator));
      slicesState.put(slice, variants);
      NavigableMap<Long, KV<Integer, Integer>> windows = navigable(windowsState.read());
      Long earliestPending = earliestBeforeOnTime(windows);
      boolean earlyDue = anyEarlyDue(windows);
      long latestExpiry = windows.isEmpty() ? Long.MIN_VALUE : expiryOf(windows.lastKey());
      for (int j = variant; j < layout.windowsPerSlice(); j++) {
        long start = layout.windowOver(slice, j);
        if (layout.expired(start, watermark)) {
          continue;
        }
        KV<Integer, Integer> panes = windows.get(start);
        if (panes == null) {
          // A window whose end the watermark has passed before its first slice arrived has no
          // on-time pane: its first pane is late.
          panes = KV.of(0, layout.maxTimestamp(start) < watermark ? 0 : BEFORE_ON_TIME);
        }
        boolean early = panes.getValue() < 0;
        if (early && layout.earlyDelay != 0) {
          // Without early firings a window's first pane is its on-time one; with a delay, its
          // early pane fires that long after new slices reached it (EARLY_DUE, onEarly).
          windows.put(
              start,
              layout.earlyDelay == NO_EARLY_FIRINGS ? panes : KV.of(panes.getKey(), EARLY_DUE));
          continue;
        }
        PaneInfo pane =
            PaneInfo.createPane(
                panes.getKey() == 0,
                false,
                early ? PaneInfo.Timing.EARLY : PaneInfo.Timing.LATE,
                panes.getKey(),
                early ? -1 : panes.getValue());
        emit(key, start, slices, pane, out);
        windows.put(
            start, KV.of(panes.getKey() + 1, early ? BEFORE_ON_TIME : panes.getValue() + 1));
      }
      windowsState.write(windows);
      if (!earlyDue && anyEarlyDue(windows)) {
        earlyTimer.offset(Duration.millis(layout.earlyDelay)).withNoOutputTimestamp().setRelative();
      }
      Long pending = earliestBeforeOnTime(windows);
      if (pending != null && (earliestPending == null || pending < earliestPending)) {
        onTime.set(new Instant(layout.maxTimestamp(pending)));
      }
      if (!windows.isEmpty() && expiryOf(windows.lastKey()) > latestExpiry) {
        expiry.withNoOutputTimestamp().set(new Instant(expiryOf(windows.lastKey())));
      }
    }

    /** The on-time panes of the windows whose end the watermark passed, then the cleanup. */
    @OnTimer(ON_TIME)
    public void onTime(
        OnTimerContext context,
        @Key String key,
        @StateId(SLICES) MapState<Long, SortedMap<Integer, KV<Long, Accumulator>>> slicesState,
        @StateId(WINDOWS) ValueState<SortedMap<Long, KV<Integer, Integer>>> windowsState,
        @StateId(WATERMARK) ValueState<Long> watermarkState,
        @TimerId(ON_TIME) Timer onTime,
        OutputReceiver<KV<String, Features>> out) {
      long fired = context.fireTimestamp().getMillis();
      // A timer fires once the watermark is past its time.
      long watermark = Math.max(orMin(watermarkState.read()), fired + 1);
      watermarkState.write(watermark);
      Slices slices = new Slices(slicesState);
      NavigableMap<Long, KV<Integer, Integer>> windows = navigable(windowsState.read());
      for (Map.Entry<Long, KV<Integer, Integer>> window : windows.entrySet()) {
        long start = window.getKey();
        KV<Integer, Integer> panes = window.getValue();
        if (panes.getValue() >= 0 || layout.maxTimestamp(start) > fired) {
          continue;
        }
        PaneInfo pane =
            PaneInfo.createPane(
                panes.getKey() == 0,
                layout.lateness == 0,
                PaneInfo.Timing.ON_TIME,
                panes.getKey(),
                0);
        emit(key, start, slices, pane, out);
        window.setValue(KV.of(panes.getKey() + 1, 1));
      }
      prune(slicesState, windows, watermark);
      write(windowsState, windows);
      Long pending = earliestBeforeOnTime(windows);
      if (pending != null) {
        onTime.set(new Instant(layout.maxTimestamp(pending)));
      }
    }

    /**
     * The early panes due: each window before its on-time moment that new slices reached since its
     * last pane.
     */
    @OnTimer(EARLY)
    public void onEarly(
        @Key String key,
        @StateId(SLICES) MapState<Long, SortedMap<Integer, KV<Long, Accumulator>>> slicesState,
        @StateId(WINDOWS) ValueState<SortedMap<Long, KV<Integer, Integer>>> windowsState,
        OutputReceiver<KV<String, Features>> out) {
      NavigableMap<Long, KV<Integer, Integer>> windows = navigable(windowsState.read());
      if (!anyEarlyDue(windows)) {
        return;
      }
      Slices slices = new Slices(slicesState);
      for (Map.Entry<Long, KV<Integer, Integer>> window : windows.entrySet()) {
        KV<Integer, Integer> panes = window.getValue();
        if (panes.getValue() == EARLY_DUE) {
          PaneInfo pane =
              PaneInfo.createPane(
                  panes.getKey() == 0, false, PaneInfo.Timing.EARLY, panes.getKey(), -1);
          emit(key, window.getKey(), slices, pane, out);
          window.setValue(KV.of(panes.getKey() + 1, BEFORE_ON_TIME));
        }
      }
      windowsState.write(windows);
    }

    private static boolean anyEarlyDue(Map<Long, KV<Integer, Integer>> windows) {
      for (KV<Integer, Integer> panes : windows.values()) {
        if (panes.getValue() == EARLY_DUE) {
          return true;
        }
      }
      return false;
    }

    /** Every window of the key has expired: the state goes. */
    @OnTimer(EXPIRY)
    public void onExpiry(
        OnTimerContext context,
        @StateId(SLICES) MapState<Long, SortedMap<Integer, KV<Long, Accumulator>>> slicesState,
        @StateId(WINDOWS) ValueState<SortedMap<Long, KV<Integer, Integer>>> windowsState,
        @StateId(WATERMARK) ValueState<Long> watermarkState) {
      long watermark =
          Math.max(orMin(watermarkState.read()), context.fireTimestamp().getMillis() + 1);
      NavigableMap<Long, KV<Integer, Integer>> windows = navigable(windowsState.read());
      prune(slicesState, windows, watermark);
      if (windows.isEmpty()) {
        slicesState.clear();
        windowsState.clear();
        watermarkState.clear();
      } else {
        watermarkState.write(watermark);
        write(windowsState, windows);
      }
    }

    private long expiryOf(long windowStart) {
      return GateTooLateFn.saturatedAdd(layout.maxTimestamp(windowStart), layout.lateness);
    }

    /**
     * Drops the windows that have expired and the slices whose every window has: the slice at each
     * expired window's start (a slice's last window starts at the slice).
     */
    private void prune(
        MapState<Long, SortedMap<Integer, KV<Long, Accumulator>>> slicesState,
        NavigableMap<Long, KV<Integer, Integer>> windows,
        long watermark) {
      Iterator<Long> starts = windows.keySet().iterator();
      while (starts.hasNext()) {
        long start = starts.next();
        if (!layout.expired(start, watermark)) {
          break; // windows expire in start order
        }
        starts.remove();
        slicesState.remove(start);
      }
    }

    private static void write(
        ValueState<SortedMap<Long, KV<Integer, Integer>>> windowsState,
        SortedMap<Long, KV<Integer, Integer>> windows) {
      if (windows.isEmpty()) {
        windowsState.clear();
      } else {
        windowsState.write(windows);
      }
    }

    /** The window at {@code start}: every slice in it, each variant that counts in it. */
    private void emit(
        String key,
        long start,
        Slices slices,
        PaneInfo pane,
        OutputReceiver<KV<String, Features>> out) {
      List<Accumulator> window = new ArrayList<>();
      window.add(fn.createAccumulator());
      for (long slice = start; slice < start + layout.size; slice += layout.period) {
        SortedMap<Integer, KV<Long, Accumulator>> variants = slices.get(slice);
        if (variants == null) {
          continue;
        }
        int index = layout.indexOver(slice, start);
        for (Map.Entry<Integer, KV<Long, Accumulator>> variant : variants.entrySet()) {
          if (variant.getKey() <= index) {
            window.add(variant.getValue().getValue());
          }
        }
      }
      Instant maxTimestamp = new Instant(layout.maxTimestamp(start));
      out.outputWindowedValue(
          KV.of(key, fn.extractOutput(fn.mergeAccumulators(window))),
          maxTimestamp,
          List.of(new IntervalWindow(new Instant(start), maxTimestamp.plus(Duration.millis(1)))),
          pane);
    }

    /** A key's slices as one call reads them: each entry read from state at most once. */
    private static final class Slices {
      private final MapState<Long, SortedMap<Integer, KV<Long, Accumulator>>> state;
      private final Map<Long, Optional<SortedMap<Integer, KV<Long, Accumulator>>>> read =
          new HashMap<>();

      Slices(MapState<Long, SortedMap<Integer, KV<Long, Accumulator>>> state) {
        this.state = state;
      }

      @Nullable SortedMap<Integer, KV<Long, Accumulator>> get(long slice) {
        return read.computeIfAbsent(slice, s -> Optional.ofNullable(state.get(s).read()))
            .orElse(null);
      }

      void put(long slice, SortedMap<Integer, KV<Long, Accumulator>> variants) {
        read.put(slice, Optional.of(variants));
      }
    }

    private static @Nullable Long earliestBeforeOnTime(
        NavigableMap<Long, KV<Integer, Integer>> windows) {
      for (Map.Entry<Long, KV<Integer, Integer>> window : windows.entrySet()) {
        if (window.getValue().getValue() < 0) {
          return window.getKey();
        }
      }
      return null;
    }

    private static long orMin(@Nullable Long value) {
      return value == null ? Long.MIN_VALUE : value;
    }

    private static <V> NavigableMap<Long, V> navigable(@Nullable SortedMap<Long, V> map) {
      if (map == null) {
        return new TreeMap<>();
      }
      return map instanceof NavigableMap ? (NavigableMap<Long, V>) map : new TreeMap<>(map);
    }
  }
}
