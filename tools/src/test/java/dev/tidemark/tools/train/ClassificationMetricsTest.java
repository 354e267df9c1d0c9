package dev.tidemark.tools.train;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.closeTo;
import static org.hamcrest.Matchers.equalTo;

import org.junit.Test;

/** The metrics on examples small enough to work out by hand. */
public class ClassificationMetricsTest {
  @Test
  public void perfectRankingHasAreaOne() {
    ClassificationMetrics m =
        ClassificationMetrics.of(
            new double[] {0.9, 0.8, 0.3, 0.1}, new boolean[] {true, true, false, false}, 0.5);
    assertThat(m.aucPr(), closeTo(1.0, 1e-12));
    assertThat(m.rocAuc(), closeTo(1.0, 1e-12));
    assertThat(m.precision(), closeTo(1.0, 1e-12));
    assertThat(m.recall(), closeTo(1.0, 1e-12));
  }

  @Test
  public void mixedRankingMatchesHandComputation() {
    // Descending: 0.9 (+), 0.7 (-), 0.6 (+), 0.2 (-). AP = 0.5*1 + 0.5*(2/3) = 0.8333.
    // ROC-AUC: pairs (+,-): (0.9,0.7) win, (0.9,0.2) win, (0.6,0.7) loss, (0.6,0.2) win = 3/4.
    ClassificationMetrics m =
        ClassificationMetrics.of(
            new double[] {0.9, 0.7, 0.6, 0.2}, new boolean[] {true, false, true, false}, 0.65);
    assertThat(m.aucPr(), closeTo(5.0 / 6.0, 1e-12));
    assertThat(m.rocAuc(), closeTo(0.75, 1e-12));
    assertThat(m.truePositives(), equalTo(1L));
    assertThat(m.falsePositives(), equalTo(1L));
    assertThat(m.precision(), closeTo(0.5, 1e-12));
    assertThat(m.recall(), closeTo(0.5, 1e-12));
  }

  @Test
  public void tiesCountHalfAndAreOneStep() {
    // All scores tied: ROC-AUC 0.5; AP = the positive rate.
    ClassificationMetrics m =
        ClassificationMetrics.of(
            new double[] {1, 1, 1, 1}, new boolean[] {true, false, false, false}, 1);
    assertThat(m.rocAuc(), closeTo(0.5, 1e-12));
    assertThat(m.aucPr(), closeTo(0.25, 1e-12));
  }
}
