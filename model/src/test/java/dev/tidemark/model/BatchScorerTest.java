package dev.tidemark.model;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.nullValue;

import dev.tidemark.transforms.values.PaymentFeatures;
import java.util.ArrayList;
import java.util.List;
import org.junit.Test;

/** Failure isolation of one engine call: bad rows fail, good rows in the same batch do not. */
public class BatchScorerTest {
  private static final float POISON = 666f;

  /** A fake engine: score = txnCount / 100; throws for any batch holding a poisoned row. */
  private static final class FakeEngine implements BatchScorer.Engine {
    final List<Integer> calls = new ArrayList<>();

    @Override
    public float[] predict(FeatureBatch batch) {
      calls.add(batch.rows());
      float[] scores = new float[batch.rows()];
      for (int i = 0; i < batch.rows(); i++) {
        float txnCount = batch.values()[i * batch.columns()];
        if (txnCount == POISON) {
          throw new IllegalStateException("engine cannot score txnCount " + txnCount);
        }
        scores[i] = txnCount == 500f ? 5f : txnCount / 100f;
      }
      return scores;
    }
  }

  private static float[] row(float txnCount) {
    return new float[] {txnCount, 10f, 10f, 1f, 1f};
  }

  @Test
  public void engineErrorOnABatchRetriesRowsAloneSoOnlyTheBadRowFails() {
    FakeEngine engine = new FakeEngine();
    BatchScorer scorer =
        new BatchScorer(engine, PaymentFeatures.SCHEMA.names(), new ScoringMetrics());
    float[][] rows = {row(1), row(2), row(POISON), row(4)};

    BatchScorer.Result result = scorer.score(rows);

    assertThat(engine.calls, equalTo(List.of(4, 1, 1, 1, 1)));
    assertThat(result.scores[0], equalTo(0.01f));
    assertThat(result.scores[1], equalTo(0.02f));
    assertThat(result.scores[3], equalTo(0.04f));
    assertThat(result.failed(2), is(true));
    assertThat(result.error(2), containsString("retried alone after its batch of 4 failed"));
    assertThat(result.error(2), containsString("engine cannot score txnCount 666.0"));
    assertThat(result.error(0), is(nullValue()));
  }

  @Test
  public void nonFiniteFeaturesNeverReachTheEngine() {
    FakeEngine engine = new FakeEngine();
    BatchScorer scorer =
        new BatchScorer(engine, PaymentFeatures.SCHEMA.names(), new ScoringMetrics());
    float[][] rows = {
      row(1), {1f, Float.NaN, 1f, 1f, 1f}, row(3), {1f, 1f, Float.POSITIVE_INFINITY, 1f, 1f}
    };

    BatchScorer.Result result = scorer.score(rows);

    assertThat(engine.calls, equalTo(List.of(2)));
    assertThat(result.error(1), containsString("feature amountSum is NaN"));
    assertThat(result.error(3), containsString("feature amountMax is Infinity"));
    assertThat(result.scores[2], equalTo(0.03f));
  }

  @Test
  public void scoresOutsideZeroToOneAreFailuresNotDecisions() {
    BatchScorer scorer =
        new BatchScorer(new FakeEngine(), PaymentFeatures.SCHEMA.names(), new ScoringMetrics());
    BatchScorer.Result result = scorer.score(new float[][] {row(500), row(7)});
    assertThat(result.error(0), containsString("returned 5.0, not a probability in [0, 1]"));
    assertThat(result.scores[1], equalTo(0.07f));
  }

  @Test
  public void wrongVectorLengthIsAFailureWithTheExpectedNames() {
    BatchScorer scorer =
        new BatchScorer(new FakeEngine(), PaymentFeatures.SCHEMA.names(), new ScoringMetrics());
    BatchScorer.Result result = scorer.score(new float[][] {{1f, 2f}});
    assertThat(result.error(0), containsString("has 2 values; the model takes 5"));
  }

  @Test
  public void equalRowsGoToTheEngineOnceAndShareItsAnswer() {
    FakeEngine engine = new FakeEngine();
    BatchScorer scorer =
        new BatchScorer(engine, PaymentFeatures.SCHEMA.names(), new ScoringMetrics());
    float[][] rows = {row(3), row(5), row(3), {1f, Float.NaN, 1f, 1f, 1f}, row(5), row(3)};

    BatchScorer.Result result = scorer.score(rows);

    assertThat(engine.calls, equalTo(List.of(2)));
    assertThat(result.scores[0], equalTo(0.03f));
    assertThat(result.scores[2], equalTo(0.03f));
    assertThat(result.scores[5], equalTo(0.03f));
    assertThat(result.scores[1], equalTo(0.05f));
    assertThat(result.scores[4], equalTo(0.05f));
    assertThat(result.error(3), containsString("feature amountSum is NaN"));
    assertThat(result.anyFailed(), is(true));
    assertThat(result.error(0), is(nullValue()));
  }

  @Test
  public void copiesOfARowTheEngineCannotScoreAllFailAndTheRestAreRetriedOnce() {
    FakeEngine engine = new FakeEngine();
    BatchScorer scorer =
        new BatchScorer(engine, PaymentFeatures.SCHEMA.names(), new ScoringMetrics());
    float[][] rows = {row(POISON), row(1), row(POISON), row(500), row(1)};

    BatchScorer.Result result = scorer.score(rows);

    // One call for the three distinct rows, then each distinct row alone.
    assertThat(engine.calls, equalTo(List.of(3, 1, 1, 1)));
    assertThat(result.error(0), containsString("retried alone after its batch of 3 failed"));
    assertThat(result.error(2), equalTo(result.error(0)));
    assertThat(result.scores[1], equalTo(0.01f));
    assertThat(result.scores[4], equalTo(0.01f));
    assertThat(result.error(3), containsString("returned 5.0, not a probability in [0, 1]"));
    assertThat(result.failed(1), is(false));
  }

  @Test
  public void rowsTheCallerFoundEqualTakeTheFirstOnesAnswerWithoutBeingCompared() {
    // The caller's comparison (ScoreFeaturesFn.DistinctRows) is used as it is: row 2 is declared
    // equal to row 0 although its values differ, so it must take row 0's score, not its own.
    FakeEngine engine = new FakeEngine();
    BatchScorer scorer =
        new BatchScorer(engine, PaymentFeatures.SCHEMA.names(), new ScoringMetrics());
    float[] values = new float[4 * 5];
    float[] counts = {1, 2, 3, 2};
    for (int i = 0; i < counts.length; i++) {
      System.arraycopy(row(counts[i]), 0, values, i * 5, 5);
    }
    BatchScorer.Result result =
        scorer.score(values, 4, new BatchScorer.Result(4), new int[] {0, 1, 0, 1});

    assertThat(engine.calls, equalTo(List.of(2)));
    assertThat(result.scores[0], equalTo(0.01f));
    assertThat(result.scores[1], equalTo(0.02f));
    assertThat(result.scores[2], equalTo(0.01f));
    assertThat(result.scores[3], equalTo(0.02f));
  }
}
