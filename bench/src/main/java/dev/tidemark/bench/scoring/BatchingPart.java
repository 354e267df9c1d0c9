package dev.tidemark.bench.scoring;

import dev.tidemark.bench.suite.BenchPart;
import dev.tidemark.bench.suite.BenchProfile;
import dev.tidemark.bench.suite.BenchResults;
import dev.tidemark.bench.suite.ExtraPipelineArgs;
import dev.tidemark.bench.suite.Stats;
import dev.tidemark.model.DefaultModel;
import dev.tidemark.model.ModelEngine;
import dev.tidemark.model.ScoreFeatures;
import dev.tidemark.model.ScoringMetrics;
import dev.tidemark.transforms.values.Decision;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.DistributionResult;
import org.apache.beam.sdk.metrics.MetricNameFilter;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;

/**
 * The scoring transform's two ways to batch rows, end to end on the DirectRunner: {@link
 * ScoreFeatures.Batching#BUNDLE} (the default, within a bundle) against {@link
 * ScoreFeatures.Batching#GROUP_INTO_BATCHES} (Beam's {@code GroupIntoBatches}). Decisions, {@value
 * #PER_WINDOW} per 30-second window (a window's panes fire together), scored by the shipped XGBoost
 * model with batch size {@value #BATCH_SIZE}; rows per second of the whole pipeline, the mean batch
 * the engine saw and the engine calls, from the transform's own batch-size metric. Warm-up runs
 * discarded, then the profile's repeats, medians. Nothing here asserts a speed.
 */
public final class BatchingPart implements BenchPart {
  public static final String NAME = "batching";

  static final int PER_WINDOW = 100;
  static final int BATCH_SIZE = 256;
  static final Duration WINDOW = Duration.standardSeconds(30);
  static final long SEED = 99;

  /** Decisions per run: full and small 20,000, smoke 500. */
  static int rows(BenchProfile profile) {
    return profile.isSmoke() ? 500 : 20_000;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public void run(BenchProfile profile, BenchResults results) throws Exception {
    int rows = rows(profile);
    List<Decision> decisions = ScoringInputs.decisions(rows, SEED);
    List<TimestampedValue<Decision>> input = new ArrayList<>(rows);
    for (int i = 0; i < rows; i++) {
      input.add(
          TimestampedValue.of(
              decisions.get(i), ScoringInputs.BASE.plus(WINDOW.multipliedBy(i / PER_WINDOW))));
    }
    for (ScoreFeatures.Batching batching : ScoreFeatures.Batching.values()) {
      double[] rates = new double[profile.repeats];
      double[] meanBatches = new double[profile.repeats];
      double[] calls = new double[profile.repeats];
      for (int r = 0; r < profile.warmups + profile.repeats; r++) {
        long start = System.nanoTime();
        PipelineResult result = pipeline(input, batching).run();
        result.waitUntilFinish();
        double seconds = (System.nanoTime() - start) / 1e9;
        DistributionResult sizes = batchSizes(result);
        int measured = r - profile.warmups;
        if (measured >= 0) {
          rates[measured] = rows / seconds;
          meanBatches[measured] = sizes.getMean();
          calls[measured] = sizes.getCount();
        }
      }
      results.measure(NAME, batching + " pipeline throughput", Stats.of(rates), "rows/s");
      results.measure(NAME, batching + " mean batch", Stats.of(meanBatches), "rows");
      results.measure(NAME, batching + " engine calls", Stats.of(calls), "calls");
    }
    results.note(
        NAME,
        String.format(
            Locale.ROOT,
            "method: %d decisions, %d per %d-second window, scored by the shipped XGBoost model"
                + " with batch size %d on the DirectRunner (immutability and encodability checks"
                + " off), whole pipeline from Create to the scored output; %d warm-up run(s)"
                + " discarded, median of %d; mean batch and engine calls from the transform's %s"
                + " distribution",
            rows,
            PER_WINDOW,
            WINDOW.getStandardSeconds(),
            BATCH_SIZE,
            profile.warmups,
            profile.repeats,
            ScoringMetrics.BATCH_SIZE));
  }

  private static Pipeline pipeline(
      List<TimestampedValue<Decision>> input, ScoreFeatures.Batching batching) {
    Pipeline pipeline =
        Pipeline.create(
            PipelineOptionsFactory.fromArgs(
                    ExtraPipelineArgs.append(
                        List.of(
                            "--runner=DirectRunner",
                            "--enforceImmutability=false",
                            "--enforceEncodability=false")))
                .create());
    pipeline
        .apply(Create.timestamped(input).withCoder(Decision.DecisionCoder.of()))
        .apply(Window.into(FixedWindows.of(WINDOW)))
        .apply(
            "ScoreFeatures",
            ScoreFeatures.of(DefaultModel.XGBOOST_URI, ModelEngine.XGBOOST)
                .withBatchSize(BATCH_SIZE)
                .withBatching(batching));
    return pipeline;
  }

  /** The transform's batch-size distribution of a finished run. */
  private static DistributionResult batchSizes(PipelineResult result) {
    for (MetricResult<DistributionResult> distribution :
        result
            .metrics()
            .queryMetrics(
                MetricsFilter.builder()
                    .addNameFilter(
                        MetricNameFilter.named(ScoringMetrics.NAMESPACE, ScoringMetrics.BATCH_SIZE))
                    .build())
            .getDistributions()) {
      return distribution.getAttempted();
    }
    throw new IllegalStateException("the run reported no " + ScoringMetrics.BATCH_SIZE);
  }
}
