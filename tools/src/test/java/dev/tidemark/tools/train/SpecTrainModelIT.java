package dev.tidemark.tools.train;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.closeTo;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.junit.Assert.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.model.ModelMetadata;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecException;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.testkit.generate.Workload;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * Training for the logins spec: it reproduces the bundled model from its generated stream, and that
 * model separates the takeover episodes of the later slice. (On payments, TrainModelIT compares
 * training for the spec with the serving trainer.)
 */
public class SpecTrainModelIT {
  @ClassRule public static final TemporaryFolder TMP = new TemporaryFolder();

  private static final Path HOME =
      Paths.get(System.getProperty("tidemark.home", "..")).toAbsolutePath().normalize();
  private static final Path MODELS = HOME.resolve("model/src/main/resources/models");

  @Test
  public void theBundledLoginsModelIsReproducedAndSeparatesTakeovers() throws Exception {
    PipelineSpec spec = SpecLoader.load(HOME.resolve("specs/logins.yaml"));
    ModelMetadata bundledLogistic = sidecar(MODELS.resolve("tidemark-logins-logreg-v1.onnx"));
    ModelMetadata bundledXgboost = sidecar(MODELS.resolve("tidemark-logins-xgb-v1.ubj"));
    spec.checkModelFeatures("specs/logins.yaml", "bundled", bundledLogistic.featureNames());
    spec.checkModelFeatures("specs/logins.yaml", "bundled", bundledXgboost.featureNames());

    // The stream `./tidemark train --spec=specs/logins.yaml` generates, aimed at the spec.
    Path root = TMP.newFolder("logins").toPath();
    Path data = root.resolve(bundledLogistic.trainingData().get("file").asText());
    new EventGenerator(
            GeneratorConfig.trainingStream(Workload.LOGINS)
                .windowSize(spec.windows().size())
                .allowedLateness(spec.windows().allowedLateness())
                .maxOutOfOrderness(spec.clocks().maxOutOfOrderness())
                .build())
        .writeTo(data);
    SpecTrainingReport report =
        SpecTrainModel.train(
            spec,
            "specs/logins.yaml",
            data,
            root.resolve("out"),
            SpecTrainModel.configFor(spec)
                .withDataDescription(bundledLogistic.trainingData().get("madeWith").asText()));

    ModelMetadata logistic = sidecar(report.onnxModel());
    assertThat(logistic.trainingData(), equalTo(bundledLogistic.trainingData()));
    assertThat(logistic.featureNames(), equalTo(spec.featureNames()));
    JsonNode weights = logistic.training().get("weightsOnRawFeatures");
    JsonNode bundledWeights = bundledLogistic.training().get("weightsOnRawFeatures");
    for (String feature : spec.featureNames()) {
      assertThat(
          feature,
          weights.get(feature).asDouble(),
          closeTo(bundledWeights.get(feature).asDouble(), 1e-3));
    }
    assertThat(
        logistic.training().get("bias").asDouble(),
        closeTo(bundledLogistic.training().get("bias").asDouble(), 1e-3));
    assertMetricsClose(logistic, bundledLogistic);
    assertMetricsClose(sidecar(report.xgboostModel()), bundledXgboost);
    // The bundled sidecars' score references are these models' scores on the evaluation slice.
    for (ModelMetadata[] pair :
        List.of(
            new ModelMetadata[] {logistic, bundledLogistic},
            new ModelMetadata[] {sidecar(report.xgboostModel()), bundledXgboost})) {
      assertThat(pair[0].scoreReference().rows(), equalTo(pair[1].scoreReference().rows()));
      assertThat(pair[0].scoreReference().mean(), closeTo(pair[1].scoreReference().mean(), 1e-4));
    }

    // Separation on the later slice, from the models' own scores.
    for (ClassificationMetrics m : List.of(report.logistic(), report.xgboost())) {
      assertThat(m.positives(), greaterThan(50));
      assertThat(m.rocAuc(), greaterThan(0.95));
      assertThat(m.aucPr(), greaterThan(0.7));
      assertThat(m.precision(), greaterThan(0.9));
      assertThat(m.recall(), greaterThan(0.6));
      assertThat(m.aucPr(), greaterThan(report.baseline().aucPr() + 0.5));
    }
    // Per takeover episode (a user's run of positive windows): flagged in at least one window.
    int[] caught = episodesCaught(report);
    assertThat(caught[1], greaterThanOrEqualTo(10));
    assertThat((double) caught[0] / caught[1], greaterThanOrEqualTo(0.9));
    assertThat(
        Files.readString(report.cardFile()),
        containsString("| Logistic regression `tidemark-logins-logreg` (ONNX) |"));
  }

  @Test
  public void aModelOfOtherFeaturesIsRefusedByTheLoginsSpec() throws Exception {
    PipelineSpec spec = SpecLoader.load(HOME.resolve("specs/logins.yaml"));
    ModelMetadata payments = sidecar(MODELS.resolve("tidemark-fraud-logreg-v1.onnx"));
    SpecException e =
        assertThrows(
            SpecException.class,
            () ->
                spec.checkModelFeatures(
                    "specs/logins.yaml", "tidemark-fraud-logreg-v1.onnx", payments.featureNames()));
    assertThat(
        e.getMessage(),
        containsString(
            "features[0]: the spec has 'attempts' where the model tidemark-fraud-logreg-v1.onnx"
                + " has 'txnCount'"));
  }

  /** {caught, total}: eval-slice episodes with a window scored at or above the threshold. */
  private static int[] episodesCaught(SpecTrainingReport report) {
    List<TrainingRow> rows = report.data().rows();
    long split = report.fit().split().getMillis();
    long size = report.config().windowSize().getMillis();
    Map<String, List<TrainingRow>> byKey = new HashMap<>();
    for (TrainingRow row : rows) {
      if (row.positive() && row.windowStart().getMillis() >= split) {
        byKey.computeIfAbsent(row.key(), k -> new ArrayList<>()).add(row);
      }
    }
    int caught = 0;
    int total = 0;
    for (List<TrainingRow> windows : byKey.values()) {
      windows.sort(TrainingRow.TIME_ORDER);
      boolean flagged = false;
      long previousStart = Long.MIN_VALUE;
      for (TrainingRow row : windows) {
        if (previousStart != Long.MIN_VALUE
            && row.windowStart().getMillis() - previousStart > size) {
          total++;
          caught += flagged ? 1 : 0;
          flagged = false;
        }
        flagged |= report.logisticModel().score(row.features()) >= report.config().threshold();
        previousStart = row.windowStart().getMillis();
      }
      total++;
      caught += flagged ? 1 : 0;
    }
    return new int[] {caught, total};
  }

  private static void assertMetricsClose(ModelMetadata actual, ModelMetadata bundled) {
    JsonNode a = actual.metrics().get("model");
    JsonNode b = bundled.metrics().get("model");
    for (String metric : List.of("aucPr", "rocAuc", "precision", "recall")) {
      assertThat(
          actual.name() + " " + metric,
          a.get(metric).asDouble(),
          closeTo(b.get(metric).asDouble(), 1e-3));
    }
    assertThat(a.get("positives"), equalTo(b.get("positives")));
    assertThat(a.get("rows"), equalTo(b.get("rows")));
  }

  private static ModelMetadata sidecar(Path model) throws Exception {
    return ModelMetadata.parse(
        Files.readAllBytes(ModelMetadata.sidecarOf(model)), model.getFileName().toString());
  }
}
