package dev.tidemark.model;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.closeTo;
import static org.hamcrest.Matchers.equalTo;

import ai.onnxruntime.NodeInfo;
import ai.onnxruntime.OrtSession;
import ai.onnxruntime.TensorInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** The hand-written ONNX ModelProto loads in ONNX Runtime and computes the plain-Java model. */
public class OnnxLogisticRegressionTest {
  @Rule public final TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void ortScoresEqualPlainJavaTo1e5() throws Exception {
    Path model = TestModels.onnx(tmp.getRoot().toPath());
    SplittableRandom random = new SplittableRandom(99);
    float[][] rows = new float[500][];
    for (int i = 0; i < rows.length; i++) {
      rows[i] = TestModels.features(random, TestModels.BASE).toVector();
    }
    float[] ort = TestModels.onnxRaw(model, rows);
    OnnxLogisticRegression java = TestModels.logistic();
    double maxDiff = 0;
    for (int i = 0; i < rows.length; i++) {
      maxDiff = Math.max(maxDiff, Math.abs(ort[i] - java.score(rows[i])));
      assertThat("row " + i, (double) ort[i], closeTo(java.score(rows[i]), 1e-5));
    }
    assertThat(maxDiff < 1e-5, equalTo(true));
  }

  @Test
  public void graphHasTheDocumentedInputAndOutput() throws Exception {
    Path model = tmp.getRoot().toPath().resolve("m.onnx");
    Files.write(model, TestModels.logistic().toOnnx("g", "doc"));
    try (OrtSession session = TestModels.ortEnvironment().createSession(model.toString())) {
      NodeInfo input = session.getInputInfo().get(OnnxLogisticRegression.INPUT);
      NodeInfo output = session.getOutputInfo().get(OnnxLogisticRegression.OUTPUT);
      assertThat(((TensorInfo) input.getInfo()).getShape(), equalTo(new long[] {-1, 5}));
      assertThat(((TensorInfo) output.getInfo()).getShape(), equalTo(new long[] {-1, 1}));
      assertThat(session.getInputNames().size(), equalTo(1));
      assertThat(session.getOutputNames().size(), equalTo(1));
    }
  }
}
