package dev.tidemark.tools.train;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.model.ModelMetadata;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.joda.time.Duration;

/**
 * Trains models for any spec from a labelled replay file: the spec's features per (key, window)
 * ({@link SpecTrainingFeatures}), the time split, XGBoost and the logistic regression (ONNX) and
 * their evaluation as {@link TrainModel} does them, and sidecars whose {@code featureNames} are the
 * spec's features in order (so {@link PipelineSpec#checkModelFeatures} accepts them). Writes {@code
 * <name>-xgb-v<version>.ubj}, {@code <name>-logreg-v<version>.onnx}, their sidecars and the model
 * card {@code <name>-v<version>.md}, where the name is {@code tidemark-<spec name>} unless the
 * config says otherwise ({@link #configFor}).
 *
 * <pre>{@code
 * PipelineSpec spec = SpecLoader.load(Path.of("specs/logins.yaml"));
 * SpecTrainingReport report = SpecTrainModel.train(spec, "specs/logins.yaml",
 *     Path.of("logins-train.ndjson"), Path.of("out/model"), SpecTrainModel.configFor(spec));
 * }</pre>
 */
public final class SpecTrainModel {
  private SpecTrainModel() {}

  /**
   * {@link TrainConfig#defaults()} with the spec's windows and threshold and the model name {@code
   * tidemark-<spec name>}.
   */
  public static TrainConfig configFor(PipelineSpec spec) {
    return TrainConfig.defaults()
        .withWindows(
            Duration.millis(spec.windows().size().toMillis()),
            Duration.millis(spec.windows().period().toMillis()))
        .withThreshold(spec.model().threshold())
        .withModel("tidemark-" + spec.name(), "1");
  }

  /**
   * Trains both models for {@code spec} on {@code labelledReplay} and writes them, their sidecars
   * and the model card into {@code outputDir}.
   *
   * @param specLocation the spec's path, as problems name it
   * @throws IllegalArgumentException if the config's windows are not the spec's, if the file gives
   *     no rows or a slice without both classes, or if a feature is absent in some window (the
   *     logistic regression needs a value in every row)
   */
  public static SpecTrainingReport train(
      PipelineSpec spec,
      String specLocation,
      Path labelledReplay,
      Path outputDir,
      TrainConfig config)
      throws IOException {
    if (!Files.isRegularFile(labelledReplay)) {
      throw new IllegalArgumentException(
          "no labelled replay file at "
              + labelledReplay
              + "; write one with ./tidemark generate --spec="
              + specLocation);
    }
    if (config.windowSize().getMillis() != spec.windows().size().toMillis()
        || config.windowPeriod().getMillis() != spec.windows().period().toMillis()) {
      throw new IllegalArgumentException(
          "the training windows must be the spec's ("
              + spec.windows().size()
              + " every "
              + spec.windows().period()
              + "); start from SpecTrainModel.configFor(spec)");
    }
    Files.createDirectories(outputDir);
    SpecTrainingFeatures.Result features = SpecTrainingFeatures.compute(spec, labelledReplay);
    List<TrainingRow> rows = features.rows();
    if (rows.isEmpty()) {
      throw new IllegalArgumentException(
          "no event of "
              + labelledReplay
              + " is valid under "
              + specLocation
              + " (rejected: "
              + features.rejected()
              + "); is it a replay of this spec's events?");
    }
    requireEveryFeature(spec, rows, labelledReplay);
    TrainModel.Fit fit = TrainModel.fit(rows, config, labelledReplay);
    List<String> names = spec.featureNames();
    byte[] onnxBytes =
        fit.logistic()
            .toOnnx(
                config.onnxName(),
                "Tidemark "
                    + spec.name()
                    + " logistic regression v"
                    + config.modelVersion()
                    + "; inputs "
                    + names);

    String dataSha = TrainModel.sha256(Files.readAllBytes(labelledReplay));
    int positiveRows = count(rows);
    ObjectNode trainingData = JsonNodeFactory.instance.objectNode();
    trainingData.put("synthetic", true);
    trainingData.put("spec", spec.name());
    trainingData.put("file", labelledReplay.getFileName().toString());
    trainingData.put("sha256", dataSha);
    trainingData.put("madeWith", config.dataDescription());
    trainingData.put("lines", features.lines());
    trainingData.put("droppedRepeatedIdentities", features.droppedCopies());
    trainingData.put("validEvents", features.validEvents());
    ObjectNode labels = trainingData.putObject("eventsPerLabel");
    features.labels().forEach(labels::put);
    ObjectNode rejected = trainingData.putObject("rejectedPerReason");
    features.rejected().forEach(rejected::put);
    trainingData.put("windows", rows.size());
    trainingData.put("positiveWindows", positiveRows);
    trainingData.put("windowSize", TrainModel.iso(config.windowSize()));
    trainingData.put("windowPeriod", TrainModel.iso(config.windowPeriod()));
    trainingData.put("splitTime", Json.instant(fit.split()));
    trainingData.put("trainWindows", fit.trainY().length);
    trainingData.put("trainPositiveWindows", count(fit.trainY()));
    trainingData.put("evalWindows", fit.evalY().length);
    trainingData.put("evalPositiveWindows", count(fit.evalY()));
    trainingData.put("purgedWindows", fit.purged());

    String base = "-v" + config.modelVersion();
    Path xgbFile = outputDir.resolve(config.xgboostName() + base + ".ubj");
    Path onnxFile = outputDir.resolve(config.onnxName() + base + ".onnx");
    String rule = names.get(0) + " >= " + SpecTrainingReport.number(fit.baselineThreshold());
    String[] shas =
        TrainModel.writeModels(
            config,
            names,
            xgbFile,
            fit.xgboostBytes(),
            onnxFile,
            onnxBytes,
            trainingData,
            fit,
            rule);
    String xgbSha = shas[0];
    String onnxSha = shas[1];
    // The sidecars must be what a run of this spec accepts.
    for (Path model : List.of(xgbFile, onnxFile)) {
      ModelMetadata written =
          ModelMetadata.parse(
              Files.readAllBytes(ModelMetadata.sidecarOf(model)), model.getFileName().toString());
      spec.checkModelFeatures(specLocation, model.toString(), written.featureNames());
    }

    Path card = outputDir.resolve(config.modelName() + base + ".md");
    SpecTrainingReport report =
        new SpecTrainingReport(
            spec,
            specLocation,
            xgbFile,
            onnxFile,
            card,
            xgbSha,
            onnxSha,
            labelledReplay.getFileName().toString(),
            dataSha,
            features,
            positiveRows,
            fit,
            config);
    Files.writeString(card, report.markdown(), StandardCharsets.UTF_8);
    return report;
  }

  /** Refuses rows where a feature is absent: the logistic regression has no missing values. */
  static void requireEveryFeature(PipelineSpec spec, List<TrainingRow> rows, Path file) {
    List<String> names = spec.featureNames();
    for (int j = 0; j < names.size(); j++) {
      long absent = 0;
      for (TrainingRow row : rows) {
        absent += Float.isNaN(row.features()[j]) ? 1 : 0;
      }
      if (absent > 0) {
        throw new IllegalArgumentException(
            "the feature '"
                + names.get(j)
                + "' is absent in "
                + absent
                + " of "
                + rows.size()
                + " windows of "
                + file
                + "; the logistic regression needs a value in every window (a min, max, mean or"
                + " last over an optional field has none where no event carries it)");
      }
    }
  }

  static int count(List<TrainingRow> rows) {
    int n = 0;
    for (TrainingRow row : rows) {
      n += row.positive() ? 1 : 0;
    }
    return n;
  }

  static int count(boolean[] y) {
    int n = 0;
    for (boolean b : y) {
      n += b ? 1 : 0;
    }
    return n;
  }
}
