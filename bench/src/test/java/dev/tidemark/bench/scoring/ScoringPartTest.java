package dev.tidemark.bench.scoring;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import dev.tidemark.bench.suite.BenchProfile;
import dev.tidemark.transforms.values.Decision;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The pure pieces of the scoring part; the suite's smoke test runs the part itself. */
@RunWith(JUnit4.class)
public class ScoringPartTest {
  @Test
  public void theThreeWaysTakeTurnsAtTheSameBatchSize() throws Exception {
    List<String> ran = new ArrayList<>();
    List<ScoringPasses.Pass> passes =
        List.of(
            batch -> ran.add("raw@" + batch),
            batch -> ran.add("plus@" + batch),
            batch -> ran.add("transform@" + batch));
    BenchProfile noWarmUp = BenchProfile.SMALL.with(null, null, 0, null);

    double[][] rates = ScoringPart.rates(passes, 64, 100, noWarmUp);

    assertThat(rates.length, is(3));
    assertThat(rates[0].length, is(ScoringPart.MIN_PASSES));
    assertThat(ran.size(), is(3 * ScoringPart.MIN_PASSES));
    for (int i = 0; i < ran.size(); i += 3) {
      assertThat(ran.subList(i, i + 3), is(List.of("raw@64", "plus@64", "transform@64")));
    }
    for (double[] row : rates) {
      for (double rate : row) {
        assertThat("rows per second of a pass that took time", rate > 0, is(true));
      }
    }
  }

  @Test
  public void aFigureIsTheMedianOfAtLeastSevenPassesButInTheSmokeProfile() {
    assertThat(ScoringPart.timedPasses(BenchProfile.SMOKE), is(BenchProfile.SMOKE.repeats));
    assertThat(ScoringPart.timedPasses(BenchProfile.SMALL), is(ScoringPart.MIN_PASSES));
    assertThat(ScoringPart.timedPasses(BenchProfile.FULL), is(ScoringPart.MIN_PASSES));
    assertThat(ScoringPart.timedPasses(BenchProfile.FULL.with(null, null, null, 9)), is(9));
  }

  @Test
  public void theRowsAreDistinctAndTheSameForASeed() {
    List<Decision> decisions = ScoringInputs.decisions(2_000, ScoringPart.SEED);
    Set<List<Float>> vectors = new HashSet<>();
    for (Decision decision : decisions) {
      float[] vector = decision.features().toVector();
      List<Float> row = new ArrayList<>();
      for (float value : vector) {
        row.add(value);
      }
      vectors.add(row);
    }
    assertThat(decisions.size(), is(2_000));
    assertThat("no repeated row shortens a batch", vectors.size(), is(2_000));
    assertThat(
        Arrays.equals(
            ScoringInputs.decisions(10, ScoringPart.SEED).get(9).features().toVector(),
            decisions.get(9).features().toVector()),
        is(true));
  }
}
