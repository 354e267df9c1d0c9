package dev.tidemark.model;

import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Features;
import java.io.Serializable;
import java.util.List;
import java.util.Objects;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * The serialisable configuration a scoring DoFn carries to the workers: values only, no model and
 * no pipeline options.
 */
final class ScoringConfig implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Builds the model input of one decision, in {@link #featureNames} order. */
  interface FeatureVector extends Serializable {
    float[] apply(Decision decision);
  }

  /** {@link Features#toVector()}: the order the sidecar's featureNames must match. */
  static final class DefaultFeatureVector implements FeatureVector {
    private static final long serialVersionUID = 1L;

    @Override
    public float[] apply(Decision decision) {
      return decision.features().toVector();
    }
  }

  final String modelUri;

  /** The engine the sidecar must name; null: whatever engine the sidecar names. */
  final @Nullable ModelEngine engine;

  final @Nullable String modelName;
  final @Nullable String modelVersion;
  final double threshold;
  final int batchSize;
  final FeatureVector featureVector;

  /** The features the pipeline computes, in model input order: the sidecar must list these. */
  final List<String> featureNames;

  /** The decision at or above the threshold (the spec's {@code atOrAbove}), e.g. review. */
  final String positiveLabel;

  /** The decision below the threshold (the spec's {@code below}), e.g. allow. */
  final String negativeLabel;

  /**
   * The SHA-256 (hex) the model file's content must have: the content a watch's listing chose, so
   * that a file overwritten in place since is not loaded under the same name. Null: any content.
   */
  final @Nullable String modelSha256;

  ScoringConfig(
      String modelUri,
      @Nullable ModelEngine engine,
      @Nullable String modelName,
      @Nullable String modelVersion,
      double threshold,
      int batchSize,
      FeatureVector featureVector,
      List<String> featureNames,
      String positiveLabel,
      String negativeLabel) {
    this(
        modelUri,
        engine,
        modelName,
        modelVersion,
        threshold,
        batchSize,
        featureVector,
        featureNames,
        positiveLabel,
        negativeLabel,
        null);
  }

  private ScoringConfig(
      String modelUri,
      @Nullable ModelEngine engine,
      @Nullable String modelName,
      @Nullable String modelVersion,
      double threshold,
      int batchSize,
      FeatureVector featureVector,
      List<String> featureNames,
      String positiveLabel,
      String negativeLabel,
      @Nullable String modelSha256) {
    this.featureNames = List.copyOf(featureNames);
    this.positiveLabel = Objects.requireNonNull(positiveLabel, "positiveLabel");
    this.negativeLabel = Objects.requireNonNull(negativeLabel, "negativeLabel");
    this.modelSha256 = modelSha256;
    this.modelUri = Objects.requireNonNull(modelUri, "modelUri");
    this.engine = engine;
    this.modelName = modelName;
    this.modelVersion = modelVersion;
    this.threshold = threshold;
    this.batchSize = batchSize;
    this.featureVector = Objects.requireNonNull(featureVector, "featureVector");
  }

  /** This configuration for another model file: a watched pattern's newest version. */
  ScoringConfig withModelUri(String uri) {
    return new ScoringConfig(
        uri,
        engine,
        modelName,
        modelVersion,
        threshold,
        batchSize,
        featureVector,
        featureNames,
        positiveLabel,
        negativeLabel,
        null);
  }

  /**
   * This configuration for the model a watch chose: {@link ModelIdentity#uri} with the content
   * {@link ModelIdentity#sha256} (when the identity has one).
   */
  ScoringConfig withModel(ModelIdentity identity) {
    return new ScoringConfig(
        identity.uri(),
        engine,
        modelName,
        modelVersion,
        threshold,
        batchSize,
        featureVector,
        featureNames,
        positiveLabel,
        negativeLabel,
        identity.sha256());
  }

  /** The model this configuration names: its URI and, when fixed, its content. */
  ModelIdentity identity() {
    return new ModelIdentity(modelUri, modelSha256);
  }

  /**
   * Checks a model's sidecar against this configuration and against the features Tidemark builds.
   *
   * @throws ModelLoadException with a message that says how to fix the mismatch
   */
  void check(ModelMetadata metadata, String where) {
    if (engine != null && metadata.engine() != engine) {
      throw new ModelLoadException(
          "model "
              + modelUri
              + " is a "
              + metadata.engine().djlName()
              + " model (sidecar "
              + where
              + ") but the engine is set to "
              + engine.djlName()
              + "; leave --modelEngine unset (ScoreFeatures.withEngine) to score with the engine"
              + " the sidecar names, or point --modelUri at a "
              + engine.djlName()
              + " model");
    }
    if (!metadata.featureNames().equals(featureNames)) {
      throw new ModelLoadException(
          "feature order mismatch: model "
              + metadata.name()
              + ":"
              + metadata.version()
              + " expects features "
              + metadata.featureNames()
              + " (sidecar "
              + where
              + ") but the pipeline's features are "
              + featureNames
              + " (the spec's features, in order); retrain or re-export the model with those"
              + " inputs in that order");
    }
    if (modelName != null && !modelName.equals(metadata.name())) {
      throw new ModelLoadException(
          "model "
              + modelUri
              + " is named '"
              + metadata.name()
              + "' in its sidecar, not '"
              + modelName
              + "' as configured with withModelName(...)");
    }
    if (modelVersion != null && !modelVersion.equals(metadata.version())) {
      throw new ModelLoadException(
          "model "
              + modelUri
              + " is version '"
              + metadata.version()
              + "' in its sidecar, not '"
              + modelVersion
              + "' as configured with withModelVersion(...)");
    }
  }
}
