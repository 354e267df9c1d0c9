package dev.tidemark.tools.train;

import dev.tidemark.model.OnnxLogisticRegression;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.transforms.util.Json;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What {@link SpecTrainModel#train} produced: the model files, the data, the split and the metrics
 * of both models and of the baseline on the later slice. {@link #markdown()} is the model card.
 *
 * @param positiveRows (key, window) rows holding a positively labelled event
 */
public record SpecTrainingReport(
    PipelineSpec spec,
    String specLocation,
    Path xgboostModel,
    Path onnxModel,
    Path cardFile,
    String xgboostSha256,
    String onnxSha256,
    String dataFile,
    String dataSha256,
    SpecTrainingFeatures.Result data,
    int positiveRows,
    TrainModel.Fit fit,
    TrainConfig config) {

  /** The evaluation of the XGBoost model on the later slice. */
  public ClassificationMetrics xgboost() {
    return fit.xgboost();
  }

  /** The evaluation of the logistic regression on the later slice. */
  public ClassificationMetrics logistic() {
    return fit.logisticMetrics();
  }

  /** The evaluation of the baseline rule (first feature at or above a threshold). */
  public ClassificationMetrics baseline() {
    return fit.baseline();
  }

  /** The logistic regression's weights on the raw features, in the spec's order, and its bias. */
  public OnnxLogisticRegression logisticModel() {
    return fit.logistic();
  }

  /** A number as a spec writes it: whole numbers without a fraction. */
  static String number(double value) {
    return value == Math.rint(value) && Math.abs(value) < 1e15
        ? Long.toString((long) value)
        : String.format(Locale.ROOT, "%.6g", value);
  }

  /** The model card. */
  public String markdown() {
    List<String> names = spec.featureNames();
    StringBuilder md = new StringBuilder();
    md.append("# Tidemark ")
        .append(spec.name())
        .append(" models, version ")
        .append(config.modelVersion())
        .append("\n\n");
    md.append("**These models are trained and evaluated on synthetic data** from Tidemark's own")
        .append(" event generator. The numbers below say the models learned the generator's")
        .append(" patterns; they say nothing about real ")
        .append(spec.description().isEmpty() ? "events" : "traffic")
        .append(".\n\n");
    md.append("## Spec\n\n");
    md.append("- `")
        .append(specLocation)
        .append("` (")
        .append(spec.name())
        .append(spec.description().isEmpty() ? "" : ": " + spec.description().strip())
        .append(")\n");
    md.append("- Model input, in order: `").append(String.join("`, `", names)).append("`\n");
    md.append("- Features per (")
        .append(spec.events().key())
        .append(", window) with the spec's `SpecFeaturesFn`, sliding windows of ")
        .append(TrainModel.iso(config.windowSize()))
        .append(" every ")
        .append(TrainModel.iso(config.windowPeriod()))
        .append("; a window is positive when one of its own events has a label other than `")
        .append(SpecTrainingFeatures.NEGATIVE_LABEL)
        .append("`\n\n");
    TrainingReport.dataSection(md, dataFile, dataSha256, data.lines(), config.dataDescription());
    md.append("- Repeated lines of an identity dropped, keeping the first to arrive: ")
        .append(data.droppedCopies())
        .append("\n");
    md.append("- Valid events: ").append(data.validEvents()).append(" (per label: ");
    appendCounts(md, data.labels());
    md.append("); rejected: ");
    appendCounts(md, data.rejected());
    md.append("\n");
    md.append("- ")
        .append(data.rows().size())
        .append(" (")
        .append(spec.events().key())
        .append(", window) rows, ")
        .append(positiveRows)
        .append(" positive\n");
    md.append("- Split by event time at ")
        .append(Json.instant(fit.split()))
        .append(": train on windows ending at or before it (")
        .append(fit.trainY().length)
        .append(" rows, ")
        .append(SpecTrainModel.count(fit.trainY()))
        .append(" positive), evaluate on windows starting at or after it (")
        .append(fit.evalY().length)
        .append(" rows, ")
        .append(SpecTrainModel.count(fit.evalY()))
        .append(" positive); ")
        .append(fit.purged())
        .append(" windows straddling the split are dropped\n\n");
    md.append("## Evaluation on the later slice\n\n");
    md.append(
        String.format(
            Locale.ROOT,
            "Threshold %.2f for the models (score >= threshold is `%s`).%n%n",
            config.threshold(),
            spec.model().positiveLabel()));
    md.append("| model | AUC-PR | ROC-AUC | precision | recall | flagged (TP+FP) |\n");
    md.append("|---|---:|---:|---:|---:|---:|\n");
    TrainingReport.row(md, "XGBoost `" + config.xgboostName() + "`", fit.xgboost());
    TrainingReport.row(
        md, "Logistic regression `" + config.onnxName() + "` (ONNX)", fit.logisticMetrics());
    TrainingReport.row(
        md,
        "Baseline: `" + names.get(0) + " >= " + number(fit.baselineThreshold()) + "`",
        fit.baseline());
    md.append("\nThe baseline ranks windows by `")
        .append(names.get(0))
        .append("` alone; its threshold was chosen on the training slice (best F1). A random")
        .append(" ranking would have AUC-PR ")
        .append(
            String.format(
                Locale.ROOT,
                "%.4f",
                fit.evalY().length == 0
                    ? 0
                    : (double) SpecTrainModel.count(fit.evalY()) / fit.evalY().length))
        .append(" and ROC-AUC 0.5.\n\n");
    md.append("Logistic regression weights on the raw features (bias ")
        .append(String.format(Locale.ROOT, "%.6g", fit.logistic().bias()))
        .append("):\n\n| feature | weight |\n|---|---:|\n");
    float[] w = fit.logistic().weights();
    for (int j = 0; j < w.length; j++) {
      md.append(String.format(Locale.ROOT, "| `%s` | %.6g |%n", names.get(j), w[j]));
    }
    md.append("\n## Models\n\n");
    TrainingReport.xgboostLine(md, xgboostModel, xgboostSha256, config);
    md.append("- `")
        .append(onnxModel.getFileName())
        .append("`: logistic regression fitted in Java (")
        .append(config.logisticIterations())
        .append(" gradient-descent steps on standardised features), written as ONNX (IR ")
        .append(OnnxLogisticRegression.IR_VERSION)
        .append(", opset ")
        .append(OnnxLogisticRegression.OPSET)
        .append("; input `features` float [N,")
        .append(names.size())
        .append("], output `score` float [N,1]); SHA-256 `")
        .append(onnxSha256)
        .append("`\n");
    md.append("- Each has a sidecar `<file>.json`: name, version, engine, the spec's feature order")
        .append(" (a run of the spec refuses a model whose order differs), the training-data")
        .append(" fingerprint and these metrics.\n");
    md.append("- Retrain: `./tidemark train --spec=")
        .append(specLocation)
        .append(" --input=")
        .append(dataFile)
        .append("`\n");
    return md.toString();
  }

  private static void appendCounts(StringBuilder md, Map<String, Long> counts) {
    if (counts.isEmpty()) {
      md.append("none");
      return;
    }
    String separator = "";
    for (Map.Entry<String, Long> entry : counts.entrySet()) {
      md.append(separator).append('`').append(entry.getKey()).append("` ").append(entry.getValue());
      separator = ", ";
    }
  }
}
