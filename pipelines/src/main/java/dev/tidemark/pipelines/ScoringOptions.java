package dev.tidemark.pipelines;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;
import org.checkerframework.checker.nullness.qual.Nullable;

/** Which model scores the decisions, and how. */
public interface ScoringOptions extends PipelineOptions {
  @Description(
      "Model file: 'default' (the shipped XGBoost model), a local path, file:, classpath: or"
          + " gs:// URI; its sidecar is the same path plus .json. A directory (or a URI ending in"
          + " /) or a glob pattern is watched: the newest valid model in it scores, and a newer"
          + " one replaces it without a restart (see --modelWatchInterval). Unless given, the spec's model.uri.")
  @Default.InstanceFactory(SpecDefaults.ModelUri.class)
  String getModelUri();

  void setModelUri(String uri);

  @Description(
      "Optional check: the engine --modelUri's sidecar must name (XGBoost or OnnxRuntime). Unset,"
          + " the model scores on the engine its sidecar names. Unless given, the spec's model.engine.")
  @Default.InstanceFactory(SpecDefaults.ModelEngine.class)
  @Nullable String getModelEngine();

  void setModelEngine(String engine);

  @Description(
      "How often a --modelUri that names a directory or pattern is listed for a newer model, as an"
          + " ISO-8601 duration such as PT1M.")
  @Default.String("PT1M")
  String getModelWatchInterval();

  void setModelWatchInterval(String interval);

  @Description(
      "Optional second model file (a local path, file:, classpath: or gs:// URI, with its"
          + " sidecar) that scores every decision too; its score, decision and model are recorded"
          + " as the decision's shadow, and it never decides. Unset: no shadow.")
  @Nullable String getShadowModelUri();

  void setShadowModelUri(String uri);

  @Description(
      "Decision threshold: a score at or above it is 'review', below it 'allow'. Unless given, the spec's model.threshold.")
  @Default.InstanceFactory(SpecDefaults.DecisionThreshold.class)
  Double getDecisionThreshold();

  void setDecisionThreshold(Double threshold);

  @Description("Rows per engine call when scoring.")
  @Default.Integer(256)
  Integer getScoringBatchSize();

  void setScoringBatchSize(Integer rows);

  @Description(
      "How long a partial scoring batch waits for rows, as an ISO-8601 duration: it is scored when"
          + " a decision arrives after its first one waited this long, when it is full, and at the"
          + " end of its bundle. 'none': it waits for the end of its bundle.")
  @Default.String("PT0.005S")
  String getScoringMaxBatchWait();

  void setScoringMaxBatchWait(String wait);
}
