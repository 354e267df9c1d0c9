package dev.tidemark.tools.train;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.closeTo;
import static org.hamcrest.Matchers.equalTo;

import dev.tidemark.model.OnnxLogisticRegression;
import org.junit.Test;

/** Gradient descent on standardised features, folded back into raw-feature weights. */
public class LogisticRegressionTrainerTest {
  @Test
  public void gradientDescentSeparatesASeparableProblem() {
    float[][] x = {{1, 0, 0, 0, 0}, {2, 0, 0, 0, 0}, {8, 0, 0, 0, 0}, {9, 0, 0, 0, 0}};
    boolean[] y = {false, false, true, true};
    OnnxLogisticRegression fitted = new LogisticRegressionTrainer(2000, 0.5, 0).fit(x, y);
    assertThat(fitted.score(x[0]) < 0.2f && fitted.score(x[3]) > 0.8f, equalTo(true));
    // Folded standardisation: the constant features keep weight 0.
    assertThat((double) fitted.weights()[1], closeTo(0, 1e-9));
  }
}
