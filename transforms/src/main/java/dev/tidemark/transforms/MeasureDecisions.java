package dev.tidemark.transforms;

import dev.tidemark.transforms.util.BundleStats;
import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.Decision;
import org.apache.beam.sdk.metrics.Distribution;
import org.apache.beam.sdk.metrics.Gauge;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PCollection;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Passes decisions through unchanged, measuring how long an arrival takes to become a decision: the
 * distribution {@code lag.decisionMinusIngestionMillis} (decision time minus the ingestion time of
 * the pane's latest event) and its gauge of the bundle's largest value. The last step before the
 * sinks, so it sees every decision whatever the accumulation mode.
 */
public final class MeasureDecisions
    extends PTransform<PCollection<Decision>, PCollection<Decision>> {

  private MeasureDecisions() {}

  public static MeasureDecisions create() {
    return new MeasureDecisions();
  }

  @Override
  public PCollection<Decision> expand(PCollection<Decision> decisions) {
    return decisions.apply("Measure", ParDo.of(new MeasureFn())).setCoder(decisions.getCoder());
  }

  static final class MeasureFn extends DoFn<Decision, Decision> {
    private final Distribution decisionLag =
        TidemarkMetrics.distribution(TidemarkMetrics.DECISION_LAG);
    private final Gauge decisionLagMax =
        TidemarkMetrics.gauge(TidemarkMetrics.DECISION_LAG + TidemarkMetrics.BUNDLE_MAX);
    private transient @Nullable BundleStats lags;

    @StartBundle
    public void startBundle() {
      lags = new BundleStats();
    }

    @ProcessElement
    public void processElement(@Element Decision decision, OutputReceiver<Decision> out) {
      if (lags != null) {
        lags.add(decision.decisionTime().getMillis() - decision.ingestionTime().getMillis());
      }
      out.output(decision);
    }

    @FinishBundle
    public void finishBundle() {
      if (lags != null) {
        lags.report(decisionLag, decisionLagMax);
      }
    }
  }
}
