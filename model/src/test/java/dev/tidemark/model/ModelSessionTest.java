package dev.tidemark.model;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.closeTo;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.sameInstance;

import dev.tidemark.transforms.values.Decision;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * The scoring step without a pipeline: scores equal each raw engine's own prediction for every
 * batch split, twice over; the shared model is loaded once and reference-counted.
 */
public class ModelSessionTest {
  @ClassRule public static final TemporaryFolder TMP = new TemporaryFolder();

  private static Path xgbModel;
  private static Path onnxModel;
  private static final List<Decision> DECISIONS = TestModels.decisions(100, 7);

  @BeforeClass
  public static void models() throws Exception {
    xgbModel = TestModels.xgboost(TMP.getRoot().toPath());
    onnxModel = TestModels.onnx(TMP.getRoot().toPath());
  }

  private static ScoringConfig config(Path model, ModelEngine engine) {
    return ScoreFeatures.of(model.toString(), engine).config();
  }

  /** Scores DECISIONS in consecutive batches of {@code batchSize} (the last one partial). */
  private static double[] scoreInBatches(ModelSession session, int batchSize) {
    double[] scores = new double[DECISIONS.size()];
    for (int from = 0; from < DECISIONS.size(); from += batchSize) {
      List<Decision> batch = DECISIONS.subList(from, Math.min(DECISIONS.size(), from + batchSize));
      ModelSession.Outcomes outcomes = session.score(batch);
      assertThat(outcomes.failures(), is(nullValue()));
      for (int i = 0; i < outcomes.size(); i++) {
        scores[from + i] = outcomes.scored()[i].score();
      }
    }
    return scores;
  }

  @Test
  public void xgboostScoresEqualBoosterPredictForEveryBatchSize() throws Exception {
    float[] raw = TestModels.xgboostRaw(xgbModel, TestModels.vectors(DECISIONS));
    try (ModelSession session = ModelSession.open(config(xgbModel, ModelEngine.XGBOOST))) {
      for (int batchSize : new int[] {1, 7, 64, 100}) {
        double[] scores = scoreInBatches(session, batchSize);
        for (int i = 0; i < raw.length; i++) {
          assertThat("row " + i + " batch " + batchSize, scores[i], equalTo((double) raw[i]));
        }
      }
    }
  }

  @Test
  public void onnxScoresEqualOrtSessionAndPlainJavaForEveryBatchSize() throws Exception {
    float[][] rows = TestModels.vectors(DECISIONS);
    float[] raw = TestModels.onnxRaw(onnxModel, rows);
    try (ModelSession session = ModelSession.open(config(onnxModel, ModelEngine.ONNX_RUNTIME))) {
      for (int batchSize : new int[] {1, 7, 64, 100}) {
        double[] scores = scoreInBatches(session, batchSize);
        for (int i = 0; i < raw.length; i++) {
          assertThat("row " + i + " batch " + batchSize, scores[i], equalTo((double) raw[i]));
          assertThat(scores[i], closeTo(TestModels.logistic().score(rows[i]), 1e-5));
        }
      }
    }
  }

  @Test
  public void sameDecisionsTwiceGiveTheSameScores() {
    try (ModelSession session = ModelSession.open(config(xgbModel, ModelEngine.XGBOOST))) {
      double[] first = scoreInBatches(session, 64);
      double[] second = scoreInBatches(session, 7);
      assertThat(second, equalTo(first));
    }
  }

  @Test
  public void scoredDecisionCarriesLabelModelAndDecisionTime() {
    ScoringConfig config =
        ScoreFeatures.of(xgbModel.toString(), ModelEngine.XGBOOST).withThreshold(0.3).config();
    try (ModelSession session = ModelSession.open(config)) {
      ModelSession.Outcomes outcomes = session.score(DECISIONS);
      for (int i = 0; i < outcomes.size(); i++) {
        Decision scored = outcomes.scored()[i];
        assertThat(scored, is(notNullValue()));
        assertThat(scored.decisionId(), equalTo(DECISIONS.get(i).decisionId()));
        assertThat(scored.features(), equalTo(DECISIONS.get(i).features()));
        assertThat(scored.label(), equalTo(scored.score() >= 0.3 ? "review" : "allow"));
        assertThat(
            scored.model(),
            equalTo(new Decision.ModelRef(TestModels.XGB_NAME, TestModels.VERSION, "XGBoost")));
        assertThat(scored.decisionTime().isAfter(DECISIONS.get(i).processingTime()), is(true));
      }
    }
  }

  @Test
  public void modelIsLoadedOncePerJvmAndClosedByTheLastLease() {
    ScoringConfig config = config(onnxModel, ModelEngine.ONNX_RUNTIME);
    String uri = onnxModel.toString();
    assertThat(SharedModels.references(uri), is(0));
    List<SharedModels.Lease> leases = new ArrayList<>();
    try {
      leases.add(SharedModels.acquire(config));
      leases.add(SharedModels.acquire(config));
      assertThat(leases.get(0).loadedByThisLease(), is(true));
      assertThat(leases.get(1).loadedByThisLease(), is(false));
      assertThat(leases.get(1).model(), sameInstance(leases.get(0).model()));
      assertThat(SharedModels.references(uri), is(2));
    } finally {
      leases.get(0).close();
      leases.get(0).close(); // idempotent
      assertThat(SharedModels.references(uri), is(1));
      leases.get(1).close();
    }
    assertThat(SharedModels.references(uri), is(0));
  }

  @Test
  public void concurrentSetupsShareOneLoad() throws Exception {
    ScoringConfig config = config(xgbModel, ModelEngine.XGBOOST);
    List<Thread> threads = new ArrayList<>();
    List<ModelSession> sessions = java.util.Collections.synchronizedList(new ArrayList<>());
    for (int t = 0; t < 4; t++) {
      Thread thread = new Thread(() -> sessions.add(ModelSession.open(config)));
      threads.add(thread);
      thread.start();
    }
    for (Thread thread : threads) {
      thread.join();
    }
    assertThat(sessions.size(), is(4));
    assertThat(SharedModels.references(xgbModel.toString()), is(4));
    double[] first = null;
    for (ModelSession session : sessions) {
      double[] scores = scoreInBatches(session, 64);
      if (first == null) {
        first = scores;
      }
      assertThat(scores, equalTo(first));
      session.close();
    }
    assertThat(SharedModels.references(xgbModel.toString()), is(0));
  }
}
