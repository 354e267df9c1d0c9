package dev.tidemark.model.train;

import dev.tidemark.transforms.ComputeFeatures;
import org.joda.time.Duration;

/**
 * Settings of {@link TrainModel}: windows (must be the serving pipeline's), time split, XGBoost and
 * logistic-regression parameters, names. Immutable; {@link #defaults()} then {@code withX}.
 *
 * @param seed XGBoost's {@code seed} (row subsampling)
 * @param windowSize sliding window size, as served ({@code --windowSize})
 * @param windowPeriod sliding window period, as served ({@code --windowPeriod})
 * @param trainFraction share of the distinct window ends (in time order) before the split
 * @param rounds boosting rounds
 * @param maxDepth tree depth
 * @param eta learning rate
 * @param subsample row subsampling per tree (below 1 makes the seed matter)
 * @param threshold the decision threshold precision and recall are reported at
 * @param modelName base name: models are {@code <name>-xgb} and {@code <name>-logreg}
 * @param modelVersion the version written in both sidecars and file names ({@code -v<version>})
 * @param logisticIterations gradient-descent steps of the ONNX logistic regression
 * @param logisticLearningRate its step size (on standardised features)
 * @param dataDescription how the training data was made (recorded in sidecars and report)
 */
public record TrainConfig(
    long seed,
    Duration windowSize,
    Duration windowPeriod,
    double trainFraction,
    int rounds,
    int maxDepth,
    double eta,
    double subsample,
    double threshold,
    String modelName,
    String modelVersion,
    int logisticIterations,
    double logisticLearningRate,
    String dataDescription) {

  public TrainConfig {
    if (!(trainFraction > 0 && trainFraction < 1)) {
      throw new IllegalArgumentException("trainFraction must be in (0, 1), got " + trainFraction);
    }
    if (rounds < 1 || maxDepth < 1 || !(eta > 0) || !(subsample > 0 && subsample <= 1)) {
      throw new IllegalArgumentException(
          "need rounds >= 1, maxDepth >= 1, eta > 0 and subsample in (0, 1]");
    }
    if (!(threshold >= 0 && threshold <= 1)) {
      throw new IllegalArgumentException("threshold must be in [0, 1], got " + threshold);
    }
    if (modelName == null || !modelName.matches("[A-Za-z0-9._-]+")) {
      throw new IllegalArgumentException(
          "modelName must be letters, digits, '.', '_' or '-', got '" + modelName + "'");
    }
    if (modelVersion == null || !modelVersion.matches("[A-Za-z0-9._-]+")) {
      throw new IllegalArgumentException(
          "modelVersion must be letters, digits, '.', '_' or '-', got '" + modelVersion + "'");
    }
    ComputeFeatures.of(windowSize, windowPeriod); // validates the windows the same way
  }

  /** Seed 42, the pipeline's default windows (PT5M every PT30S), 70/30 time split, 200 rounds. */
  public static TrainConfig defaults() {
    return new TrainConfig(
        42L,
        ComputeFeatures.DEFAULT_WINDOW_SIZE,
        ComputeFeatures.DEFAULT_WINDOW_PERIOD,
        0.7,
        200,
        4,
        0.1,
        0.8,
        0.5,
        "tidemark-fraud",
        "1",
        3000,
        0.5,
        "unspecified");
  }

  public TrainConfig withSeed(long seed) {
    return new TrainConfig(
        seed,
        windowSize,
        windowPeriod,
        trainFraction,
        rounds,
        maxDepth,
        eta,
        subsample,
        threshold,
        modelName,
        modelVersion,
        logisticIterations,
        logisticLearningRate,
        dataDescription);
  }

  public TrainConfig withWindows(Duration size, Duration period) {
    return new TrainConfig(
        seed,
        size,
        period,
        trainFraction,
        rounds,
        maxDepth,
        eta,
        subsample,
        threshold,
        modelName,
        modelVersion,
        logisticIterations,
        logisticLearningRate,
        dataDescription);
  }

  public TrainConfig withTrainFraction(double fraction) {
    return new TrainConfig(
        seed,
        windowSize,
        windowPeriod,
        fraction,
        rounds,
        maxDepth,
        eta,
        subsample,
        threshold,
        modelName,
        modelVersion,
        logisticIterations,
        logisticLearningRate,
        dataDescription);
  }

  public TrainConfig withBoosting(int rounds, int maxDepth, double eta, double subsample) {
    return new TrainConfig(
        seed,
        windowSize,
        windowPeriod,
        trainFraction,
        rounds,
        maxDepth,
        eta,
        subsample,
        threshold,
        modelName,
        modelVersion,
        logisticIterations,
        logisticLearningRate,
        dataDescription);
  }

  public TrainConfig withThreshold(double threshold) {
    return new TrainConfig(
        seed,
        windowSize,
        windowPeriod,
        trainFraction,
        rounds,
        maxDepth,
        eta,
        subsample,
        threshold,
        modelName,
        modelVersion,
        logisticIterations,
        logisticLearningRate,
        dataDescription);
  }

  public TrainConfig withModel(String name, String version) {
    return new TrainConfig(
        seed,
        windowSize,
        windowPeriod,
        trainFraction,
        rounds,
        maxDepth,
        eta,
        subsample,
        threshold,
        name,
        version,
        logisticIterations,
        logisticLearningRate,
        dataDescription);
  }

  public TrainConfig withLogistic(int iterations, double learningRate) {
    return new TrainConfig(
        seed,
        windowSize,
        windowPeriod,
        trainFraction,
        rounds,
        maxDepth,
        eta,
        subsample,
        threshold,
        modelName,
        modelVersion,
        iterations,
        learningRate,
        dataDescription);
  }

  public TrainConfig withDataDescription(String description) {
    return new TrainConfig(
        seed,
        windowSize,
        windowPeriod,
        trainFraction,
        rounds,
        maxDepth,
        eta,
        subsample,
        threshold,
        modelName,
        modelVersion,
        logisticIterations,
        logisticLearningRate,
        description == null ? "unspecified" : description);
  }

  /** The XGBoost model's name, {@code <modelName>-xgb}. */
  public String xgboostName() {
    return modelName + "-xgb";
  }

  /** The ONNX model's name, {@code <modelName>-logreg}. */
  public String onnxName() {
    return modelName + "-logreg";
  }
}
