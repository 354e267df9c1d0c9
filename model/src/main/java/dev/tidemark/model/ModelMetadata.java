package dev.tidemark.model;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.auto.value.AutoValue;
import dev.tidemark.transforms.values.DriftReference;
import dev.tidemark.transforms.values.PaymentFeatures;
import dev.tidemark.transforms.values.ScoreReference;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * The sidecar that travels with every model: {@code <model file>.json} next to the model file
 * ({@code fraud.ubj} and {@code fraud.ubj.json}; {@code fraud.onnx} and {@code fraud.onnx.json}).
 *
 * <pre>{@code
 * {
 *   "format": 1,
 *   "name": "tidemark-fraud-xgb",        // required
 *   "version": "1",                      // required
 *   "engine": "XGBoost",                 // required: XGBoost or OnnxRuntime
 *   "featureNames": ["txnCount", "amountSum", "amountMax", "distinctMerchants",
 *                    "distinctCountries"], // required: the model's input order
 *   "input": "features",                 // ONNX input name (optional; default: the only input)
 *   "output": "score",                   // ONNX output name (optional; default: the only output)
 *   "modelSha256": "...",                // optional; checked at load when present
 *   "threshold": 0.5,                    // the threshold the metrics were measured at
 *   "trainingData": {...},               // fingerprint of the training data (free form)
 *   "training": {...},                   // trainer and parameters (free form)
 *   "metrics": {...},                    // evaluation (free form)
 *   "scoreReference": {"rows": 19783, "mean": 0.0131, "binWidth": 0.1,
 *                      "counts": [...]}  // optional: scores on the evaluation rows, 10 bins
 * }
 * }</pre>
 *
 * <p>{@link ScoreFeatures} refuses to start when {@code featureNames} differs from {@link
 * ScoreFeatures#featureNames()} (the spec's features), when {@code engine} differs from the
 * configured engine, or when the model file's SHA-256 differs from {@code modelSha256}.
 */
@AutoValue
public abstract class ModelMetadata {
  /** Appended to the model file name (or URI) to find its sidecar. */
  public static final String SIDECAR_SUFFIX = ".json";

  public static final int FORMAT = 1;

  private static final ObjectMapper MAPPER =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  public abstract String name();

  public abstract String version();

  public abstract ModelEngine engine();

  /** The model's input order. */
  public abstract List<String> featureNames();

  public abstract @Nullable String inputName();

  public abstract @Nullable String outputName();

  public abstract @Nullable String modelSha256();

  public abstract @Nullable Double threshold();

  /** The training data fingerprint, held here and never handed out: callers get copies. */
  abstract ObjectNode trainingDataNode();

  /** The trainer and its parameters, held as {@link #trainingDataNode()} is. */
  abstract ObjectNode trainingNode();

  /** The evaluation, held as {@link #trainingDataNode()} is. */
  abstract ObjectNode metricsNode();

  /**
   * The model's score distribution on its evaluation rows at training time; absent for a model
   * trained before it was recorded, which then gets no score drift test.
   */
  public abstract @Nullable ScoreReference scoreReference();

  abstract Builder toBuilder();

  @AutoValue.Builder
  abstract static class Builder {
    abstract Builder setName(String name);

    abstract Builder setVersion(String version);

    abstract Builder setEngine(ModelEngine engine);

    abstract Builder setFeatureNames(List<String> featureNames);

    abstract Builder setInputName(@Nullable String inputName);

    abstract Builder setOutputName(@Nullable String outputName);

    abstract Builder setModelSha256(@Nullable String modelSha256);

    abstract Builder setThreshold(@Nullable Double threshold);

    abstract Builder setTrainingDataNode(ObjectNode trainingData);

    abstract Builder setTrainingNode(ObjectNode training);

    abstract Builder setMetricsNode(ObjectNode metrics);

    abstract Builder setScoreReference(@Nullable ScoreReference scoreReference);

    abstract ModelMetadata build();
  }

  /** Metadata with the required fields; the rest empty. */
  public static ModelMetadata of(
      String name, String version, ModelEngine engine, List<String> featureNames) {
    requireText(name, "name");
    requireText(version, "version");
    Objects.requireNonNull(engine, "engine");
    Objects.requireNonNull(featureNames, "featureNames");
    return new AutoValue_ModelMetadata.Builder()
        .setName(name)
        .setVersion(version)
        .setEngine(engine)
        .setFeatureNames(List.copyOf(featureNames))
        .setTrainingDataNode(JsonNodeFactory.instance.objectNode())
        .setTrainingNode(JsonNodeFactory.instance.objectNode())
        .setMetricsNode(JsonNodeFactory.instance.objectNode())
        .build();
  }

  public ModelMetadata withInputOutput(@Nullable String input, @Nullable String output) {
    return toBuilder().setInputName(input).setOutputName(output).build();
  }

  public ModelMetadata withModelSha256(@Nullable String sha256) {
    return toBuilder().setModelSha256(sha256).build();
  }

  public ModelMetadata withThreshold(@Nullable Double threshold) {
    return toBuilder().setThreshold(threshold).build();
  }

  public ModelMetadata withTrainingData(ObjectNode trainingData) {
    return toBuilder().setTrainingDataNode(trainingData.deepCopy()).build();
  }

  public ModelMetadata withTraining(ObjectNode training) {
    return toBuilder().setTrainingNode(training.deepCopy()).build();
  }

  public ModelMetadata withMetrics(ObjectNode metrics) {
    return toBuilder().setMetricsNode(metrics.deepCopy()).build();
  }

  public ModelMetadata withScoreReference(@Nullable ScoreReference scoreReference) {
    return toBuilder().setScoreReference(scoreReference).build();
  }

  /**
   * What the drift tests compare with: the {@link #scoreReference()} and the error rate at the
   * threshold on the evaluation rows, {@code (falsePositives + falseNegatives) / rows} of {@code
   * metrics.model} when the sidecar has them.
   */
  public DriftReference driftReference() {
    JsonNode model = metricsNode().get("model");
    Double errorRate = null;
    if (model != null
        && model.path("rows").isNumber()
        && model.path("falsePositives").isNumber()
        && model.path("falseNegatives").isNumber()
        && model.path("rows").asLong() > 0) {
      errorRate =
          (double) (model.path("falsePositives").asLong() + model.path("falseNegatives").asLong())
              / model.path("rows").asLong();
    }
    return new DriftReference(scoreReference(), errorRate);
  }

  public ObjectNode trainingData() {
    return trainingDataNode().deepCopy();
  }

  public ObjectNode training() {
    return trainingNode().deepCopy();
  }

  public ObjectNode metrics() {
    return metricsNode().deepCopy();
  }

  /**
   * The sidecar as pretty-printed JSON, fields in a fixed order (byte-stable for equal content).
   */
  public String toJson() {
    ObjectNode root = JsonNodeFactory.instance.objectNode();
    root.put("format", FORMAT);
    root.put("name", name());
    root.put("version", version());
    root.put("engine", engine().djlName());
    ArrayNode names = root.putArray("featureNames");
    featureNames().forEach(names::add);
    if (inputName() != null) {
      root.put("input", inputName());
    }
    if (outputName() != null) {
      root.put("output", outputName());
    }
    if (modelSha256() != null) {
      root.put("modelSha256", modelSha256());
    }
    if (threshold() != null) {
      root.put("threshold", threshold());
    }
    root.set("trainingData", trainingDataNode());
    root.set("training", trainingNode());
    root.set("metrics", metricsNode());
    ScoreReference reference = scoreReference();
    if (reference != null) {
      ObjectNode node = root.putObject("scoreReference");
      node.put("rows", reference.rows());
      node.put("mean", reference.mean());
      node.put("binWidth", 1.0 / ScoreReference.BINS);
      ArrayNode counts = node.putArray("counts");
      reference.counts().forEach(counts::add);
    }
    try {
      return MAPPER.writeValueAsString(root) + "\n";
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Writes the sidecar to {@code file}. */
  public void writeTo(Path file) throws IOException {
    Files.writeString(file, toJson(), StandardCharsets.UTF_8);
  }

  /** The sidecar path of a local model file. */
  public static Path sidecarOf(Path modelFile) {
    return modelFile.resolveSibling(modelFile.getFileName() + SIDECAR_SUFFIX);
  }

  /**
   * Parses a sidecar; {@code where} names it in error messages.
   *
   * @throws ModelLoadException if it is not valid JSON or lacks a required field
   */
  public static ModelMetadata parse(byte[] json, String where) {
    JsonNode root;
    try {
      root = MAPPER.readTree(json);
    } catch (IOException e) {
      throw new ModelLoadException(
          "model sidecar " + where + " is not valid JSON: " + e.getMessage(), e);
    }
    if (root == null || !root.isObject()) {
      throw new ModelLoadException("model sidecar " + where + " is not a JSON object");
    }
    String name = text(root, "name", where, true);
    String version = text(root, "version", where, true);
    String engineName = text(root, "engine", where, true);
    ModelEngine engine;
    try {
      engine = ModelEngine.fromName(engineName);
    } catch (IllegalArgumentException e) {
      throw new ModelLoadException(
          "model sidecar " + where + ": engine '" + engineName + "' is not XGBoost or OnnxRuntime");
    }
    JsonNode names = root.get("featureNames");
    if (names == null || !names.isArray() || names.isEmpty()) {
      throw new ModelLoadException(
          "model sidecar "
              + where
              + " has no 'featureNames' array; list the model's inputs in order, e.g. "
              + PaymentFeatures.SCHEMA.names());
    }
    List<String> featureNames = new ArrayList<>();
    for (JsonNode n : names) {
      if (!n.isTextual()) {
        throw new ModelLoadException(
            "model sidecar " + where + ": featureNames must be strings, found " + n);
      }
      featureNames.add(n.asText());
    }
    JsonNode thresholdNode = root.get("threshold");
    Double threshold = null;
    if (thresholdNode != null && !thresholdNode.isNull()) {
      if (!thresholdNode.isNumber()) {
        throw new ModelLoadException(
            "model sidecar " + where + ": threshold must be a number, found " + thresholdNode);
      }
      threshold = thresholdNode.asDouble();
    }
    return new AutoValue_ModelMetadata.Builder()
        .setName(name)
        .setVersion(version)
        .setEngine(engine)
        .setFeatureNames(List.copyOf(featureNames))
        .setInputName(text(root, "input", where, false))
        .setOutputName(text(root, "output", where, false))
        .setModelSha256(text(root, "modelSha256", where, false))
        .setThreshold(threshold)
        .setTrainingDataNode(object(root, "trainingData"))
        .setTrainingNode(object(root, "training"))
        .setMetricsNode(object(root, "metrics"))
        .setScoreReference(scoreReference(root, where))
        .build();
  }

  private static @Nullable ScoreReference scoreReference(JsonNode root, String where) {
    JsonNode node = root.get("scoreReference");
    if (node == null || node.isNull()) {
      return null;
    }
    JsonNode counts = node.get("counts");
    if (!node.isObject()
        || counts == null
        || !counts.isArray()
        || !node.path("rows").canConvertToLong()
        || !node.path("mean").isNumber()) {
      throw new ModelLoadException(
          "model sidecar "
              + where
              + ": scoreReference needs rows, mean and "
              + ScoreReference.BINS
              + " bin counts, found "
              + node);
    }
    List<Long> values = new ArrayList<>();
    for (JsonNode count : counts) {
      if (!count.canConvertToLong()) {
        throw new ModelLoadException(
            "model sidecar " + where + ": scoreReference counts are integers, found " + count);
      }
      values.add(count.asLong());
    }
    try {
      return new ScoreReference(values, node.get("mean").asDouble(), node.get("rows").asLong());
    } catch (IllegalArgumentException e) {
      throw new ModelLoadException("model sidecar " + where + ": " + e.getMessage(), e);
    }
  }

  private static @Nullable String text(
      JsonNode root, String field, String where, boolean required) {
    JsonNode node = root.get(field);
    if (node == null || node.isNull()) {
      if (required) {
        throw new ModelLoadException(
            "model sidecar "
                + where
                + " has no '"
                + field
                + "'; it needs name, version, engine"
                + " and featureNames");
      }
      return null;
    }
    if (!node.isTextual() || node.asText().isEmpty()) {
      throw new ModelLoadException(
          "model sidecar " + where + ": '" + field + "' must be a non-empty string, found " + node);
    }
    return node.asText();
  }

  private static ObjectNode object(JsonNode root, String field) {
    JsonNode node = root.get(field);
    return node != null && node.isObject()
        ? ((ObjectNode) node).deepCopy()
        : JsonNodeFactory.instance.objectNode();
  }

  private static String requireText(String value, String field) {
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException(field + " must be a non-empty string");
    }
    return value;
  }

  @Override
  public String toString() {
    return name()
        + ":"
        + version()
        + " ("
        + engine().djlName()
        + ", features "
        + featureNames()
        + ")";
  }
}
