package dev.tidemark.tools.train;

import dev.tidemark.model.OnnxLogisticRegression;
import java.nio.file.Path;
import java.util.Locale;

/**
 * What {@link TrainModel#train} produced: the model files and sidecars, the split, and the metrics
 * of both models and of the baseline on the later (evaluation) slice. {@link #markdown()} renders
 * it for {@code docs/model.md}.
 *
 * @param xgboostModel the XGBoost model file ({@code .ubj}); its sidecar is {@code <file>.json}
 * @param onnxModel the ONNX logistic regression ({@code .onnx}); its sidecar is {@code <file>.json}
 * @param reportFile the markdown report written next to them
 * @param xgboostSha256 SHA-256 of the XGBoost model bytes
 * @param onnxSha256 SHA-256 of the ONNX model bytes
 * @param dataSha256 SHA-256 of the training file
 * @param droppedCopies repeated lines of an identity dropped before the pipeline
 * @param baselineMinTxnCount the baseline rule: flag when {@code txnCount >= this}
 */
public record TrainingReport(
    Path xgboostModel,
    Path onnxModel,
    Path reportFile,
    String xgboostSha256,
    String onnxSha256,
    String dataFile,
    String dataSha256,
    String dataDescription,
    int lines,
    long validEvents,
    long uniqueEvents,
    int droppedCopies,
    int windows,
    int fraudWindows,
    int trainWindows,
    int trainFraudWindows,
    int evalWindows,
    int evalFraudWindows,
    int purgedWindows,
    String splitTime,
    ClassificationMetrics xgboost,
    ClassificationMetrics logistic,
    ClassificationMetrics baseline,
    long baselineMinTxnCount,
    TrainConfig config) {

  /** The report as markdown. */
  public String markdown() {
    StringBuilder md = new StringBuilder();
    md.append("# Tidemark fraud models, version ").append(config.modelVersion()).append("\n\n");
    md.append(
        "**These models are trained and evaluated on synthetic data** from Tidemark's own event"
            + " generator (card-testing and account-takeover bursts injected into log-normal"
            + " legitimate traffic). The numbers below say the models learned the generator's"
            + " patterns; they say nothing about real fraud.\n\n");
    dataSection(md, dataFile, dataSha256, lines, dataDescription);
    md.append("- Repeated lines of an identity (re-sends) dropped before the pipeline, keeping the")
        .append(" first to arrive as a streaming replay's deduplication does: ")
        .append(droppedCopies)
        .append("\n");
    md.append("- Valid events: ")
        .append(validEvents)
        .append(", unique after deduplication: ")
        .append(uniqueEvents)
        .append("\n");
    md.append(
            "- Features per (account, window) with the serving transforms (ParseCloudEvents →"
                + " DeduplicateEvents → ComputeFeatures), sliding windows of ")
        .append(TrainModel.iso(config.windowSize()))
        .append(" every ")
        .append(TrainModel.iso(config.windowPeriod()))
        .append(": ")
        .append(windows)
        .append(" rows, ")
        .append(fraudWindows)
        .append(" holding a fraud-labelled event\n");
    md.append("- Split by event time at ")
        .append(splitTime)
        .append(": train on windows ending at or before it (")
        .append(trainWindows)
        .append(" rows, ")
        .append(trainFraudWindows)
        .append(" fraud), evaluate on windows starting at or after it (")
        .append(evalWindows)
        .append(" rows, ")
        .append(evalFraudWindows)
        .append(" fraud); ")
        .append(purgedWindows)
        .append(" windows straddling the split are dropped so no event is in both\n\n");
    md.append("## Evaluation on the later slice\n\n");
    md.append(
        String.format(
            Locale.ROOT,
            "Threshold %.2f for the models (score >= threshold is `review`).%n%n",
            config.threshold()));
    md.append("| model | AUC-PR | ROC-AUC | precision | recall | flagged (TP+FP) |\n");
    md.append("|---|---:|---:|---:|---:|---:|\n");
    row(md, "XGBoost `" + config.xgboostName() + "` (default)", xgboost);
    row(md, "Logistic regression `" + config.onnxName() + "` (ONNX)", logistic);
    row(md, "Baseline: `txnCount >= " + baselineMinTxnCount + "`", baseline);
    md.append("\nAUC-PR is average precision; the baseline's AUC-PR and ROC-AUC rank windows by")
        .append(" txnCount alone, and its threshold was chosen on the training slice (best F1).")
        .append(" A random ranking would have AUC-PR ")
        .append(
            String.format(
                Locale.ROOT,
                "%.4f",
                xgboost.rows() == 0 ? 0 : (double) xgboost.positives() / xgboost.rows()))
        .append(" (the fraud rate of the slice) and ROC-AUC 0.5.\n\n");
    md.append("## Models\n\n");
    xgboostLine(md, xgboostModel, xgboostSha256, config);
    md.append("- `")
        .append(onnxModel.getFileName())
        .append("`: logistic regression fitted in Java (")
        .append(config.logisticIterations())
        .append(" gradient-descent steps on standardised features, standardisation folded into the")
        .append(" weights), written as ONNX (IR ")
        .append(OnnxLogisticRegression.IR_VERSION)
        .append(", opset ")
        .append(OnnxLogisticRegression.OPSET)
        .append("; input `features` float [N,5], output `score` float [N,1]); SHA-256 `")
        .append(onnxSha256)
        .append("`\n");
    md.append("- Each has a sidecar `<file>.json` with name, version, engine, feature order, the")
        .append(" training-data fingerprint and these metrics.\n");
    return md.toString();
  }

  /** The start of the data section: the training file, its fingerprint and how it was made. */
  static void dataSection(
      StringBuilder md, String dataFile, String dataSha256, int lines, String dataDescription) {
    md.append("## Data\n\n");
    md.append("- Training file: `")
        .append(dataFile)
        .append("` (SHA-256 `")
        .append(dataSha256)
        .append("`, ")
        .append(lines)
        .append(" lines)\n");
    md.append("- Made with: `").append(dataDescription).append("`\n");
  }

  /** The model list's line of the XGBoost model. */
  static void xgboostLine(StringBuilder md, Path model, String sha256, TrainConfig config) {
    md.append("- `")
        .append(model.getFileName())
        .append("`: XGBoost (xgboost4j ")
        .append(TrainModel.xgboostVersion())
        .append("), binary:logistic, ")
        .append(config.rounds())
        .append(" rounds, max_depth ")
        .append(config.maxDepth())
        .append(", eta ")
        .append(config.eta())
        .append(", subsample ")
        .append(config.subsample())
        .append(", seed ")
        .append(config.seed())
        .append(", nthread 1; SHA-256 `")
        .append(sha256)
        .append("`\n");
  }

  /** A row of the evaluation table. */
  static void row(StringBuilder md, String name, ClassificationMetrics m) {
    md.append(
        String.format(
            Locale.ROOT,
            "| %s | %.4f | %.4f | %.4f | %.4f | %d |%n",
            name,
            m.aucPr(),
            m.rocAuc(),
            m.precision(),
            m.recall(),
            m.truePositives() + m.falsePositives()));
  }
}
