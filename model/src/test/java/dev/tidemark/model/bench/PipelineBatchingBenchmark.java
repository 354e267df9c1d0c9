package dev.tidemark.model.bench;

import dev.tidemark.model.ModelEngine;
import dev.tidemark.model.ScoreFeatures;
import dev.tidemark.model.ScoringMetrics;
import dev.tidemark.model.TestModels;
import dev.tidemark.transforms.values.Decision;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.DistributionResult;
import org.apache.beam.sdk.metrics.MetricNameFilter;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;

/**
 * Bundle batching against GroupIntoBatches, end to end on the DirectRunner: decisions, 100 per
 * 30-second window (a window's panes fire together), scored with batch size 256; rows per second of
 * the whole pipeline (median of 3 after a warm-up) and the mean batch the engine saw.
 */
final class PipelineBatchingBenchmark {
  private PipelineBatchingBenchmark() {}

  static void run(Path model, ModelEngine engine, int rows) {
    List<TimestampedValue<Decision>> input = new ArrayList<>();
    List<Decision> decisions = TestModels.decisions(rows, 99);
    for (int i = 0; i < decisions.size(); i++) {
      // 100 decisions per 30-second window, like panes of ~100 active accounts firing together.
      input.add(
          TimestampedValue.of(
              decisions.get(i), TestModels.BASE.plus(Duration.standardSeconds(30L * (i / 100)))));
    }
    System.out.printf(
        Locale.ROOT,
        "%n%d decisions, 100 per 30-second window, %s, batch size 256, DirectRunner%n%n",
        rows,
        engine.djlName());
    System.out.println("| batching | pipeline rows/s | mean batch | engine calls |");
    System.out.println("|---|---:|---:|---:|");
    for (ScoreFeatures.Batching batching : ScoreFeatures.Batching.values()) {
      List<Double> rates = new ArrayList<>();
      DistributionResult sizes = null;
      for (int r = 0; r < 4; r++) {
        PipelineOptions options =
            PipelineOptionsFactory.fromArgs(
                    "--runner=DirectRunner",
                    "--enforceImmutability=false",
                    "--enforceEncodability=false")
                .create();
        Pipeline p = Pipeline.create(options);
        p.apply(Create.timestamped(input).withCoder(Decision.DecisionCoder.of()))
            .apply(Window.into(FixedWindows.of(Duration.standardSeconds(30))))
            .apply(
                "ScoreFeatures",
                ScoreFeatures.of(model.toString(), engine)
                    .withBatchSize(256)
                    .withBatching(batching));
        long start = System.nanoTime();
        PipelineResult result = p.run();
        result.waitUntilFinish();
        double seconds = (System.nanoTime() - start) / 1e9;
        if (r > 0) {
          rates.add(rows / seconds);
        }
        for (MetricResult<DistributionResult> d :
            result
                .metrics()
                .queryMetrics(
                    MetricsFilter.builder()
                        .addNameFilter(
                            MetricNameFilter.named(
                                ScoringMetrics.NAMESPACE, ScoringMetrics.BATCH_SIZE))
                        .build())
                .getDistributions()) {
          sizes = d.getAttempted();
        }
      }
      rates.sort(Double::compare);
      System.out.printf(
          Locale.ROOT,
          "| %s | %,.0f | %.1f | %d |%n",
          batching,
          rates.get(rates.size() / 2),
          sizes == null ? 0 : sizes.getMean(),
          sizes == null ? 0 : sizes.getCount());
    }
  }
}
