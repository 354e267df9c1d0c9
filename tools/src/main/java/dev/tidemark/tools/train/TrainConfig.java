package dev.tidemark.tools.train;

import com.google.auto.value.AutoBuilder;
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
    checkName(modelName, "modelName");
    checkName(modelVersion, "modelVersion");
    checkWindows(windowSize, windowPeriod);
  }

  /** Seed 42, the pipeline's default windows (PT5M every PT30S), 70/30 time split, 200 rounds. */
  public static TrainConfig defaults() {
    return new AutoBuilder_TrainConfig_Builder()
        .setSeed(42L)
        .setWindowSize(ComputeFeatures.DEFAULT_WINDOW_SIZE)
        .setWindowPeriod(ComputeFeatures.DEFAULT_WINDOW_PERIOD)
        .setTrainFraction(0.7)
        .setRounds(200)
        .setMaxDepth(4)
        .setEta(0.1)
        .setSubsample(0.8)
        .setThreshold(0.5)
        .setModelName("tidemark-fraud")
        .setModelVersion("1")
        .setLogisticIterations(3000)
        .setLogisticLearningRate(0.5)
        .setDataDescription("unspecified")
        .build();
  }

  public TrainConfig withSeed(long seed) {
    return toBuilder().setSeed(seed).build();
  }

  public TrainConfig withWindows(Duration size, Duration period) {
    checkWindows(size, period);
    return toBuilder().setWindowSize(size).setWindowPeriod(period).build();
  }

  public TrainConfig withTrainFraction(double fraction) {
    return toBuilder().setTrainFraction(fraction).build();
  }

  public TrainConfig withBoosting(int rounds, int maxDepth, double eta, double subsample) {
    return toBuilder()
        .setRounds(rounds)
        .setMaxDepth(maxDepth)
        .setEta(eta)
        .setSubsample(subsample)
        .build();
  }

  public TrainConfig withThreshold(double threshold) {
    return toBuilder().setThreshold(threshold).build();
  }

  public TrainConfig withModel(String name, String version) {
    checkName(name, "modelName");
    checkName(version, "modelVersion");
    return toBuilder().setModelName(name).setModelVersion(version).build();
  }

  public TrainConfig withLogistic(int iterations, double learningRate) {
    return toBuilder()
        .setLogisticIterations(iterations)
        .setLogisticLearningRate(learningRate)
        .build();
  }

  public TrainConfig withDataDescription(String description) {
    return toBuilder()
        .setDataDescription(description == null ? "unspecified" : description)
        .build();
  }

  private Builder toBuilder() {
    return new AutoBuilder_TrainConfig_Builder(this);
  }

  /** Fills in the record's components by name; the canonical constructor validates them. */
  @AutoBuilder
  interface Builder {
    Builder setSeed(long seed);

    Builder setWindowSize(Duration windowSize);

    Builder setWindowPeriod(Duration windowPeriod);

    Builder setTrainFraction(double trainFraction);

    Builder setRounds(int rounds);

    Builder setMaxDepth(int maxDepth);

    Builder setEta(double eta);

    Builder setSubsample(double subsample);

    Builder setThreshold(double threshold);

    Builder setModelName(String modelName);

    Builder setModelVersion(String modelVersion);

    Builder setLogisticIterations(int logisticIterations);

    Builder setLogisticLearningRate(double logisticLearningRate);

    Builder setDataDescription(String dataDescription);

    TrainConfig build();
  }

  /**
   * A model name or version: letters, digits, '.', '_' or '-'. Checked before a builder sees it, so
   * a null is refused with this message rather than the builder's.
   */
  private static void checkName(String value, String field) {
    if (value == null || !value.matches("[A-Za-z0-9._-]+")) {
      throw new IllegalArgumentException(
          field + " must be letters, digits, '.', '_' or '-', got '" + value + "'");
    }
  }

  private static void checkWindows(Duration size, Duration period) {
    ComputeFeatures.of(size, period); // validates the windows the same way
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
