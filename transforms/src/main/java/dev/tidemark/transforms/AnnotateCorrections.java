package dev.tidemark.transforms;

import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Decision.Correction;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.DoubleCoder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.ListCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.state.MapState;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.Timer;
import org.apache.beam.sdk.state.TimerSpec;
import org.apache.beam.sdk.state.TimerSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.DefaultTrigger;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.NonMergingWindowFn;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.transforms.windowing.WindowFn;
import org.apache.beam.sdk.transforms.windowing.WindowMappingFn;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.apache.beam.sdk.values.WindowingStrategy;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * Says of each scored decision what it changes: the first edition of a {@code decisionId} gets
 * {@code correction: none}; every later one gets {@code supersedes} (the version, score and verdict
 * of the edition emitted before it) and {@code correction: refined} (same verdict) or {@code
 * reversed} (allow became review, or review became allow). A consumer that acted on an edition
 * learns from the next one whether to undo it.
 *
 * <p>For accumulating panes only: each pane is the whole window so far, so two editions' verdicts
 * are about the same thing. In discarding mode a pane is a delta, and comparing the verdicts of two
 * deltas says nothing; the pipeline leaves this step out and the fields stay absent.
 *
 * <p>"Before" is by version, not by arrival: Beam promises no order between the panes of a window
 * once they leave the windowing step (the DirectRunner runs bundles in parallel and may deliver two
 * panes fired by one arrival in either order; Flink keeps the order, one keyed channel per key). An
 * edition is compared with the latest earlier version this step has seen. When an older edition
 * arrives after a newer one, the newer one was compared with what had arrived before it, and the
 * older one is compared with the version below it; a consumer that applies only versions above the
 * last it applied (as the sinks and {@code ./tidemark act} do) acts on each net change of verdict
 * once.
 *
 * <p>State: per key (the account), a map from each open window (by its end) to the version, score
 * and verdict of every edition seen in it (one per fired pane), in Beam's own map, list, KV,
 * varint, double and UTF-8 coders, whose encodings do not change between Beam releases; what the
 * cell means changes only with a new state id. The step keeps its state in one window that spans
 * all time ({@link AllTime}) and puts each decision back into its own window with its own pane and
 * timestamp: a stateful step in the decisions' windows would get Beam's window garbage-collection
 * timer, whose output timestamp is the window's end, and that holds the step's output watermark (on
 * the FlinkRunner, every step after it) back by the allowed lateness. One event-time timer per key,
 * at the earliest expiry of its open windows (a window's end plus the allowed lateness, after which
 * no pane of it can fire), clears the windows that expired and is set again for the next; it holds
 * no watermark. One key per account rather than per {@code decisionId} matters to a runner that
 * scans its keys with pending timers (the DirectRunner does, on every step).
 *
 * <p>Savepoints: the steps {@code KeyByAccount} and {@code Annotate} keep the names, key and window
 * coders of the builds that kept this state per decision window (state id {@code editions}, one
 * list per key and window), so a savepoint of such a build restores. Its cells stay in their
 * windows, where this step no longer reads them: the first edition after the restore of a window
 * that was open at the savepoint is annotated as a first one ({@code correction: none}), and the
 * old cells are cleared at their windows' expiry, by the timers restored with them (which hold the
 * watermark until then, as before).
 *
 * <p>Counts {@code corrections.refined} and {@code corrections.reversed}; {@code windows.open}
 * rises with a window's first edition and falls at its expiry.
 */
public final class AnnotateCorrections
    extends PTransform<PCollection<Decision>, PCollection<Decision>> {

  private AnnotateCorrections() {}

  public static AnnotateCorrections create() {
    return new AnnotateCorrections();
  }

  @Override
  public PCollection<Decision> expand(PCollection<Decision> decisions) {
    WindowingStrategy<?, ?> strategy = decisions.getWindowingStrategy();
    PCollection<Decision> annotated =
        decisions
            .apply(
                "KeyByAccount",
                MapElements.into(
                        TypeDescriptors.kvs(
                            TypeDescriptors.strings(), TypeDescriptor.of(Decision.class)))
                    .via(decision -> KV.of(decision.key(), decision)))
            .setCoder(KvCoder.of(StringUtf8Coder.of(), Decision.DecisionCoder.of()))
            .apply("WithPane", ParDo.of(new WithPaneFn()))
            .setCoder(
                KvCoder.of(
                    StringUtf8Coder.of(),
                    KvCoder.of(Decision.DecisionCoder.of(), PaneInfo.PaneInfoCoder.INSTANCE)))
            .apply(
                "IntoAllTime",
                Window.<KV<String, KV<Decision, PaneInfo>>>into(new AllTime())
                    .triggering(DefaultTrigger.of())
                    .withAllowedLateness(Duration.ZERO)
                    .discardingFiredPanes())
            .apply("Annotate", ParDo.of(new AnnotateFn(strategy.getAllowedLateness())))
            .setCoder(Decision.DecisionCoder.of());
    // Each decision is emitted into its own window, with its own pane.
    annotated.setWindowingStrategyInternal(strategy);
    return annotated;
  }

  /** A decision's own window: the interval of its features. */
  static IntervalWindow windowOf(Decision decision) {
    return new IntervalWindow(decision.windowStart(), decision.windowEnd());
  }

  /**
   * One window for every element, ending where the global window ends: the global window with the
   * decisions' window coder, so that the annotating step's state and timers keep the coders a
   * savepoint of a build that annotated in the decisions' own windows holds.
   */
  static final class AllTime extends NonMergingWindowFn<Object, IntervalWindow> {
    static final IntervalWindow WINDOW =
        new IntervalWindow(
            BoundedWindow.TIMESTAMP_MIN_VALUE,
            GlobalWindow.INSTANCE.maxTimestamp().plus(Duration.millis(1)));

    @Override
    public Collection<IntervalWindow> assignWindows(AssignContext context) {
      return List.of(WINDOW);
    }

    @Override
    public boolean isCompatible(WindowFn<?, ?> other) {
      return other instanceof AllTime;
    }

    @Override
    public Coder<IntervalWindow> windowCoder() {
      return IntervalWindow.getCoder();
    }

    @Override
    public WindowMappingFn<IntervalWindow> getDefaultWindowMappingFn() {
      throw new UnsupportedOperationException("AllTime windows are not for side inputs");
    }

    @Override
    public boolean equals(@Nullable Object other) {
      return other instanceof AllTime;
    }

    @Override
    public int hashCode() {
      return AllTime.class.hashCode();
    }
  }

  /** Pairs each keyed decision with the pane it came in, checking it came in its own window. */
  static final class WithPaneFn
      extends DoFn<KV<String, Decision>, KV<String, KV<Decision, PaneInfo>>> {
    @ProcessElement
    public void processElement(
        @Element KV<String, Decision> element,
        BoundedWindow window,
        PaneInfo pane,
        OutputReceiver<KV<String, KV<Decision, PaneInfo>>> out) {
      Decision decision = element.getValue();
      if (!windowOf(decision).equals(window)) {
        throw new IllegalStateException(
            "decision "
                + decision.decisionId()
                + " of window "
                + windowOf(decision)
                + " arrived in window "
                + window);
      }
      out.output(KV.of(element.getKey(), KV.of(decision, pane)));
    }
  }

  static final class AnnotateFn extends DoFn<KV<String, KV<Decision, PaneInfo>>, Decision> {
    static final String EDITIONS = "editionsByWindow";
    static final String EXPIRY = "expiry";
    static final String NEXT_EXPIRY = "nextExpiry";

    /**
     * The cells of a restored savepoint whose build kept them per decision window: one key's
     * editions in one window. Only cleared, at that window's expiry.
     */
    static final String WINDOW_EDITIONS = "editions";

    /**
     * Every edition seen, by window (its end, in milliseconds), in version order: version, then
     * score and verdict.
     */
    @StateId(EDITIONS)
    private final StateSpec<MapState<Long, List<KV<Long, KV<Double, String>>>>> editionsSpec =
        StateSpecs.map(
            VarLongCoder.of(),
            ListCoder.of(
                KvCoder.of(VarLongCoder.of(), KvCoder.of(DoubleCoder.of(), StringUtf8Coder.of()))));

    /** When the expiry timer fires: the earliest expiry of the key's open windows. */
    @StateId(NEXT_EXPIRY)
    private final StateSpec<ValueState<Long>> nextExpirySpec = StateSpecs.value(VarLongCoder.of());

    @StateId(WINDOW_EDITIONS)
    private final StateSpec<ValueState<List<KV<Long, KV<Double, String>>>>> windowEditionsSpec =
        StateSpecs.value(
            ListCoder.of(
                KvCoder.of(VarLongCoder.of(), KvCoder.of(DoubleCoder.of(), StringUtf8Coder.of()))));

    @TimerId(EXPIRY)
    private final TimerSpec expirySpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

    private final Duration allowedLateness;
    private final Counter refined =
        TidemarkMetrics.counter(TidemarkMetrics.CORRECTIONS_PREFIX + Correction.REFINED.jsonName());
    private final Counter reversed =
        TidemarkMetrics.counter(
            TidemarkMetrics.CORRECTIONS_PREFIX + Correction.REVERSED.jsonName());

    private final Counter openWindows = TidemarkMetrics.counter(TidemarkMetrics.OPEN_WINDOWS);

    /** Windows opened minus windows expired in this bundle, added to the counter once. */
    private transient long openDelta;

    AnnotateFn(Duration allowedLateness) {
      this.allowedLateness = allowedLateness;
    }

    @StartBundle
    public void startBundle() {
      openDelta = 0;
    }

    @FinishBundle
    public void finishBundle() {
      if (openDelta != 0) {
        openWindows.inc(openDelta);
      }
    }

    @ProcessElement
    public void processElement(
        @Element KV<String, KV<Decision, PaneInfo>> element,
        @Timestamp Instant timestamp,
        @StateId(EDITIONS) MapState<Long, List<KV<Long, KV<Double, String>>>> editionsState,
        @StateId(NEXT_EXPIRY) ValueState<Long> nextExpiry,
        @TimerId(EXPIRY) Timer expiry,
        OutputReceiver<Decision> out) {
      Decision decision = element.getValue().getKey();
      IntervalWindow window = windowOf(decision);
      long end = window.end().getMillis();
      List<KV<Long, KV<Double, String>>> stored = editionsState.get(end).read();
      List<KV<Long, KV<Double, String>>> editions =
          stored == null ? new ArrayList<>() : new ArrayList<>(stored);
      if (editions.isEmpty()) {
        openDelta++;
        long expiresAt = expiryOf(end);
        Long next = nextExpiry.read();
        if (next == null || expiresAt < next) {
          expiry.withNoOutputTimestamp().set(new Instant(expiresAt));
          nextExpiry.write(expiresAt);
        }
      }
      // The edition before this one: the latest earlier version seen.
      int at = 0;
      while (at < editions.size() && editions.get(at).getKey() < decision.version()) {
        at++;
      }
      KV<Long, KV<Double, String>> before = at == 0 ? null : editions.get(at - 1);
      Decision annotated =
          decision.withCorrection(
              before == null
                  ? null
                  : new Decision.Supersedes(
                      before.getKey(), before.getValue().getKey(), before.getValue().getValue()));
      if (annotated.correction() == Correction.REVERSED) {
        reversed.inc();
      } else if (annotated.correction() == Correction.REFINED) {
        refined.inc();
      }
      Decision.Supersedes self = annotated.asSuperseded();
      boolean seen = at < editions.size() && editions.get(at).getKey() == decision.version();
      if (!seen) {
        editions.add(at, KV.of(self.version(), KV.of(self.score(), self.decision())));
        editionsState.put(end, editions);
      }
      out.outputWindowedValue(annotated, timestamp, List.of(window), element.getValue().getValue());
    }

    /**
     * When the window ending at {@code end} expires: its last millisecond plus the allowed
     * lateness, no later than the end of the global window.
     */
    private long expiryOf(long end) {
      long limit = GlobalWindow.INSTANCE.maxTimestamp().getMillis();
      return Math.min(GateTooLateFn.saturatedAdd(end - 1, allowedLateness.getMillis()), limit);
    }

    /**
     * Clears the windows that expired and sets the timer for the next one to expire. A timer of a
     * restored savepoint that kept the editions per decision window fires in that window: it clears
     * that window's cell.
     */
    @OnTimer(EXPIRY)
    public void onExpiry(
        OnTimerContext context,
        BoundedWindow window,
        @StateId(EDITIONS) MapState<Long, List<KV<Long, KV<Double, String>>>> editions,
        @StateId(NEXT_EXPIRY) ValueState<Long> nextExpiry,
        @StateId(WINDOW_EDITIONS) ValueState<List<KV<Long, KV<Double, String>>>> windowEditions,
        @TimerId(EXPIRY) Timer expiry) {
      if (!AllTime.WINDOW.equals(window)) {
        windowEditions.clear();
        openDelta--;
        return;
      }
      long now = context.fireTimestamp().getMillis();
      Long next = null;
      List<Long> expired = new ArrayList<>();
      for (Long end : editions.keys().read()) {
        long expiresAt = expiryOf(end);
        if (expiresAt <= now) {
          expired.add(end);
        } else if (next == null || expiresAt < next) {
          next = expiresAt;
        }
      }
      for (Long end : expired) {
        editions.remove(end);
        openDelta--;
      }
      if (next == null) {
        nextExpiry.clear();
      } else {
        expiry.withNoOutputTimestamp().set(new Instant(next));
        nextExpiry.write(next);
      }
    }
  }
}
