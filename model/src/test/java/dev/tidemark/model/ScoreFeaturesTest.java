package dev.tidemark.model;

import static dev.tidemark.model.ScoringAssertions.assertFailsMentioning;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThanOrEqualTo;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.sameInstance;

import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.DeadLetterReason;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.PaymentFeatures;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.ListCoder;
import org.apache.beam.sdk.metrics.DistributionResult;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithFailures;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * ScoreFeatures in a pipeline: windows kept, determinism, dead letters for rows that cannot be
 * scored, and a clear construction or start-up failure for every kind of unusable model.
 */
public class ScoreFeaturesTest {
  @ClassRule public static final TemporaryFolder TMP = new TemporaryFolder();
  @Rule public final transient TestPipeline p = TestPipeline.create();
  @Rule public final TemporaryFolder dir = new TemporaryFolder();

  private static final List<Decision> DECISIONS = TestModels.decisions(40, 5);

  /** The account whose features the NaN test turns into NaN. */
  private static final String NAN_ACCOUNT = "acct-3";

  private static Path xgbModel;
  private static Path onnxModel;

  /** 100 decisions for the batch wait's tests. */
  private static final List<Decision> WAIT_DECISIONS = TestModels.decisions(100, 11);

  /**
   * The batch wait's clock, shared by every DoFn instance of the JVM: each reading is one
   * millisecond later, so a 3 ms wait cuts every batch at its fourth row.
   */
  private static final AtomicLong NOW = new AtomicLong();

  private static final class SteppingClock implements BatchWait.Clock {
    private static final long serialVersionUID = 1L;

    @Override
    public long nanos() {
      return NOW.addAndGet(1_000_000L);
    }
  }

  @BeforeClass
  public static void models() throws Exception {
    xgbModel = TestModels.xgboost(TMP.getRoot().toPath());
    onnxModel = TestModels.onnx(TMP.getRoot().toPath());
  }

  private PCollection<Decision> decisions() {
    return decisions(DECISIONS);
  }

  /** {@code decisions}, each at its window's last millisecond, in fixed windows. */
  private PCollection<Decision> decisions(List<Decision> decisions) {
    return p.apply(
            "Decisions",
            Create.timestamped(
                    decisions.stream()
                        .map(d -> TimestampedValue.of(d, d.windowEnd().minus(1)))
                        .toList())
                .withCoder(Decision.DecisionCoder.of()))
        .apply("InWindows", Window.into(FixedWindows.of(TestModels.WINDOW)));
  }

  /**
   * {@code decisions} as {@link #decisions(List)} makes them, but in one bundle: the DirectRunner
   * splits a {@code Create} into small bundles, and hands on what one bundle's processing output as
   * one bundle.
   */
  private PCollection<Decision> decisionsInOneBundle(List<Decision> decisions) {
    return p.apply(
            "AllDecisions",
            Create.of(List.of(decisions)).withCoder(ListCoder.of(Decision.DecisionCoder.of())))
        .apply("EachDecision", ParDo.of(new EachDecisionFn()))
        .setCoder(Decision.DecisionCoder.of())
        .apply("InWindows", Window.into(FixedWindows.of(TestModels.WINDOW)));
  }

  /** Each decision of a list, at its window's last millisecond. */
  private static final class EachDecisionFn extends DoFn<List<Decision>, Decision> {
    @ProcessElement
    public void processElement(@Element List<Decision> all, OutputReceiver<Decision> out) {
      for (Decision d : all) {
        out.outputWithTimestamp(d, d.windowEnd().minus(1));
      }
    }
  }

  /** A copy of the XGBoost test model and its sidecar in a fresh directory. */
  private Path copyOfXgbModel() throws Exception {
    Path model = dir.getRoot().toPath().resolve("copy.ubj");
    Files.copy(xgbModel, model);
    Files.copy(ModelMetadata.sidecarOf(xgbModel), ModelMetadata.sidecarOf(model));
    return model;
  }

  private static void writeSidecar(Path model, ModelMetadata metadata) throws Exception {
    metadata.writeTo(ModelMetadata.sidecarOf(model));
  }

  @Test
  public void scoredDecisionsKeepTheirWindows() throws Exception {
    float[] raw = TestModels.xgboostRaw(xgbModel, TestModels.vectors(DECISIONS));
    WithFailures.Result<PCollection<Decision>, DeadLetter> scored =
        decisions()
            .apply(
                "ScoreFeatures",
                ScoreFeatures.of(xgbModel.toString(), ModelEngine.XGBOOST).withBatchSize(3));

    for (int w = 0; w < 4; w++) {
      IntervalWindow window =
          new IntervalWindow(
              TestModels.BASE.plus(TestModels.WINDOW.multipliedBy(w)), TestModels.WINDOW);
      List<Decision> inWindow = new ArrayList<>();
      java.util.HashMap<String, Float> expected = new java.util.HashMap<>();
      for (int i = 0; i < DECISIONS.size(); i++) {
        if (DECISIONS.get(i).windowStart().equals(window.start())) {
          inWindow.add(DECISIONS.get(i));
          expected.put(DECISIONS.get(i).decisionId(), raw[i]);
        }
      }
      PAssert.that(scored.output())
          .inWindow(window)
          .satisfies(ScoringAssertions.scoresEqual(expected, TestModels.XGB_NAME, "XGBoost"));
    }
    PAssert.that(scored.failures()).empty();
    p.run().waitUntilFinish();
  }

  @Test
  public void decisionsWithEqualFeaturesAreScoredOnceAndAllGetTheEnginesScore() throws Exception {
    // Each decision followed by two of the same account's later windows with the same features,
    // as sliding windows over a quiet account make them.
    List<Decision> repeated = new ArrayList<>();
    for (Decision d : DECISIONS) {
      repeated.add(d);
      for (int k = 1; k <= 2; k++) {
        repeated.add(
            Decision.unscored(
                d.key(),
                d.windowStart().plus(TestModels.WINDOW.multipliedBy(4L * k)),
                d.windowEnd().plus(TestModels.WINDOW.multipliedBy(4L * k)),
                "ON_TIME",
                0,
                true,
                true,
                d.features(),
                d.processingTime()));
      }
    }
    float[] raw = TestModels.xgboostRaw(xgbModel, TestModels.vectors(repeated));
    WithFailures.Result<PCollection<Decision>, DeadLetter> scored =
        decisionsInOneBundle(repeated)
            .apply(
                "ScoreFeatures",
                // No wait: a pause of the loaded machine between two rows must not cut a batch.
                ScoreFeatures.of(xgbModel.toString(), ModelEngine.XGBOOST)
                    .withBatchSize(16)
                    .withMaxBatchWait(null));

    PAssert.that(scored.output())
        .satisfies(
            ScoringAssertions.scoresEqual(
                TestModels.byDecisionId(repeated, raw), TestModels.XGB_NAME, "XGBoost"));
    PAssert.that(scored.failures()).empty();
    PipelineResult result = p.run();
    result.waitUntilFinish();

    long inferences = ScoringAssertions.counter(result, ScoringMetrics.NUM_INFERENCES);
    long notSent = ScoringAssertions.counter(result, ScoringMetrics.NUM_REPEATED_ROWS);
    long sent = ScoringAssertions.distributions(result).get(ScoringMetrics.BATCH_SIZE).getSum();
    assertThat(inferences, equalTo((long) repeated.size()));
    assertThat(sent + notSent, equalTo(inferences));
    assertThat(notSent, greaterThan(0L));
    // Repeated rows do not count towards the batch size: in one bundle, the 120 decisions (40
    // distinct rows) go to the engine in three calls of at most 16 distinct rows (16, 16 and 10:
    // a batch ends at its 16th distinct row, before that row's repeats), not in eight calls of 16
    // decisions (five or six distinct rows each).
    DistributionResult sizes =
        ScoringAssertions.distributions(result).get(ScoringMetrics.BATCH_SIZE);
    assertThat(sizes.getCount(), equalTo(3L));
    assertThat(sizes.getMax(), equalTo(16L));
    assertThat(sizes.getSum(), equalTo(42L));
  }

  @Test
  public void aBatchIsFullAtBatchSizeDistinctRowsOrAtItsDecisionCap() {
    ScoreFeaturesFn.DistinctRows rows = new ScoreFeaturesFn.DistinctRows(4);
    // Rows 0, 0, 0, 1, 1, 2, 3: full at the fourth distinct row, the seventh decision.
    float[][] added = {{0f}, {0f}, {0f}, {1f}, {1f}, {2f}};
    for (float[] row : added) {
      assertThat(add(rows, row), is(false));
    }
    assertThat(add(rows, new float[] {3f}), is(true));
    // Each decision's first equal row, which the scorer uses instead of comparing rows again.
    assertThat(
        Arrays.copyOf(rows.firstOf(), rows.size()), equalTo(new int[] {0, 0, 0, 3, 3, 5, 6}));
    assertThat(rows.vector(4), equalTo(new float[] {1f}));
    // The batch holds its decisions: the scorer takes them from it, in the order they came.
    assertThat(rows.decision(4), is(sameInstance(DECISIONS.get(4))));

    // A row without a vector counts as distinct; clear() starts a new batch.
    rows.clear();
    assertThat(add(rows, null), is(false));
    assertThat(add(rows, new float[] {0f}), is(false));
    assertThat(add(rows, new float[] {0f}), is(false));
    assertThat(add(rows, new float[] {Float.NaN}), is(false));
    assertThat(add(rows, new float[] {Float.NaN}), is(false));
    assertThat(add(rows, null), is(true));

    // One row repeated: full at MAX_DECISIONS_PER_ROW times the batch size, not later.
    rows.clear();
    int cap = ScoreFeaturesFn.MAX_DECISIONS_PER_ROW * 4;
    for (int i = 1; i < cap; i++) {
      assertThat("decision " + i, add(rows, new float[] {7f}), is(false));
    }
    assertThat(add(rows, new float[] {7f}), is(true));

    // The cap never passes MAX_BATCH_SIZE decisions, unless the batch size itself is that large.
    assertThat(
        new ScoreFeaturesFn.DistinctRows(256).maxDecisions(),
        is(256 * ScoreFeaturesFn.MAX_DECISIONS_PER_ROW));
    assertThat(
        new ScoreFeaturesFn.DistinctRows(10_000).maxDecisions(), is(ScoreFeatures.MAX_BATCH_SIZE));
    assertThat(
        new ScoreFeaturesFn.DistinctRows(ScoreFeatures.MAX_BATCH_SIZE).maxDecisions(),
        is(ScoreFeatures.MAX_BATCH_SIZE));

    // Batch size 1: every decision is a batch.
    ScoreFeaturesFn.DistinctRows single = new ScoreFeaturesFn.DistinctRows(1);
    assertThat(add(single, new float[] {5f}), is(true));
  }

  /** Adds the next of DECISIONS (by the batch's size) with {@code row} as its feature row. */
  private static boolean add(ScoreFeaturesFn.DistinctRows rows, float[] row) {
    return rows.add(DECISIONS.get(rows.size() % DECISIONS.size()), row);
  }

  @Test
  public void everyOutputKeepsItsTimestampWhateverTheInputOrder() throws Exception {
    // Shuffled, in one Create: part of a full batch is earlier than the element that fills it.
    // Those outputs leave at once, with their own timestamps, not the filling element's.
    List<Decision> shuffled = new ArrayList<>(DECISIONS);
    java.util.Collections.shuffle(shuffled, new java.util.Random(11));
    List<String> expected = new ArrayList<>();
    for (Decision d : DECISIONS) {
      expected.add(d.decisionId() + "@" + d.windowEnd().minus(1));
    }
    PCollection<Decision> scored =
        p.apply(
                Create.timestamped(
                        shuffled.stream()
                            .map(d -> TimestampedValue.of(d, d.windowEnd().minus(1)))
                            .toList())
                    .withCoder(Decision.DecisionCoder.of()))
            .apply(
                "ScoreFeatures",
                ScoreFeatures.of(xgbModel.toString(), ModelEngine.XGBOOST).withBatchSize(4))
            .output();
    PAssert.that(scored.apply(ParDo.of(new IdAtTimestampFn()))).containsInAnyOrder(expected);
    p.run().waitUntilFinish();
  }

  /** A scored decision's id and the timestamp it was output at. */
  private static final class IdAtTimestampFn extends DoFn<Decision, String> {
    @ProcessElement
    public void processElement(
        @Element Decision decision,
        @Timestamp org.joda.time.Instant at,
        OutputReceiver<String> out) {
      out.output(decision.decisionId() + "@" + at);
    }
  }

  @Test
  public void theSameDecisionsTwiceGiveTheSameScores() throws Exception {
    float[] raw = TestModels.onnxRaw(onnxModel, TestModels.vectors(DECISIONS));
    PCollection<Decision> decisions = decisions();
    ScoreFeatures score = ScoreFeatures.of(onnxModel.toString(), ModelEngine.ONNX_RUNTIME);
    WithFailures.Result<PCollection<Decision>, DeadLetter> first =
        decisions.apply("ScoreFirst", score.withBatchSize(5));
    WithFailures.Result<PCollection<Decision>, DeadLetter> second =
        decisions.apply("ScoreSecond", score.withBatchSize(16));
    for (WithFailures.Result<PCollection<Decision>, DeadLetter> run : List.of(first, second)) {
      PAssert.that(run.output())
          .satisfies(
              ScoringAssertions.scoresEqual(
                  TestModels.byDecisionId(DECISIONS, raw), TestModels.ONNX_NAME, "OnnxRuntime"));
      PAssert.that(run.failures()).empty();
    }
    p.run().waitUntilFinish();
  }

  @Test
  public void nanFeaturesAreDeadLetteredAndTheOtherRowsScored() throws Exception {
    float[] raw = TestModels.xgboostRaw(xgbModel, TestModels.vectors(DECISIONS));
    java.util.HashMap<String, Float> expected = TestModels.byDecisionId(DECISIONS, raw);
    Decision poisoned =
        DECISIONS.stream().filter(d -> d.key().equals(NAN_ACCOUNT)).findFirst().get();
    expected.remove(poisoned.decisionId());

    WithFailures.Result<PCollection<Decision>, DeadLetter> scored =
        decisions()
            .apply(
                "ScoreFeatures",
                ScoreFeatures.of(xgbModel.toString(), ModelEngine.XGBOOST)
                    .withBatchSize(8)
                    .withFeatureVector(new NanForOneAccount()));

    PAssert.that(scored.output())
        .satisfies(ScoringAssertions.scoresEqual(expected, TestModels.XGB_NAME, "XGBoost"));
    PAssert.that(scored.failures())
        .containsInAnyOrder(
            new DeadLetter(
                DeadLetterReason.SCORING_FAILED,
                "feature amountSum is NaN; rows with NaN or infinite features are not scored",
                "ScoreFeatures",
                poisoned.decisionId(),
                ModelSession.featuresJson(poisoned.features()).getBytes(StandardCharsets.UTF_8),
                null));
    PipelineResult result = p.run();
    result.waitUntilFinish();
    assertThat(
        ScoringAssertions.counter(result, ScoringMetrics.NUM_INFERENCES),
        equalTo((long) DECISIONS.size() - 1));
    assertThat(ScoringAssertions.counter(result, ScoringMetrics.NUM_FAILED_ROWS), equalTo(1L));
  }

  /** NaN amountSum for {@link #NAN_ACCOUNT}, the real vector for everyone else. */
  static final class NanForOneAccount implements ScoringConfig.FeatureVector {
    private static final long serialVersionUID = 1L;

    @Override
    public float[] apply(Decision decision) {
      float[] vector = decision.features().toVector();
      if (decision.key().equals(NAN_ACCOUNT)) {
        vector[1] = Float.NaN;
      }
      return vector;
    }
  }

  @Test
  public void featureOrderMismatchRefusesToBuildThePipeline() throws Exception {
    Path model = copyOfXgbModel();
    List<String> swapped = new ArrayList<>(PaymentFeatures.SCHEMA.names());
    java.util.Collections.swap(swapped, 1, 2);
    writeSidecar(model, ModelMetadata.of("test-xgb", "3", ModelEngine.XGBOOST, swapped));
    p.enableAbandonedNodeEnforcement(false);

    assertFailsMentioning(
        () -> decisions().apply(ScoreFeatures.of(model.toString(), ModelEngine.XGBOOST)),
        "feature order mismatch: model test-xgb:3 expects features [txnCount, amountMax,"
            + " amountSum, distinctMerchants, distinctCountries]");
  }

  @Test
  public void missingModelFileRefusesToBuildThePipeline() {
    p.enableAbandonedNodeEnforcement(false);
    String missing = dir.getRoot().toPath().resolve("nope.ubj").toString();
    assertFailsMentioning(
        () -> decisions().apply(ScoreFeatures.of(missing, ModelEngine.XGBOOST)),
        "model file not found: " + missing);
  }

  @Test
  public void missingSidecarRefusesToBuildThePipeline() throws Exception {
    Path model = copyOfXgbModel();
    Files.delete(ModelMetadata.sidecarOf(model));
    p.enableAbandonedNodeEnforcement(false);
    assertFailsMentioning(
        () -> decisions().apply(ScoreFeatures.of(model.toString(), ModelEngine.XGBOOST)),
        "model sidecar not found: " + ModelMetadata.sidecarOf(model));
  }

  @Test
  public void badSidecarRefusesToBuildThePipeline() throws Exception {
    Path model = copyOfXgbModel();
    Files.writeString(ModelMetadata.sidecarOf(model), "{\"name\": \"x\", \"version\": ");
    p.enableAbandonedNodeEnforcement(false);
    assertFailsMentioning(
        () -> decisions().apply(ScoreFeatures.of(model.toString(), ModelEngine.XGBOOST)),
        "is not valid JSON");
  }

  @Test
  public void wrongEngineRefusesToBuildThePipeline() {
    p.enableAbandonedNodeEnforcement(false);
    assertFailsMentioning(
        () -> decisions().apply(ScoreFeatures.of(xgbModel.toString(), ModelEngine.ONNX_RUNTIME)),
        "is a XGBoost model (sidecar "
            + xgbModel
            + ".json) but the engine is set to OnnxRuntime; leave --modelEngine unset");
  }

  @Test
  public void theSidecarNamesTheEngine() throws Exception {
    // No engine given: each model scores on the engine its sidecar names.
    float[][] rows = TestModels.vectors(DECISIONS);
    PCollection<Decision> input = decisions();
    PAssert.that(input.apply("Xgb", ScoreFeatures.of(xgbModel.toString())).output())
        .satisfies(
            ScoringAssertions.scoresEqual(
                TestModels.byDecisionId(DECISIONS, TestModels.xgboostRaw(xgbModel, rows)),
                TestModels.XGB_NAME,
                "XGBoost"));
    PAssert.that(input.apply("Onnx", ScoreFeatures.of(onnxModel.toString())).output())
        .satisfies(
            ScoringAssertions.scoresEqual(
                TestModels.byDecisionId(DECISIONS, TestModels.onnxRaw(onnxModel, rows)),
                TestModels.ONNX_NAME,
                "OnnxRuntime"));
    p.run().waitUntilFinish();
  }

  @Test
  public void wrongModelVersionRefusesToBuildThePipeline() {
    p.enableAbandonedNodeEnforcement(false);
    assertFailsMentioning(
        () ->
            decisions()
                .apply(
                    ScoreFeatures.of(xgbModel.toString(), ModelEngine.XGBOOST)
                        .withModelVersion("4")),
        "is version '3' in its sidecar, not '4'");
  }

  @Test
  public void corruptModelFileFailsAtStartUp() throws Exception {
    Path model = copyOfXgbModel();
    Files.write(model, "this is not a booster".getBytes(StandardCharsets.UTF_8));
    writeSidecar(
        model,
        ModelMetadata.of("test-xgb", "3", ModelEngine.XGBOOST, PaymentFeatures.SCHEMA.names()));
    decisions().apply(ScoreFeatures.of(model.toString(), ModelEngine.XGBOOST));

    assertFailsMentioning(() -> p.run(), "cannot load " + model + " as a XGBoost model");
  }

  @Test
  public void modelFileThatDoesNotMatchItsSidecarFailsAtStartUp() throws Exception {
    Path model = copyOfXgbModel();
    Files.write(model, "this is not a booster".getBytes(StandardCharsets.UTF_8));
    decisions().apply(ScoreFeatures.of(model.toString(), ModelEngine.XGBOOST));

    assertFailsMentioning(() -> p.run(), "does not match its sidecar: SHA-256 ");
  }

  @Test
  public void modelOfAnotherEngineThanItsSidecarSaysFailsAtStartUp() throws Exception {
    Path model = dir.getRoot().toPath().resolve("actually-xgboost.onnx");
    Files.copy(xgbModel, model);
    writeSidecar(
        model,
        ModelMetadata.of(
            "test-logreg", "3", ModelEngine.ONNX_RUNTIME, PaymentFeatures.SCHEMA.names()));
    decisions().apply(ScoreFeatures.of(model.toString(), ModelEngine.ONNX_RUNTIME));

    assertFailsMentioning(() -> p.run(), "cannot load " + model + " as a OnnxRuntime model");
  }

  @Test
  public void unknownFileSystemSchemeFailsAtStartUp() {
    decisions().apply(ScoreFeatures.of("nosuchfs://bucket/model.ubj", ModelEngine.XGBOOST));
    assertFailsMentioning(
        () -> p.run(), "put the Beam filesystem for that scheme on the classpath");
  }

  @Test
  public void fileUrisWork() throws Exception {
    float[] raw = TestModels.xgboostRaw(xgbModel, TestModels.vectors(DECISIONS));
    WithFailures.Result<PCollection<Decision>, DeadLetter> scored =
        decisions()
            .apply(
                "ScoreFeatures",
                ScoreFeatures.of(xgbModel.toUri().toString(), ModelEngine.XGBOOST)
                    .withModelName(TestModels.XGB_NAME)
                    .withModelVersion(TestModels.VERSION));
    PAssert.that(scored.output())
        .satisfies(
            ScoringAssertions.scoresEqual(
                TestModels.byDecisionId(DECISIONS, raw), TestModels.XGB_NAME, "XGBoost"));
    PAssert.that(scored.failures()).empty();
    PipelineResult result = p.run();
    result.waitUntilFinish();
    assertThat(
        ScoringAssertions.distributions(result).get(ScoringMetrics.LOAD_LATENCY_MILLIS).getCount(),
        greaterThan(0L));
  }

  @Test
  public void configurationIsValidatedWithHowToFixIt() {
    ScoreFeatures score = ScoreFeatures.of(xgbModel.toString(), ModelEngine.XGBOOST);
    assertFailsMentioning(() -> score.withBatchSize(0), "set it with withBatchSize(...)");
    assertFailsMentioning(() -> score.withThreshold(1.5), "threshold must be in [0, 1], got 1.5");
    assertFailsMentioning(
        () -> score.withMaxBufferingDelay(org.joda.time.Duration.ZERO),
        "set it with withMaxBufferingDelay(...)");
    assertFailsMentioning(() -> ScoreFeatures.of(" ", ModelEngine.XGBOOST), "model URI must be");
    assertThat(score.withBatchSize(7).batchSize(), is(7));
    assertThat(score.batchSize(), is(ScoreFeatures.DEFAULT_BATCH_SIZE));
  }

  // ---------------------------------------------------------------- the max batch wait

  /**
   * Batches cut by the wait (every batch in one bundle, so only the wait or a full batch cuts one)
   * score every row as the raw engine does: decisions do not depend on the wait.
   */
  private void assertWaitCutsBatchesAndScoresEqualRaw(ModelEngine engine) throws Exception {
    boolean xgb = engine == ModelEngine.XGBOOST;
    Path model = xgb ? xgbModel : onnxModel;
    float[][] rows = TestModels.vectors(WAIT_DECISIONS);
    float[] raw = xgb ? TestModels.xgboostRaw(model, rows) : TestModels.onnxRaw(model, rows);
    WithFailures.Result<PCollection<Decision>, DeadLetter> scored =
        decisionsInOneBundle(WAIT_DECISIONS)
            .apply(
                "ScoreFeatures",
                ScoreFeatures.of(model.toString(), engine)
                    .withBatchSize(64)
                    .withMaxBatchWait(Duration.millis(3))
                    .withBatchWaitClock(new SteppingClock()));
    PAssert.that(scored.output())
        .satisfies(
            ScoringAssertions.scoresEqual(
                TestModels.byDecisionId(WAIT_DECISIONS, raw),
                xgb ? TestModels.XGB_NAME : TestModels.ONNX_NAME,
                engine.djlName()));
    PAssert.that(scored.failures()).empty();
    PipelineResult result = p.run();
    result.waitUntilFinish();

    DistributionResult sizes =
        ScoringAssertions.distributions(result).get(ScoringMetrics.BATCH_SIZE);
    assertThat(sizes.getSum(), equalTo(100L));
    assertThat("the wait cut every batch at its fourth row", sizes.getMax(), lessThanOrEqualTo(4L));
    assertThat(sizes.getCount(), greaterThanOrEqualTo(25L));
  }

  @Test
  public void xgboostBatchesCutByTheWaitScoreAsTheRawEngine() throws Exception {
    assertWaitCutsBatchesAndScoresEqualRaw(ModelEngine.XGBOOST);
  }

  @Test
  public void onnxBatchesCutByTheWaitScoreAsTheRawEngine() throws Exception {
    assertWaitCutsBatchesAndScoresEqualRaw(ModelEngine.ONNX_RUNTIME);
  }

  @Test
  public void theWaitIsAPositiveDurationOrNone() {
    ScoreFeatures score = ScoreFeatures.of(xgbModel.toString());
    assertThat(score.maxBatchWait(), is(ScoreFeatures.DEFAULT_MAX_BATCH_WAIT));
    assertThat(score.withMaxBatchWait(null).maxBatchWait(), nullValue());
    assertThat(score.withMaxBatchWait(Duration.millis(2)).maxBatchWait(), is(Duration.millis(2)));
    assertFailsMentioning(
        () -> score.withMaxBatchWait(Duration.ZERO), "set it with withMaxBatchWait(...)");
  }
}
