package dev.tidemark.model;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.lessThanOrEqualTo;

import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Decision;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.DistributionResult;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.WithFailures;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TimestampedValue;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;
import org.junit.runners.Parameterized.Parameters;

/**
 * In a pipeline, for both engines, both batching modes and batch sizes 1, 7 and 64 (100 rows, so
 * the last batch is partial): every decision's score equals the raw engine's own prediction for
 * that row, nothing fails, and the batches the engine saw were no larger than asked.
 */
@RunWith(Parameterized.class)
public class ScoreFeaturesParityTest {
  @ClassRule public static final TemporaryFolder TMP = new TemporaryFolder();
  @Rule public final transient TestPipeline p = TestPipeline.create();

  private static final List<Decision> DECISIONS = TestModels.decisions(100, 3);
  private static Path xgbModel;
  private static Path onnxModel;

  @Parameters(name = "{0} batch {1} {2}")
  public static Iterable<Object[]> cases() {
    return Arrays.asList(
        new Object[][] {
          {ModelEngine.XGBOOST, 1, ScoreFeatures.Batching.BUNDLE},
          {ModelEngine.XGBOOST, 7, ScoreFeatures.Batching.BUNDLE},
          {ModelEngine.XGBOOST, 64, ScoreFeatures.Batching.BUNDLE},
          {ModelEngine.ONNX_RUNTIME, 1, ScoreFeatures.Batching.BUNDLE},
          {ModelEngine.ONNX_RUNTIME, 7, ScoreFeatures.Batching.BUNDLE},
          {ModelEngine.ONNX_RUNTIME, 64, ScoreFeatures.Batching.BUNDLE},
          {ModelEngine.XGBOOST, 7, ScoreFeatures.Batching.GROUP_INTO_BATCHES},
          {ModelEngine.ONNX_RUNTIME, 64, ScoreFeatures.Batching.GROUP_INTO_BATCHES},
        });
  }

  private final ModelEngine engine;
  private final int batchSize;
  private final ScoreFeatures.Batching batching;

  public ScoreFeaturesParityTest(
      ModelEngine engine, int batchSize, ScoreFeatures.Batching batching) {
    this.engine = engine;
    this.batchSize = batchSize;
    this.batching = batching;
  }

  @BeforeClass
  public static void models() throws Exception {
    xgbModel = TestModels.xgboost(TMP.getRoot().toPath());
    onnxModel = TestModels.onnx(TMP.getRoot().toPath());
  }

  @Test
  public void scoresEqualTheRawEngineForEveryRow() throws Exception {
    boolean xgb = engine == ModelEngine.XGBOOST;
    Path model = xgb ? xgbModel : onnxModel;
    float[][] rows = TestModels.vectors(DECISIONS);
    float[] raw = xgb ? TestModels.xgboostRaw(model, rows) : TestModels.onnxRaw(model, rows);

    PCollection<Decision> decisions =
        p.apply(
                "Decisions",
                Create.timestamped(
                        DECISIONS.stream()
                            .map(d -> TimestampedValue.of(d, d.windowEnd().minus(1)))
                            .toList())
                    .withCoder(Decision.DecisionCoder.of()))
            .apply("InWindows", Window.into(FixedWindows.of(TestModels.WINDOW)));
    WithFailures.Result<PCollection<Decision>, DeadLetter> scored =
        decisions.apply(
            "ScoreFeatures",
            ScoreFeatures.of(model.toString(), engine)
                .withBatchSize(batchSize)
                .withBatching(batching));

    PAssert.that(scored.output())
        .satisfies(
            ScoringAssertions.scoresEqual(
                TestModels.byDecisionId(DECISIONS, raw),
                xgb ? TestModels.XGB_NAME : TestModels.ONNX_NAME,
                engine.djlName()));
    PAssert.that(scored.failures()).empty();
    PipelineResult result = p.run();
    result.waitUntilFinish();

    assertThat(ScoringAssertions.counter(result, ScoringMetrics.NUM_INFERENCES), equalTo(100L));
    assertThat(ScoringAssertions.counter(result, ScoringMetrics.FAILED_BATCHES), equalTo(0L));
    DistributionResult sizes =
        ScoringAssertions.distributions(result).get(ScoringMetrics.BATCH_SIZE);
    assertThat(sizes.getSum(), equalTo(100L));
    assertThat(sizes.getMax(), lessThanOrEqualTo((long) batchSize));
    assertThat(
        ScoringAssertions.distributions(result).get(ScoringMetrics.MODEL_BYTE_SIZE).getMax(),
        greaterThan(0L));
  }
}
