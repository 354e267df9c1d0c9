package dev.tidemark.model;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.closeTo;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.lessThan;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import org.junit.Test;

/**
 * The shipped logins models ({@code specs/logins.yaml}) in their real engines: sidecars that name
 * the spec's features and the files' hashes; ONNX Runtime scores as the sidecar's weights say; both
 * engines allow a usual login window and challenge a takeover-like one.
 */
public class LoginsModelsTest {
  private static final List<String> LOGINS_FEATURES =
      List.of("attempts", "failures", "distinctIps", "distinctCountries", "distinctDevices");

  /** attempts, failures, distinctIps, distinctCountries, distinctDevices of one user and window. */
  private static final float[][] ROWS = {
    {1, 0, 1, 1, 1}, // one successful login
    {3, 2, 1, 1, 1}, // a mistyped password, then a success
    {14, 13, 9, 5, 2}, // credential stuffing from many addresses abroad, then a success
    {20, 19, 15, 6, 3}
  };

  private static Path file(String name) {
    return Paths.get("src/main/resources/models", name);
  }

  @Test
  public void sidecarsNameTheLoginsFeaturesAndTheirFiles() throws Exception {
    for (String name : List.of("tidemark-logins-xgb-v1.ubj", "tidemark-logins-logreg-v1.onnx")) {
      Path model = file(name);
      ModelMetadata metadata =
          ModelMetadata.parse(Files.readAllBytes(ModelMetadata.sidecarOf(model)), name);
      assertThat(metadata.featureNames(), equalTo(LOGINS_FEATURES));
      assertThat(metadata.modelSha256(), equalTo(LoadedModel.sha256(model)));
      assertThat(metadata.trainingData().get("spec").asText(), equalTo("logins"));
      assertThat(
          metadata.scoreReference().rows(),
          equalTo(metadata.metrics().get("model").get("rows").asLong()));
    }
  }

  @Test
  public void onnxRuntimeScoresAsTheSidecarWeightsSay() throws Exception {
    Path model = file("tidemark-logins-logreg-v1.onnx");
    JsonNode training =
        ModelMetadata.parse(Files.readAllBytes(ModelMetadata.sidecarOf(model)), "logreg")
            .training();
    float[] weights = new float[LOGINS_FEATURES.size()];
    for (int j = 0; j < weights.length; j++) {
      weights[j] =
          (float) training.get("weightsOnRawFeatures").get(LOGINS_FEATURES.get(j)).asDouble();
    }
    OnnxLogisticRegression java =
        new OnnxLogisticRegression(weights, (float) training.get("bias").asDouble());
    float[] ort = TestModels.onnxRaw(model, ROWS);
    for (int i = 0; i < ROWS.length; i++) {
      assertThat((double) ort[i], closeTo(java.score(ROWS[i]), 1e-5));
    }
  }

  @Test
  public void bothEnginesAllowUsualLoginsAndChallengeTakeovers() throws Exception {
    float[][] scores = {
      TestModels.onnxRaw(file("tidemark-logins-logreg-v1.onnx"), ROWS),
      TestModels.xgboostRaw(file("tidemark-logins-xgb-v1.ubj"), ROWS)
    };
    for (float[] engine : scores) {
      assertThat((double) engine[0], lessThan(0.5));
      assertThat((double) engine[1], lessThan(0.5));
      assertThat((double) engine[2], greaterThanOrEqualTo(0.5));
      assertThat((double) engine[3], greaterThanOrEqualTo(0.5));
    }
  }
}
