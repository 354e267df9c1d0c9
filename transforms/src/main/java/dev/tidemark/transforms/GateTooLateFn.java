package dev.tidemark.transforms;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.beam.sdk.coders.BooleanCoder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.Timer;
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
 * input watermark has reached {@code T}, and a pending timer's output timestamp holds the output
 * watermark. Per shard the gate keeps {@code bound}: the time of its last fired timer, so {@code
 * bound <= input watermark}. Its pending "advance" timer holds the output watermark at {@code
 * bound}, so {@code downstream watermark <= bound}. An event's window {@code w} is too late iff
 * {@code w.maxTimestamp() + allowedLateness < bound}:
 *
 * <ul>
 *   <li>if the gate says too late, the real watermark is past the window's end plus lateness too
 *       (because {@code bound <= watermark});
 *   <li>if the gate passes a window, the windowing step's watermark is at most {@code bound <=
 *       w.maxTimestamp() + allowedLateness}, so Beam cannot drop it.
 * </ul>
 *
 * <p>The bound moves with the watermark through a chain of advance timers on the multiples of
 * {@code step} (the window period, so the bound lands on window ends and on-time panes are not
 * delayed) while events near the bound arrive, and by "nudge" timers set at each new event's
 * timestamp (which fire as soon as the watermark reaches it). A shard that has seen no events near
 * its bound for a window size plus the allowed lateness (at most {@link
 * #MAX_IDLE_FIRES_BEFORE_BACKOFF} steps) doubles its step after each idle firing, so the chain ends
 * in a bounded number of firings when the watermark jumps to infinity. The cost of exactness: the
 * downstream watermark trails the source watermark by up to one step while a shard is active (a
 * window is called too late up to one period after its deadline; until then its events are accepted
 * as late), and by up to half its idle time once a shard has been idle past that threshold; in that
 * state an event is judged against the lagging bound, so it may be accepted as late where the true
 * watermark would have called it too late (never the reverse).
 *
 * <p>Input: {@code KV<shard, event>}; one {@code null} seed per shard at the minimum timestamp
 * starts the chain (before the seed arrives its pending element holds the watermark at the
 * minimum). Main output: {@code KV<bound, event>}, the bound the windowing step must use to drop
 * the event's missed windows ({@code partiallyLate} events). State: four cells per shard, cleared
 * when the chain reaches the end of time.
 */
final class GateTooLateFn
    extends DoFn<KV<Integer, @Nullable PaymentEvent>, KV<Instant, PaymentEvent>> {
  static final String BOUND_STATE = "bound";
  static final String ACTIVE_STATE = "activeSinceLastAdvance";
  static final String IDLE_STATE = "idleAdvances";
  static final String NUDGE_STATE = "pendingNudge";
  static final String ADVANCE_TIMER = "advance";
  static final String NUDGE_TIMER = "nudge";

  /** The most advance firings without events before the step starts doubling. */
  static final int MAX_IDLE_FIRES_BEFORE_BACKOFF = 200;

  private static final int MAX_BACKOFF_SHIFT = 40;

  @StateId(BOUND_STATE)
  private final StateSpec<ValueState<Long>> boundSpec = StateSpecs.value(VarLongCoder.of());

  @StateId(ACTIVE_STATE)
  private final StateSpec<ValueState<Boolean>> activeSpec = StateSpecs.value(BooleanCoder.of());

  @StateId(IDLE_STATE)
  private final StateSpec<ValueState<Integer>> idleSpec = StateSpecs.value(VarIntCoder.of());

  @StateId(NUDGE_STATE)
  private final StateSpec<ValueState<Long>> nudgeSpec = StateSpecs.value(VarLongCoder.of());

  @TimerId(ADVANCE_TIMER)
  private final TimerSpec advanceSpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

  @TimerId(NUDGE_TIMER)
  private final TimerSpec nudgeTimerSpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

  private final SlidingWindows windowFn;
  private final Duration allowedLateness;
  private final Duration step;
  private final int idleFiresBeforeBackoff;
  private final Duration relevance;
  private final TupleTag<TooLateRecord> tooLateTag;

  private final Counter windowed = TidemarkMetrics.counter(TidemarkMetrics.WINDOWED);
  private final Counter tooLate = TidemarkMetrics.counter(TidemarkMetrics.TOO_LATE);
  private final Counter partiallyLate = TidemarkMetrics.counter(TidemarkMetrics.PARTIALLY_LATE);

  private final TupleTag<KV<Instant, PaymentEvent>> mainTag;

  GateTooLateFn(
      SlidingWindows windowFn,
      Duration allowedLateness,
      Duration step,
      TupleTag<KV<Instant, PaymentEvent>> mainTag,
      TupleTag<TooLateRecord> tooLateTag) {
    this.windowFn = windowFn;
    this.allowedLateness = allowedLateness;
    this.step = step;
    long horizon = windowFn.getSize().plus(allowedLateness).getMillis();
    this.idleFiresBeforeBackoff =
        (int) Math.min(MAX_IDLE_FIRES_BEFORE_BACKOFF, 1 + horizon / step.getMillis());
    this.relevance = Duration.millis(horizon).plus(step);
    this.mainTag = mainTag;
    this.tooLateTag = tooLateTag;
  }

  /** Whether Beam would drop {@code window} once the watermark is at {@code watermark}. */
  static boolean isExpired(BoundedWindow window, Duration allowedLateness, Instant watermark) {
    return window.maxTimestamp().plus(allowedLateness).isBefore(watermark);
  }

  @ProcessElement
  public void processElement(
      @Element KV<Integer, @Nullable PaymentEvent> element,
      @StateId(BOUND_STATE) ValueState<Long> boundState,
      @StateId(ACTIVE_STATE) ValueState<Boolean> active,
      @StateId(NUDGE_STATE) ValueState<Long> pendingNudge,
      @TimerId(ADVANCE_TIMER) Timer advance,
      @TimerId(NUDGE_TIMER) Timer nudge,
      MultiOutputReceiver out) {
    PaymentEvent event = element.getValue();
    Long stored = boundState.read();
    Instant bound = stored == null ? BoundedWindow.TIMESTAMP_MIN_VALUE : new Instant(stored);
    if (event == null) {
      // The seed: start the chain, holding the output watermark at the minimum.
      if (stored == null) {
        boundState.write(bound.getMillis());
        advance.withOutputTimestamp(bound).set(bound.plus(step));
      }
      return;
    }
    if (event.eventTime().isBefore(bound.plus(relevance))) {
      // An event near (or behind) the bound: keep the bound fine-grained. Events far ahead of it
      // (catching up from the start, a clock-skewed producer) are handled by their nudge.
      active.write(true);
    }
    Collection<IntervalWindow> windows = windowFn.assignWindows(event.eventTime());
    List<IntervalWindow> missed = new ArrayList<>();
    for (IntervalWindow window : windows) {
      if (isExpired(window, allowedLateness, bound)) {
        missed.add(window);
      }
    }
    if (!missed.isEmpty()) {
      missed.sort((a, b) -> a.start().compareTo(b.start()));
      boolean partial = missed.size() < windows.size();
      (partial ? partiallyLate : tooLate).inc();
      out.get(tooLateTag)
          .output(
              new TooLateRecord(
                  event.source(),
                  event.id(),
                  event.accountId(),
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
    Instant eventTime = event.eventTime();
    Long nudgeAt = pendingNudge.read();
    if (eventTime.isAfter(bound) && (nudgeAt == null || eventTime.getMillis() < nudgeAt)) {
      pendingNudge.write(eventTime.getMillis());
      nudge.withOutputTimestamp(eventTime).set(eventTime);
    }
  }

  @OnTimer(ADVANCE_TIMER)
  public void onAdvance(
      OnTimerContext context,
      @StateId(BOUND_STATE) ValueState<Long> boundState,
      @StateId(ACTIVE_STATE) ValueState<Boolean> active,
      @StateId(IDLE_STATE) ValueState<Integer> idleState,
      @StateId(NUDGE_STATE) ValueState<Long> pendingNudge,
      @TimerId(ADVANCE_TIMER) Timer advance) {
    Instant bound = raiseBound(boundState, context.fireTimestamp());
    Boolean sawEvents = active.read();
    int idle;
    if (sawEvents == null) {
      idle = idleFiresBeforeBackoff + orZero(idleState.read()); // no event yet: back off at once
    } else {
      idle = sawEvents ? 0 : orZero(idleState.read()) + 1;
      active.write(false);
    }
    idleState.write(sawEvents == null ? idle - idleFiresBeforeBackoff + 1 : idle);
    int shift = Math.min(MAX_BACKOFF_SHIFT, Math.max(0, idle - idleFiresBeforeBackoff));
    Instant next = shift == 0 ? nextStep(bound) : bound.plus(step.getMillis() << shift);
    if (!next.isBefore(GlobalWindow.INSTANCE.maxTimestamp())) {
      // The watermark has reached the end of time: nothing can arrive any more.
      boundState.clear();
      active.clear();
      idleState.clear();
      pendingNudge.clear();
      return;
    }
    advance.withOutputTimestamp(bound).set(next);
  }

  @OnTimer(NUDGE_TIMER)
  public void onNudge(
      OnTimerContext context,
      @StateId(BOUND_STATE) ValueState<Long> boundState,
      @StateId(ACTIVE_STATE) ValueState<Boolean> active,
      @StateId(IDLE_STATE) ValueState<Integer> idleState,
      @StateId(NUDGE_STATE) ValueState<Long> pendingNudge,
      @TimerId(ADVANCE_TIMER) Timer advance) {
    pendingNudge.clear();
    if (boundState.read() == null) {
      return; // the chain has already ended
    }
    Instant bound = raiseBound(boundState, context.fireTimestamp());
    active.write(true); // an event sits at the bound now: step finely from here
    idleState.write(0);
    advance.withOutputTimestamp(bound).set(nextStep(bound));
  }

  /**
   * The next multiple of the step after {@code bound}. Steps are the window period, so the bound
   * lands exactly on window ends: an on-time pane fires as soon as the watermark passes its end.
   */
  private Instant nextStep(Instant bound) {
    long millis = bound.getMillis();
    return new Instant(millis - Math.floorMod(millis, step.getMillis()) + step.getMillis());
  }

  private static Instant raiseBound(ValueState<Long> boundState, Instant firedAt) {
    Long stored = boundState.read();
    long bound = Math.max(stored == null ? Long.MIN_VALUE : stored, firedAt.getMillis());
    boundState.write(bound);
    return new Instant(bound);
  }

  private static int orZero(@Nullable Integer value) {
    return value == null ? 0 : value;
  }
}
