package dev.tidemark.pipelines;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/** Which model scores the decisions, and how. */
public interface ScoringOptions extends PipelineOptions {
  @Description(
      "Model file: 'default' (the shipped XGBoost model), a local path, file:, classpath: or"
          + " gs:// URI; its sidecar is the same path plus .json.")
  @Default.String("default")
  String getModelUri();

  void setModelUri(String uri);

  @Description("Engine of --modelUri: XGBoost or OnnxRuntime.")
  @Default.String("XGBoost")
  String getModelEngine();

  void setModelEngine(String engine);

  @Description("Decision threshold: a score at or above it is 'review', below it 'allow'.")
  @Default.Double(0.5)
  Double getDecisionThreshold();

  void setDecisionThreshold(Double threshold);

  @Description("Rows per engine call when scoring.")
  @Default.Integer(256)
  Integer getScoringBatchSize();

  void setScoringBatchSize(Integer rows);
}
