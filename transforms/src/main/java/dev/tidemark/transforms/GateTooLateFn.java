package dev.tidemark.transforms;

import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.Event;
import dev.tidemark.transforms.values.TooLateRecord;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Gauge;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.Timer;
import org.apache.beam.sdk.state.TimerMap;
import org.apache.beam.sdk.state.TimerSpec;
import org.apache.beam.sdk.state.TimerSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.SlidingWindows;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TupleTag;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * The too-late gate: decides, before windowing, which of an event's windows Beam would drop as
 * droppably late, diverts those, and guarantees Beam drops nothing else.
 *
 * <p>A DoFn cannot read the watermark, but an event-time timer that fires at {@code T} proves the
 * input watermark has passed {@code T}: Beam fires it only once the watermark is strictly after
 * {@code T} (the FlinkRunner registers it with Flink at {@code T + 1} for this reason), so the
 * watermark is at least {@code T + 1}. The gate keeps {@code bound}: one past the time of the
 * latest timer that fired, so {@code bound <= input watermark}; and one "hold" timer, due only at
 * the end of time, whose output timestamp is {@code bound}, so {@code watermark downstream <=
 * bound}. A window {@code w} of an event is too late iff {@code w.maxTimestamp() + allowedLateness
 * < bound}:
 *
 * <ul>
 *   <li>if the gate says too late, the real watermark is past the window's end plus lateness too
 *       (because {@code bound <= watermark});
 *   <li>if the gate passes a window, the windowing step's watermark is at most {@code bound <=
 *       w.maxTimestamp() + allowedLateness}, so Beam cannot drop it.
 * </ul>
 *
 * <p>The bound moves with "probe" timers that every event registers at the moments Beam's own
 * timers for its windows are due: each window's {@code maxTimestamp()} (its on-time firing) and
 * that plus the allowed lateness (its expiry). A probe at {@code w.maxTimestamp()} fires as soon as
 * the watermark reaches {@code w.end()} and moves the bound, and so the watermark downstream, to
 * that end: the on-time pane fires at the same watermark as it would without the gate, and a
 * watermark that stops exactly at a window's end releases it. Probes hold nothing and are all
 * registered before the watermark reaches them, so no timer ever sets another due timer: the bound
 * at any moment is one past the latest probe the watermark has passed, which makes a replay
 * deterministic, and the gate adds no delay to on-time panes. Between window boundaries the bound
 * (and the watermark downstream) trails the source watermark until the next probe; an event judged
 * against a trailing bound may be accepted as late where the true watermark would have called it
 * too late, never the reverse.
 *
 * <p>State format: the bound and the probe ranges are {@code Long}s and {@code KV<Long, Long>}s in
 * Beam's standard {@code VarLongCoder} and {@code KvCoder} ({@code beam:coder:varint:v1}, {@code
 * beam:coder:kv:v1}), without a Tidemark format version: their encodings are fixed by Beam's
 * portability spec and cannot change without a new URN, so a savepoint's cells stay readable by
 * later releases. What a cell means changes only with a new state id (see {@link
 * DeduplicateEvents}).
 *
 * <p>Shards: each key of the input is one shard with its own bound and hold. A shard probes the
 * window ends of its own events and of the other shards' events, which {@link ComputeFeatures}
 * tells it of as a {@code null} at their timestamp: every shard's bound then follows the window
 * ends of the whole stream, and a shard without events of its own does not hold the watermark.
 * Probes stay idempotent, so hearing of a window period twice, or after the watermark passed it,
 * changes nothing. A shard at or above the configured count (a job restored with fewer shards)
 * receives nothing any more; its first timer releases its hold and clears its state.
 *
 * <p>Input: {@code KV<shard, event>}; one {@code null} seed per shard at the minimum timestamp sets
 * the first hold (until it arrives, its pending element holds the watermark at the minimum). Main
 * output: {@code KV<bound, event>}, the bound the windowing step uses to drop the event's missed
 * windows ({@code partiallyLate} events). State: one cell per shard, cleared when the hold timer
 * fires at the end of time, and the pending probes: at most two per window period between the
 * watermark and the latest event time plus a window size and the allowed lateness.
 */
final class GateTooLateFn extends DoFn<KV<Integer, @Nullable Event>, KV<Instant, Event>> {
  static final String BOUND_STATE = "bound";
  // The probe ranges are of window max timestamps (plus lateness); earlier releases kept window
  // ends under "endProbes" and "expiryProbes", hence new ids (see the state format below).
  static final String ON_TIME_PROBES_STATE = "onTimeProbes";
  static final String EXPIRY_PROBES_STATE = "closingProbes";
  static final String HOLD_TIMER = "hold";
  static final String PROBES = "probes";

  @StateId(BOUND_STATE)
  private final StateSpec<ValueState<Long>> boundSpec = StateSpecs.value(VarLongCoder.of());

  @StateId(ON_TIME_PROBES_STATE)
  private final StateSpec<ValueState<KV<Long, Long>>> endProbesSpec =
      StateSpecs.value(KvCoder.of(VarLongCoder.of(), VarLongCoder.of()));

  @StateId(EXPIRY_PROBES_STATE)
  private final StateSpec<ValueState<KV<Long, Long>>> expiryProbesSpec =
      StateSpecs.value(KvCoder.of(VarLongCoder.of(), VarLongCoder.of()));

  @TimerId(HOLD_TIMER)
  private final TimerSpec holdSpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

  @TimerFamily(PROBES)
  private final TimerSpec probesSpec = TimerSpecs.timerMap(TimeDomain.EVENT_TIME);

  private final SlidingWindows windowFn;
  private final Duration allowedLateness;
  private final int shards;
  private final String keyName;
  private final TupleTag<KV<Instant, Event>> mainTag;
  private final TupleTag<TooLateRecord> tooLateTag;

  private final Counter windowed = TidemarkMetrics.counter(TidemarkMetrics.WINDOWED);
  private final Counter tooLate = TidemarkMetrics.counter(TidemarkMetrics.TOO_LATE);
  private final Counter partiallyLate = TidemarkMetrics.counter(TidemarkMetrics.PARTIALLY_LATE);
  private final Gauge watermarkLag = TidemarkMetrics.gauge(TidemarkMetrics.GATE_WATERMARK_LAG);

  GateTooLateFn(
      SlidingWindows windowFn,
      Duration allowedLateness,
      int shards,
      String keyName,
      TupleTag<KV<Instant, Event>> mainTag,
      TupleTag<TooLateRecord> tooLateTag) {
    this.windowFn = windowFn;
    this.allowedLateness = allowedLateness;
    this.shards = shards;
    this.keyName = keyName;
    this.mainTag = mainTag;
    this.tooLateTag = tooLateTag;
  }

  /** Whether Beam would drop {@code window} once the watermark is at {@code watermark}. */
  static boolean isExpired(BoundedWindow window, Duration allowedLateness, Instant watermark) {
    return saturatedAdd(window.maxTimestamp().getMillis(), allowedLateness.getMillis())
        < watermark.getMillis();
  }

  /**
   * {@code time + offset} for a non-negative offset, held at {@link Long#MAX_VALUE} rather than
   * overflowing (Joda's {@code plus} throws), so no allowed lateness makes an event throw here.
   */
  static long saturatedAdd(long time, long offset) {
    return time > Long.MAX_VALUE - offset ? Long.MAX_VALUE : time + offset;
  }

  @ProcessElement
  public void processElement(
      @Element KV<Integer, @Nullable Event> element,
      @Timestamp Instant timestamp,
      @StateId(BOUND_STATE) ValueState<Long> boundState,
      @StateId(ON_TIME_PROBES_STATE) ValueState<KV<Long, Long>> endProbes,
      @StateId(EXPIRY_PROBES_STATE) ValueState<KV<Long, Long>> expiryProbes,
      @TimerId(HOLD_TIMER) Timer hold,
      @TimerFamily(PROBES) TimerMap probes,
      MultiOutputReceiver out) {
    Event event = element.getValue();
    Long stored = boundState.read();
    Instant bound = stored == null ? BoundedWindow.TIMESTAMP_MIN_VALUE : new Instant(stored);
    if (event == null) {
      if (timestamp.isAfter(BoundedWindow.TIMESTAMP_MIN_VALUE)) {
        // Another shard's event time: probe its windows as if the event were ours.
        probeWindows(windowFn.assignWindows(timestamp), bound, endProbes, expiryProbes, probes);
      } else if (stored == null) {
        // The seed: hold the output watermark at the bound from now on.
        boundState.write(bound.getMillis());
        hold.withOutputTimestamp(bound).set(GlobalWindow.INSTANCE.maxTimestamp());
      }
      return;
    }
    Collection<IntervalWindow> windows = windowFn.assignWindows(event.eventTime());
    List<IntervalWindow> missed = new ArrayList<>();
    for (IntervalWindow window : windows) {
      if (isExpired(window, allowedLateness, bound)) {
        missed.add(window);
      }
    }
    probeWindows(windows, bound, endProbes, expiryProbes, probes);
    if (!missed.isEmpty()) {
      missed.sort((a, b) -> a.start().compareTo(b.start()));
      boolean partial = missed.size() < windows.size();
      (partial ? partiallyLate : tooLate).inc();
      out.get(tooLateTag)
          .output(
              new TooLateRecord(
                  event.source(),
                  event.id(),
                  keyName,
                  event.key(),
                  event.eventTime(),
                  missed,
                  partial,
                  event.ingestionTime(),
                  bound));
      if (!partial) {
        return;
      }
    }
    windowed.inc();
    out.get(mainTag).output(KV.of(bound, event));
  }

  /** Registers the probes of those of {@code windows} that have not expired at {@code bound}. */
  private void probeWindows(
      Collection<IntervalWindow> windows,
      Instant bound,
      ValueState<KV<Long, Long>> endProbes,
      ValueState<KV<Long, Long>> expiryProbes,
      TimerMap probes) {
    long firstEnd = Long.MAX_VALUE;
    long lastEnd = Long.MIN_VALUE;
    for (IntervalWindow window : windows) {
      if (!isExpired(window, allowedLateness, bound)) {
        firstEnd = Math.min(firstEnd, window.maxTimestamp().getMillis());
        lastEnd = Math.max(lastEnd, window.maxTimestamp().getMillis());
      }
    }
    if (firstEnd <= lastEnd) {
      probeRange(firstEnd, lastEnd, 0, bound, endProbes, probes);
      probeRange(firstEnd, lastEnd, allowedLateness.getMillis(), bound, expiryProbes, probes);
    }
  }

  /**
   * Registers probes at the window max timestamps {@code firstEnd..lastEnd} (one window period
   * apart) plus {@code offset}, except those that cannot move the bound any more. {@code
   * registered} remembers the last contiguous range registered, so consecutive events do not
   * register the same probes again (registering one twice would be harmless: probes are keyed by
   * their time).
   */
  private void probeRange(
      long firstEnd,
      long lastEnd,
      long offset,
      Instant bound,
      ValueState<KV<Long, Long>> registered,
      TimerMap probes) {
    long limit = GlobalWindow.INSTANCE.maxTimestamp().getMillis();
    // Probes at or after the end of the global window are never set: clamp there, which also
    // keeps the loop below from overflowing.
    long from = Math.min(saturatedAdd(firstEnd, offset), limit);
    long to = Math.min(saturatedAdd(lastEnd, offset), limit);
    KV<Long, Long> range = registered.read();
    long step = windowFn.getPeriod().getMillis();
    for (long at = from; at <= to; at += step) {
      boolean known = range != null && at >= range.getKey() && at <= range.getValue();
      if (!known && at >= bound.getMillis() && at < limit) {
        // Holding at its own time, a probe never holds the watermark below the bound; it only
        // gives its callback that timestamp, so the callback may move the hold up to it.
        Instant time = new Instant(at);
        probes.get(Long.toString(at)).withOutputTimestamp(time).set(time);
      }
    }
    boolean adjoins =
        range != null && from <= range.getValue() + step && to >= range.getKey() - step;
    registered.write(
        adjoins
            ? KV.of(Math.min(from, range.getKey()), Math.max(to, range.getValue()))
            : KV.of(from, to));
  }

  @OnTimerFamily(PROBES)
  public void onProbe(
      OnTimerContext context,
      @Key Integer shard,
      @StateId(BOUND_STATE) ValueState<Long> boundState,
      @StateId(ON_TIME_PROBES_STATE) ValueState<KV<Long, Long>> endProbes,
      @StateId(EXPIRY_PROBES_STATE) ValueState<KV<Long, Long>> expiryProbes,
      @TimerId(HOLD_TIMER) Timer hold) {
    if (shard >= shards) {
      // No event or probe reaches this shard any more: it protects nothing, and its hold would
      // stop the watermark downstream for good.
      hold.clear();
      boundState.clear();
      endProbes.clear();
      expiryProbes.clear();
      return;
    }
    Long stored = boundState.read();
    // Fired at T: the watermark is at least T + 1 (T stays below the end of the global window).
    long bound =
        Math.max(stored == null ? Long.MIN_VALUE : stored, context.fireTimestamp().getMillis() + 1);
    boundState.write(bound);
    watermarkLag.set(System.currentTimeMillis() - bound);
    hold.withOutputTimestamp(new Instant(bound)).set(GlobalWindow.INSTANCE.maxTimestamp());
  }

  @OnTimer(HOLD_TIMER)
  public void onEndOfTime(
      @StateId(BOUND_STATE) ValueState<Long> boundState,
      @StateId(ON_TIME_PROBES_STATE) ValueState<KV<Long, Long>> endProbes,
      @StateId(EXPIRY_PROBES_STATE) ValueState<KV<Long, Long>> expiryProbes) {
    boundState.clear();
    endProbes.clear();
    expiryProbes.clear();
  }
}
