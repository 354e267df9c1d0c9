package dev.tidemark.transforms;

import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Decision.Correction;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.coders.DoubleCoder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.ListCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
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
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.apache.beam.sdk.values.TypeDescriptors;
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
 * <p>State: keyed by the decision's key, and so per key and window (Beam keeps a stateful step's
 * state per key and window), which is per {@code decisionId}: the version, score and verdict of
 * every edition seen (one per fired pane), in Beam's own list, KV, varint, double and UTF-8 coders,
 * whose encodings do not change between Beam releases; what the cell means changes only with a new
 * state id. An event-time timer at the window's expiry (its end plus the allowed lateness, after
 * which no pane of it can fire) clears it; the timer holds no watermark. Keying by the decision's
 * key rather than by {@code decisionId} gives the same cells under one state key per key instead of
 * one per open window, which matters to a runner that scans its keys with pending timers (the
 * DirectRunner does, on every step).
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
    Duration lateness = decisions.getWindowingStrategy().getAllowedLateness();
    return decisions
        .apply(
            "KeyByAccount",
            MapElements.into(
                    TypeDescriptors.kvs(
                        TypeDescriptors.strings(), TypeDescriptor.of(Decision.class)))
                .via(decision -> KV.of(decision.key(), decision)))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), Decision.DecisionCoder.of()))
        .apply("Annotate", ParDo.of(new AnnotateFn(lateness)))
        .setCoder(Decision.DecisionCoder.of());
  }

  static final class AnnotateFn extends DoFn<KV<String, Decision>, Decision> {
    static final String EDITIONS = "editions";
    static final String EXPIRY = "expiry";

    /** Every edition seen, in version order: version, then score and verdict. */
    @StateId(EDITIONS)
    private final StateSpec<ValueState<List<KV<Long, KV<Double, String>>>>> editionsSpec =
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
        @Element KV<String, Decision> element,
        BoundedWindow window,
        @StateId(EDITIONS) ValueState<List<KV<Long, KV<Double, String>>>> editionsState,
        @TimerId(EXPIRY) Timer expiry,
        OutputReceiver<Decision> out) {
      Decision decision = element.getValue();
      List<KV<Long, KV<Double, String>>> stored = editionsState.read();
      List<KV<Long, KV<Double, String>>> editions =
          stored == null ? new ArrayList<>() : new ArrayList<>(stored);
      if (editions.isEmpty()) {
        openDelta++;
        expiry.withNoOutputTimestamp().set(expiryOf(window));
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
        editionsState.write(editions);
      }
      out.output(annotated);
    }

    /** The window's end plus the allowed lateness, no later than the end of the global window. */
    private Instant expiryOf(BoundedWindow window) {
      long limit = GlobalWindow.INSTANCE.maxTimestamp().getMillis();
      return new Instant(
          Math.min(
              GateTooLateFn.saturatedAdd(
                  window.maxTimestamp().getMillis(), allowedLateness.getMillis()),
              limit));
    }

    @OnTimer(EXPIRY)
    public void onExpiry(
        @StateId(EDITIONS) ValueState<List<KV<Long, KV<Double, String>>>> editions) {
      openDelta--;
      editions.clear();
    }
  }
}
