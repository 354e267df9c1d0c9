package dev.tidemark.transforms;

import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Features;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Gauge;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Instant;

/**
 * Turns each fired pane of {@link ComputeFeatures} into a {@link Decision}: the stable decision id
 * of (key, window), the pane as version, the features, and the clocks. {@code processingTime} is
 * when this step saw the fired pane (the wall clock of the worker); the event and ingestion clocks
 * come from the pane's latest event.
 *
 * <p>Counts {@code decisions} and {@code decisions.EARLY|ON_TIME|LATE}; sets the gauges {@code
 * onTimeWindowEndMillis} and {@code watermarkLag.windowsMillis} at on-time panes.
 */
public final class AssembleDecisions
    extends PTransform<PCollection<KV<String, Features>>, PCollection<Decision>> {

  private AssembleDecisions() {}

  public static AssembleDecisions create() {
    return new AssembleDecisions();
  }

  @Override
  public PCollection<Decision> expand(PCollection<KV<String, Features>> panes) {
    return panes
        .apply("ToDecision", ParDo.of(new AssembleDecisionFn()))
        .setCoder(Decision.DecisionCoder.of());
  }

  /**
   * The pane's timing, with the one a batch run's single pane has in Beam's model: {@code ON_TIME}.
   * The FlinkRunner's batch translation emits combine results as {@code PaneInfo.NO_FIRING} (timing
   * {@code UNKNOWN}) where the DirectRunner gives the on-time pane; in batch the watermark passes
   * every window once, after all input, so that pane is the on-time one. Any other pane keeps its
   * timing.
   */
  public static PaneInfo.Timing timing(PaneInfo pane) {
    return pane.getTiming() == PaneInfo.Timing.UNKNOWN
            && pane.isFirst()
            && pane.isLast()
            && pane.getIndex() == 0
        ? PaneInfo.Timing.ON_TIME
        : pane.getTiming();
  }

  /**
   * One decision per pane. The counters are added to once per bundle: a counter's {@code inc()}
   * looks up the step's metrics container each time, a cost paid per decision otherwise.
   */
  static final class AssembleDecisionFn extends DoFn<KV<String, Features>, Decision> {
    private static final PaneInfo.Timing[] TIMINGS = PaneInfo.Timing.values();

    private final Counter decisions = TidemarkMetrics.counter(TidemarkMetrics.DECISIONS);
    private final Counter[] byTiming = new Counter[TIMINGS.length];
    private final Gauge onTimeWindowEnd = TidemarkMetrics.gauge(TidemarkMetrics.ON_TIME_WINDOW_END);
    private final Gauge watermarkLag = TidemarkMetrics.gauge(TidemarkMetrics.WINDOWS_WATERMARK_LAG);
    private transient long[] counts;
    private transient long latestOnTimeEnd;

    AssembleDecisionFn() {
      for (PaneInfo.Timing timing : TIMINGS) {
        byTiming[timing.ordinal()] =
            TidemarkMetrics.counter(TidemarkMetrics.DECISIONS_PREFIX + timing);
      }
    }

    @StartBundle
    public void startBundle() {
      counts = new long[TIMINGS.length];
      latestOnTimeEnd = Long.MIN_VALUE;
    }

    @ProcessElement
    public void processElement(
        @Element KV<String, Features> pane,
        IntervalWindow window,
        PaneInfo paneInfo,
        OutputReceiver<Decision> out) {
      PaneInfo.Timing timing = timing(paneInfo);
      counts[timing.ordinal()]++;
      if (timing == PaneInfo.Timing.ON_TIME) {
        latestOnTimeEnd = Math.max(latestOnTimeEnd, window.end().getMillis());
      }
      out.output(
          Decision.unscored(
              pane.getKey(),
              window.start(),
              window.end(),
              timing.name(),
              paneInfo.getIndex(),
              paneInfo.isFirst(),
              paneInfo.isLast(),
              pane.getValue(),
              Instant.now()));
    }

    @FinishBundle
    public void finishBundle() {
      if (latestOnTimeEnd != Long.MIN_VALUE) {
        onTimeWindowEnd.set(latestOnTimeEnd);
        watermarkLag.set(System.currentTimeMillis() - latestOnTimeEnd);
      }
      long all = 0;
      for (PaneInfo.Timing timing : TIMINGS) {
        long n = counts[timing.ordinal()];
        if (n > 0) {
          byTiming[timing.ordinal()].inc(n);
          all += n;
        }
      }
      if (all > 0) {
        decisions.inc(all);
      }
    }
  }
}
