package dev.tidemark.model;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.PaymentFeatures;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.WithFailures;
import org.apache.beam.sdk.values.PCollection;
import org.junit.Rule;
import org.junit.Test;

/**
 * The shipped models: found on the classpath (as in the shaded jar) and at the repository path,
 * with sidecars that match Tidemark's features, scoring like their raw engines.
 */
public class DefaultModelTest {
  @Rule public final transient TestPipeline p = TestPipeline.create();

  private static final List<Decision> DECISIONS = TestModels.decisions(50, 21);

  /** The repository copy, relative to the model module (surefire's working directory). */
  private static Path repoFile(String name) {
    return Paths.get("src/main/resources/models", name);
  }

  @Test
  public void defaultModelScoresFromTheClasspathLikeItsBooster() throws Exception {
    float[] raw =
        TestModels.xgboostRaw(repoFile(DefaultModel.XGBOOST_FILE), TestModels.vectors(DECISIONS));
    WithFailures.Result<PCollection<Decision>, DeadLetter> scored =
        p.apply(Create.of(DECISIONS).withCoder(Decision.DecisionCoder.of()))
            .apply("ScoreFeatures", ScoreFeatures.defaultModel());
    PAssert.that(scored.output())
        .satisfies(
            ScoringAssertions.scoresEqual(
                TestModels.byDecisionId(DECISIONS, raw), DefaultModel.XGBOOST_NAME, "XGBoost"));
    PAssert.that(scored.failures()).empty();
    p.run().waitUntilFinish();
  }

  @Test
  public void onnxAlternativeScoresFromTheRepositoryPathLikeOrt() throws Exception {
    Path model = repoFile(DefaultModel.ONNX_FILE);
    float[] raw = TestModels.onnxRaw(model, TestModels.vectors(DECISIONS));
    WithFailures.Result<PCollection<Decision>, DeadLetter> scored =
        p.apply(Create.of(DECISIONS).withCoder(Decision.DecisionCoder.of()))
            .apply(
                "ScoreFeatures",
                ScoreFeatures.of(model.toString(), ModelEngine.ONNX_RUNTIME)
                    .withModelName(DefaultModel.ONNX_NAME)
                    .withModelVersion(DefaultModel.ONNX_VERSION));
    PAssert.that(scored.output())
        .satisfies(
            ScoringAssertions.scoresEqual(
                TestModels.byDecisionId(DECISIONS, raw), DefaultModel.ONNX_NAME, "OnnxRuntime"));
    PAssert.that(scored.failures()).empty();
    p.run().waitUntilFinish();
  }

  @Test
  public void shippedSidecarsMatchTheFeaturesAndCarryTheirMetrics() throws Exception {
    for (String file : List.of(DefaultModel.XGBOOST_FILE, DefaultModel.ONNX_FILE)) {
      Path model = repoFile(file);
      ModelMetadata metadata =
          ModelMetadata.parse(Files.readAllBytes(ModelMetadata.sidecarOf(model)), file);
      assertThat(metadata.featureNames(), equalTo(PaymentFeatures.SCHEMA.names()));
      assertThat(metadata.modelSha256(), equalTo(LoadedModel.sha256(model)));
      assertThat(metadata.trainingData().get("synthetic").asBoolean(), is(true));
      assertThat(metadata.metrics().get("model").get("aucPr").asDouble(), greaterThan(0.0));
      assertThat(
          metadata.metrics().get("model").get("aucPr").asDouble(),
          greaterThan(metadata.metrics().get("baseline").get("aucPr").asDouble()));
      // The drift tests' reference: the scores on the same evaluation rows as the metrics.
      assertThat(
          metadata.scoreReference().rows(),
          equalTo(metadata.metrics().get("model").get("rows").asLong()));
      assertThat(metadata.driftReference().errorRate(), greaterThan(0.0));
    }
    try (InputStream report =
        DefaultModel.class.getResourceAsStream(DefaultModel.REPORT_RESOURCE)) {
      assertThat(
          new String(report.readAllBytes(), StandardCharsets.UTF_8),
          containsString("synthetic data"));
    }
  }
}
