package dev.tidemark.pipelines.launch;

import dev.tidemark.transforms.util.TidemarkMetrics;
import java.io.PrintStream;
import java.time.Instant;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.GaugeResult;
import org.apache.beam.sdk.metrics.MetricNameFilter;
import org.apache.beam.sdk.metrics.MetricQueryResults;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.joda.time.Duration;

/**
 * Waits for a running job and prints a progress line every {@link #INTERVAL}: records read,
 * decisions so far, and how far the watermark has got (the end of the latest window whose on-time
 * pane fired). A run shorter than the interval prints nothing.
 */
final class Progress {
  static final Duration INTERVAL = Duration.standardSeconds(5);

  private Progress() {}

  /** Returns once the job has ended; its failure, if any, is thrown as the runner throws it. */
  static void await(PipelineResult result, PrintStream out) {
    long started = System.nanoTime();
    while (true) {
      PipelineResult.State state = result.waitUntilFinish(INTERVAL);
      if (state != null && state.isTerminal()) {
        return;
      }
      out.println(line(result, (System.nanoTime() - started) / 1_000_000_000L));
    }
  }

  static String line(PipelineResult result, long seconds) {
    StringBuilder line = new StringBuilder("tidemark: ").append(seconds).append(" s");
    MetricQueryResults metrics;
    try {
      metrics =
          result
              .metrics()
              .queryMetrics(
                  MetricsFilter.builder()
                      .addNameFilter(MetricNameFilter.inNamespace(TidemarkMetrics.NAMESPACE))
                      .build());
    } catch (UnsupportedOperationException e) {
      return line.append(", running (this runner reports no counters while it runs)").toString();
    }
    long read = 0;
    long decisions = 0;
    for (MetricResult<Long> counter : metrics.getCounters()) {
      String name = counter.getName().getName();
      if (TidemarkMetrics.READ.equals(name)) {
        read += counter.getAttempted();
      } else if (TidemarkMetrics.DECISIONS.equals(name)) {
        decisions += counter.getAttempted();
      }
    }
    long watermark = Long.MIN_VALUE;
    for (MetricResult<GaugeResult> gauge : metrics.getGauges()) {
      if (TidemarkMetrics.ON_TIME_WINDOW_END.equals(gauge.getName().getName())) {
        watermark = Math.max(watermark, gauge.getAttempted().getValue());
      }
    }
    line.append(String.format(", read %,d, decisions %,d", read, decisions));
    line.append(
        watermark == Long.MIN_VALUE
            ? ", no window on time yet"
            : ", watermark past " + Instant.ofEpochMilli(watermark));
    return line.toString();
  }
}
