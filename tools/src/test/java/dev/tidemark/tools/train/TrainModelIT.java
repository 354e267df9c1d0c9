package dev.tidemark.tools.train;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.model.ModelEngine;
import dev.tidemark.model.ModelMetadata;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.PaymentFeatures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.joda.time.Duration;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * TrainModel end to end on a small labelled file: files, sidecars and report written; the same seed
 * and data give byte-identical models; another seed gives another booster; training for the
 * payments spec (its features in the JVM) gives the same models as the serving transforms.
 */
public class TrainModelIT {
  @ClassRule public static final TemporaryFolder TMP = new TemporaryFolder();

  private static Path data;
  private static TrainingReport first;
  private static TrainingReport second;
  private static SpecTrainingReport fromSpec;
  private static final TrainConfig CONFIG =
      TrainConfig.defaults()
          .withWindows(Duration.standardMinutes(5), Duration.standardMinutes(1))
          .withBoosting(40, 3, 0.3, 0.8)
          .withLogistic(500, 0.5)
          .withDataDescription("LabelledReplayFixture seed 3");

  @BeforeClass
  public static void trainTwice() throws Exception {
    Path root = TMP.getRoot().toPath();
    data = LabelledReplayFixture.write(root.resolve("labelled.ndjson"), 3, 30, 300, 10, 60);
    first = TrainModel.train(data, root.resolve("first"), CONFIG);
    second = TrainModel.train(data, root.resolve("second"), CONFIG);
    // specs/payments.yaml with CONFIG's windows (5 minutes every minute, to keep this test small).
    Path home = Paths.get(System.getProperty("tidemark.home", "..")).toAbsolutePath();
    PipelineSpec payments =
        SpecLoader.parse(
            Files.readString(home.resolve("specs/payments.yaml"))
                .replace("period: PT30S", "period: PT1M"),
            "specs/payments.yaml with period PT1M");
    fromSpec = SpecTrainModel.train(payments, "payments", data, root.resolve("spec"), CONFIG);
  }

  @Test
  public void trainingForThePaymentsSpecGivesTheServingTrainersModels() throws Exception {
    assertThat(fromSpec.spec().windows().period(), equalTo(java.time.Duration.ofMinutes(1)));
    assertThat(fromSpec.data().rows().size(), equalTo(first.windows()));
    assertThat(fromSpec.positiveRows(), equalTo(first.fraudWindows()));
    assertThat(
        Files.readAllBytes(fromSpec.xgboostModel()),
        equalTo(Files.readAllBytes(first.xgboostModel())));
    assertThat(fromSpec.xgboost(), equalTo(first.xgboost()));
    assertThat(fromSpec.logistic(), equalTo(first.logistic()));
    assertThat(fromSpec.baseline(), equalTo(first.baseline()));
    ModelMetadata serving =
        ModelMetadata.parse(
            Files.readAllBytes(ModelMetadata.sidecarOf(first.onnxModel())), "serving");
    ModelMetadata spec =
        ModelMetadata.parse(
            Files.readAllBytes(ModelMetadata.sidecarOf(fromSpec.onnxModel())), "spec");
    assertThat(spec.featureNames(), equalTo(PaymentFeatures.SCHEMA.names()));
    assertThat(spec.training(), equalTo(serving.training()));
    assertThat(spec.metrics(), equalTo(serving.metrics()));
    assertThat(spec.scoreReference(), equalTo(serving.scoreReference()));
    assertThat(
        serving.scoreReference().rows(),
        equalTo(serving.metrics().get("model").get("rows").asLong()));
  }

  @Test
  public void sameSeedAndDataGiveTheSameModelBytes() throws Exception {
    assertThat(
        Files.readAllBytes(second.xgboostModel()),
        equalTo(Files.readAllBytes(first.xgboostModel())));
    assertThat(
        Files.readAllBytes(second.onnxModel()), equalTo(Files.readAllBytes(first.onnxModel())));
    assertThat(
        Files.readString(ModelMetadata.sidecarOf(second.xgboostModel())),
        equalTo(Files.readString(ModelMetadata.sidecarOf(first.xgboostModel()))));
    assertThat(second.markdown(), equalTo(first.markdown()));
  }

  @Test
  public void anotherSeedGivesAnotherBoosterAndTheSameSeedTheSameOne() throws Exception {
    // On the same rows (the feature step's own determinism is the test above).
    java.util.List<LabelledWindow> rows =
        TrainingFeatures.compute(data, CONFIG.windowSize(), CONFIG.windowPeriod()).rows();
    float[][] x = TrainModel.vectors(rows);
    boolean[] y = TrainModel.labels(rows);
    byte[] seed42 = TrainModel.trainBooster(x, y, CONFIG);
    assertThat(TrainModel.trainBooster(x, y, CONFIG), equalTo(seed42));
    assertThat(TrainModel.trainBooster(x, y, CONFIG.withSeed(43)), not(equalTo(seed42)));
  }

  @Test
  public void sidecarsDescribeTheModelsAndTheirData() throws Exception {
    ModelMetadata xgb =
        ModelMetadata.parse(
            Files.readAllBytes(ModelMetadata.sidecarOf(first.xgboostModel())), "xgb sidecar");
    assertThat(xgb.name(), equalTo("tidemark-fraud-xgb"));
    assertThat(xgb.version(), equalTo("1"));
    assertThat(xgb.engine(), equalTo(ModelEngine.XGBOOST));
    assertThat(xgb.featureNames(), equalTo(PaymentFeatures.SCHEMA.names()));
    assertThat(xgb.modelSha256(), equalTo(first.xgboostSha256()));
    assertThat(xgb.trainingData().get("sha256").asText(), equalTo(first.dataSha256()));
    assertThat(xgb.trainingData().get("synthetic").asBoolean(), is(true));
    JsonNode metrics = xgb.metrics();
    assertThat(
        metrics.get("model").get("aucPr").asDouble(),
        equalTo(ClassificationMetrics.round(first.xgboost().aucPr())));
    assertThat(metrics.get("baseline").get("rule").asText(), containsString("txnCount >= "));

    ModelMetadata onnx =
        ModelMetadata.parse(
            Files.readAllBytes(ModelMetadata.sidecarOf(first.onnxModel())), "onnx sidecar");
    assertThat(onnx.engine(), equalTo(ModelEngine.ONNX_RUNTIME));
    assertThat(onnx.inputName(), equalTo("features"));
    assertThat(onnx.outputName(), equalTo("score"));
  }

  @Test
  public void splitIsByTimeAndBothSlicesHaveFraud() {
    assertThat(first.trainFraudWindows(), greaterThan(0));
    assertThat(first.evalFraudWindows(), greaterThan(0));
    assertThat(
        first.trainWindows() + first.evalWindows() + first.purgedWindows(),
        equalTo(first.windows()));
    assertThat(first.xgboost().rows(), equalTo(first.evalWindows()));
    // Windows straddling the split (size / period - 1 starts per account at most) are purged.
    assertThat(first.purgedWindows(), greaterThan(0));
  }

  @Test
  public void reportSaysTheDataIsSyntheticAndComparesWithTheBaseline() throws Exception {
    String md = Files.readString(first.reportFile());
    assertThat(md, containsString("synthetic data"));
    assertThat(md, containsString("Baseline: `txnCount >= " + first.baselineMinTxnCount() + "`"));
    assertThat(md, containsString("| XGBoost `tidemark-fraud-xgb` (default) |"));
    assertThat(md, equalTo(first.markdown()));
    assertThat(
        Json.MAPPER
            .readTree(Files.readAllBytes(ModelMetadata.sidecarOf(first.onnxModel())))
            .has("metrics"),
        is(true));
  }
}
