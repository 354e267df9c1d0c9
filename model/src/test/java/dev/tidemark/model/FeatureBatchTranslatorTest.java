package dev.tidemark.model;

import static dev.tidemark.model.ScoringAssertions.assertFailsMentioning;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.equalTo;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import org.junit.Test;

/** Which output is the score, and how each output shape becomes one score per row. */
public class FeatureBatchTranslatorTest {
  private static NDArray named(NDArray array, String name) {
    array.setName(name);
    return array;
  }

  @Test
  public void sklearnStyleProbabilitiesUseThePositiveColumn() {
    TestModels.ortEnvironment();
    try (NDManager manager = NDManager.newBaseManager("OnnxRuntime")) {
      NDList outputs =
          new NDList(
              named(manager.create(new long[] {0, 1, 1}), "label"),
              named(
                  manager.create(new float[] {0.9f, 0.1f, 0.2f, 0.8f, 0.4f, 0.6f}, new Shape(3, 2)),
                  "probabilities"));
      float[] scores =
          new FeatureBatchTranslator(null, "probabilities").processOutput(null, outputs);
      assertThat(scores, equalTo(new float[] {0.1f, 0.8f, 0.6f}));
    }
  }

  @Test
  public void columnAndFlatOutputsAreScoresAsTheyAre() {
    TestModels.ortEnvironment();
    try (NDManager manager = NDManager.newBaseManager("OnnxRuntime")) {
      FeatureBatchTranslator translator = new FeatureBatchTranslator(null, null);
      NDList column =
          new NDList(named(manager.create(new float[] {0.25f, 0.5f}, new Shape(2, 1)), "score"));
      NDList flat = new NDList(named(manager.create(new float[] {0.25f, 0.5f}), "score"));
      assertThat(translator.processOutput(null, column), equalTo(new float[] {0.25f, 0.5f}));
      assertThat(translator.processOutput(null, flat), equalTo(new float[] {0.25f, 0.5f}));
    }
  }

  @Test
  public void ambiguousOrMissingOrMisshapenOutputsSayWhatToFix() {
    TestModels.ortEnvironment();
    try (NDManager manager = NDManager.newBaseManager("OnnxRuntime")) {
      NDList two =
          new NDList(
              named(manager.create(new float[] {0.1f}), "a"),
              named(manager.create(new float[] {0.2f}), "b"));
      assertFailsMentioning(
          () -> new FeatureBatchTranslator(null, null).processOutput(null, two),
          "model has outputs [a, b]; name the score output in the sidecar's 'output' field");
      assertFailsMentioning(
          () -> new FeatureBatchTranslator(null, "score").processOutput(null, two),
          "model has no output named 'score'");
      NDList wide = new NDList(named(manager.create(new float[6], new Shape(2, 3)), "score"));
      assertFailsMentioning(
          () -> new FeatureBatchTranslator(null, null).processOutput(null, wide),
          "expected [N], [N, 1] or [N, 2]");
    }
  }
}
