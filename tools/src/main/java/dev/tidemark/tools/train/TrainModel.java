package dev.tidemark.tools.train;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.model.ModelEngine;
import dev.tidemark.model.ModelMetadata;
import dev.tidemark.model.OnnxLogisticRegression;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.PaymentFeatures;
import dev.tidemark.transforms.values.ScoreReference;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import ml.dmlc.xgboost4j.java.Booster;
import ml.dmlc.xgboost4j.java.DMatrix;
import ml.dmlc.xgboost4j.java.XGBoost;
import ml.dmlc.xgboost4j.java.XGBoostError;
import org.joda.time.Instant;

/**
 * Trains Tidemark's fraud models from a labelled replay file (events whose {@code data.label} is
 * {@code fraud} or {@code legit}, as {@code ./tidemark generate} writes them).
 *
 * <ol>
 *   <li>Features per (account, window) with the serving transforms and labels per (account, window)
 *       from the events' labels ({@link TrainingFeatures}).
 *   <li>A split by event time, never random: train on windows that end at or before the split time,
 *       evaluate on windows that start at or after it; windows straddling it are dropped.
 *   <li>XGBoost ({@code binary:logistic}, fixed seed, {@code nthread=1}: the same data and seed
 *       give the same model bytes) saved as UBJSON; a logistic regression fitted in plain Java,
 *       saved as ONNX ({@link OnnxLogisticRegression}); each with its sidecar ({@link
 *       ModelMetadata}).
 *   <li>AUC-PR, ROC-AUC, and precision/recall at the threshold on the later slice, for both models
 *       and for a baseline rule on {@code txnCount}, in the sidecars and a markdown report.
 * </ol>
 *
 * <pre>{@code
 * TrainingReport report = TrainModel.train(
 *     Paths.get("train.ndjson"), Paths.get("model/src/main/resources/models"),
 *     TrainConfig.defaults().withDataDescription("./tidemark generate ..."));
 * System.out.println(report.markdown());
 * }</pre>
 */
public final class TrainModel {
  private TrainModel() {}

  /**
   * Trains both models on {@code labelledReplay} and writes them, their sidecars and the report
   * into {@code outputDir}.
   *
   * @throws IllegalArgumentException if the data cannot support a time split (no fraud before or
   *     after it)
   */
  public static TrainingReport train(Path labelledReplay, Path outputDir, TrainConfig config)
      throws IOException {
    if (!Files.isRegularFile(labelledReplay)) {
      throw new IllegalArgumentException(
          "no labelled replay file at " + labelledReplay + "; write one with ./tidemark generate");
    }
    Files.createDirectories(outputDir);
    TrainingFeatures.Result features =
        TrainingFeatures.compute(labelledReplay, config.windowSize(), config.windowPeriod());
    List<LabelledWindow> rows = features.rows();
    TrainingFeatures.requireNotEmpty(rows, labelledReplay);
    List<TrainingRow> generic = new ArrayList<>(rows.size());
    for (LabelledWindow row : rows) {
      generic.add(
          new TrainingRow(
              row.accountId(),
              row.windowStart(),
              row.windowEnd(),
              row.features().toVector(),
              row.fraud()));
    }
    Fit fit = fit(generic, config, labelledReplay);
    Instant split = fit.split();
    int purged = fit.purged();
    boolean[] trainY = fit.trainY();
    boolean[] evalY = fit.evalY();
    byte[] xgbBytes = fit.xgboostBytes();
    OnnxLogisticRegression logistic = fit.logistic();
    ClassificationMetrics xgbMetrics = fit.xgboost();
    ClassificationMetrics lrMetrics = fit.logisticMetrics();
    ClassificationMetrics baseline = fit.baseline();
    long k = (long) fit.baselineThreshold();
    byte[] onnxBytes =
        logistic.toOnnx(
            config.onnxName(),
            "Tidemark fraud logistic regression v"
                + config.modelVersion()
                + "; inputs "
                + PaymentFeatures.SCHEMA.names());

    String dataSha = sha256(Files.readAllBytes(labelledReplay));
    ObjectNode trainingData = JsonNodeFactory.instance.objectNode();
    trainingData.put("synthetic", true);
    trainingData.put("file", labelledReplay.getFileName().toString());
    trainingData.put("sha256", dataSha);
    trainingData.put("madeWith", config.dataDescription());
    trainingData.put("lines", features.lines());
    trainingData.put("droppedRepeatedIdentities", features.droppedCopies());
    trainingData.put("validEvents", features.counters().getOrDefault(TidemarkMetrics.VALID, 0L));
    trainingData.put("uniqueEvents", features.counters().getOrDefault(TidemarkMetrics.UNIQUE, 0L));
    trainingData.put("windows", rows.size());
    trainingData.put("fraudWindows", count(labels(rows)));
    trainingData.put("windowSize", iso(config.windowSize()));
    trainingData.put("windowPeriod", iso(config.windowPeriod()));
    trainingData.put("splitTime", Json.instant(split));
    trainingData.put("trainWindows", trainY.length);
    trainingData.put("trainFraudWindows", count(trainY));
    trainingData.put("evalWindows", evalY.length);
    trainingData.put("evalFraudWindows", count(evalY));
    trainingData.put("purgedWindows", purged);

    String base = "-v" + config.modelVersion();
    Path xgbFile = outputDir.resolve(config.xgboostName() + base + ".ubj");
    Path onnxFile = outputDir.resolve(config.onnxName() + base + ".onnx");
    String[] shas =
        writeModels(
            config,
            PaymentFeatures.SCHEMA.names(),
            xgbFile,
            xgbBytes,
            onnxFile,
            onnxBytes,
            trainingData,
            fit,
            "txnCount >= " + k);
    String xgbSha = shas[0];
    String onnxSha = shas[1];

    Path reportFile = outputDir.resolve(config.modelName() + base + ".md");
    TrainingReport report =
        new TrainingReport(
            xgbFile,
            onnxFile,
            reportFile,
            xgbSha,
            onnxSha,
            labelledReplay.getFileName().toString(),
            dataSha,
            config.dataDescription(),
            features.lines(),
            features.counters().getOrDefault(TidemarkMetrics.VALID, 0L),
            features.counters().getOrDefault(TidemarkMetrics.UNIQUE, 0L),
            features.droppedCopies(),
            rows.size(),
            count(labels(rows)),
            trainY.length,
            count(trainY),
            evalY.length,
            count(evalY),
            purged,
            Json.instant(split),
            xgbMetrics,
            lrMetrics,
            baseline,
            k,
            config);
    Files.writeString(reportFile, report.markdown(), StandardCharsets.UTF_8);
    return report;
  }

  /**
   * Writes both models and their sidecars ({@code featureNames}, training data, training details,
   * metrics with the baseline {@code rule}); returns the SHA-256 of the XGBoost and the ONNX bytes.
   */
  static String[] writeModels(
      TrainConfig config,
      List<String> featureNames,
      Path xgbFile,
      byte[] xgbBytes,
      Path onnxFile,
      byte[] onnxBytes,
      ObjectNode trainingData,
      Fit fit,
      String rule)
      throws IOException {
    Files.write(xgbFile, xgbBytes);
    Files.write(onnxFile, onnxBytes);
    String xgbSha = sha256(xgbBytes);
    String onnxSha = sha256(onnxBytes);
    ModelMetadata.of(config.xgboostName(), config.modelVersion(), ModelEngine.XGBOOST, featureNames)
        .withModelSha256(xgbSha)
        .withThreshold(config.threshold())
        .withTrainingData(trainingData)
        .withTraining(xgboostTraining(config))
        .withMetrics(metricsJson(fit.xgboost(), fit.baseline(), rule))
        .withScoreReference(fit.xgboostReference())
        .writeTo(ModelMetadata.sidecarOf(xgbFile));
    ModelMetadata.of(
            config.onnxName(), config.modelVersion(), ModelEngine.ONNX_RUNTIME, featureNames)
        .withInputOutput(OnnxLogisticRegression.INPUT, OnnxLogisticRegression.OUTPUT)
        .withModelSha256(onnxSha)
        .withThreshold(config.threshold())
        .withTrainingData(trainingData)
        .withTraining(logisticTraining(config, fit.logistic(), featureNames))
        .withMetrics(metricsJson(fit.logisticMetrics(), fit.baseline(), rule))
        .withScoreReference(fit.logisticReference())
        .writeTo(ModelMetadata.sidecarOf(onnxFile));
    return new String[] {xgbSha, onnxSha};
  }

  /** The XGBoost sidecar's {@code training}: trainer, library, parameters, rounds. */
  static ObjectNode xgboostTraining(TrainConfig config) {
    ObjectNode xgbTraining = JsonNodeFactory.instance.objectNode();
    xgbTraining.put("trainer", TrainModel.class.getName());
    xgbTraining.put("library", "xgboost4j " + xgboostVersion());
    ObjectNode params = xgbTraining.putObject("params");
    xgboostParams(config).forEach((name, value) -> params.put(name, String.valueOf(value)));
    xgbTraining.put("rounds", config.rounds());
    return xgbTraining;
  }

  /** The logistic regression sidecar's {@code training}: method, steps, weights per feature. */
  static ObjectNode logisticTraining(
      TrainConfig config, OnnxLogisticRegression logistic, List<String> featureNames) {
    ObjectNode lrTraining = JsonNodeFactory.instance.objectNode();
    lrTraining.put("trainer", TrainModel.class.getName());
    lrTraining.put(
        "method",
        "logistic regression, full-batch gradient descent on standardised features, L2 1e-4");
    lrTraining.put("iterations", config.logisticIterations());
    lrTraining.put("learningRate", config.logisticLearningRate());
    ObjectNode weights = lrTraining.putObject("weightsOnRawFeatures");
    float[] w = logistic.weights();
    for (int j = 0; j < w.length; j++) {
      weights.put(featureNames.get(j), w[j]);
    }
    lrTraining.put("bias", logistic.bias());
    return lrTraining;
  }

  /**
   * Trains the booster on {@code x}/{@code y} and returns its UBJSON bytes. Same rows, labels and
   * config give the same bytes ({@code nthread=1}, fixed seed).
   */
  static byte[] trainBooster(float[][] x, boolean[] y, TrainConfig config) {
    try {
      DMatrix dtrain = matrix(x);
      dtrain.setLabel(floats(y));
      Booster booster =
          XGBoost.train(dtrain, xgboostParams(config), config.rounds(), Map.of(), null, null);
      byte[] bytes = booster.toByteArray("ubj");
      booster.dispose();
      dtrain.dispose();
      return bytes;
    } catch (XGBoostError e) {
      throw new IllegalStateException("XGBoost training failed: " + e.getMessage(), e);
    }
  }

  /** The XGBoost parameters, in a fixed order. */
  static Map<String, Object> xgboostParams(TrainConfig config) {
    Map<String, Object> params = new LinkedHashMap<>();
    params.put("objective", "binary:logistic");
    params.put("eta", config.eta());
    params.put("max_depth", config.maxDepth());
    params.put("subsample", config.subsample());
    params.put("tree_method", "hist");
    params.put("seed", config.seed());
    params.put("nthread", 1);
    params.put("eval_metric", "aucpr");
    params.put("verbosity", 0);
    return params;
  }

  /** The sidecars' {@code metrics}: the model's and the baseline's, with its {@code rule}. */
  static ObjectNode metricsJson(
      ClassificationMetrics model, ClassificationMetrics baseline, String baselineRule) {
    ObjectNode metrics = JsonNodeFactory.instance.objectNode();
    metrics.put("evaluatedOn", "later slice: windows starting at or after the split time");
    metrics.set("model", model.toJson());
    ObjectNode base = baseline.toJson();
    base.put("rule", baselineRule + " (threshold chosen on the training slice)");
    metrics.set("baseline", base);
    return metrics;
  }

  /**
   * The fitted models and their evaluation, whatever the features.
   *
   * @param split the split time: train on windows ending at or before it, evaluate on windows
   *     starting at or after it
   * @param purged windows straddling the split, in neither slice
   * @param baselineThreshold the baseline rule: flag when the first feature is at least this
   * @param xgboostReference XGBoost's scores on the evaluation slice, for the drift test
   * @param logisticReference the logistic regression's scores on the evaluation slice
   */
  record Fit(
      Instant split,
      int purged,
      boolean[] trainY,
      boolean[] evalY,
      byte[] xgboostBytes,
      OnnxLogisticRegression logistic,
      ClassificationMetrics xgboost,
      ClassificationMetrics logisticMetrics,
      ClassificationMetrics baseline,
      double baselineThreshold,
      ScoreReference xgboostReference,
      ScoreReference logisticReference) {}

  /**
   * Splits {@code rows} (in {@link TrainingRow#TIME_ORDER}) by time, fits XGBoost and the logistic
   * regression on the earlier slice and evaluates both, and the baseline rule on the first feature,
   * on the later slice.
   *
   * @throws IllegalArgumentException if a slice lacks a class
   */
  static Fit fit(List<TrainingRow> rows, TrainConfig config, Path file) throws IOException {
    // Time split on window ends; purge windows that straddle the split.
    List<Instant> ends =
        new ArrayList<>(new TreeSet<>(rows.stream().map(TrainingRow::windowEnd).toList()));
    Instant split =
        ends.get(Math.max(0, (int) Math.floor(config.trainFraction() * ends.size()) - 1));
    List<TrainingRow> train = new ArrayList<>();
    List<TrainingRow> eval = new ArrayList<>();
    for (TrainingRow row : rows) {
      if (!row.windowEnd().isAfter(split)) {
        train.add(row);
      } else if (!row.windowStart().isBefore(split)) {
        eval.add(row);
      }
    }
    int purged = rows.size() - train.size() - eval.size();
    return fitSlices(train, eval, split, purged, config, file);
  }

  /**
   * Fits XGBoost and the logistic regression on {@code train} and evaluates both, and the baseline
   * rule on the first feature, on {@code eval}; {@code split} and {@code purged} describe how the
   * caller split its rows.
   *
   * @throws IllegalArgumentException if a slice lacks a class
   */
  static Fit fitSlices(
      List<TrainingRow> train,
      List<TrainingRow> eval,
      Instant split,
      int purged,
      TrainConfig config,
      Path file)
      throws IOException {
    float[][] trainX = features(train);
    boolean[] trainY = positives(train);
    float[][] evalX = features(eval);
    boolean[] evalY = positives(eval);
    requireBothClasses(trainY, "training", split, file);
    requireBothClasses(evalY, "evaluation", split, file);

    // XGBoost.
    byte[] xgbBytes = trainBooster(trainX, trainY, config);
    double[] xgbScores;
    try {
      Booster booster = XGBoost.loadModel(xgbBytes);
      DMatrix deval = matrix(evalX);
      xgbScores = column(booster.predict(deval));
      deval.dispose();
      booster.dispose();
    } catch (XGBoostError e) {
      throw new IllegalStateException("XGBoost prediction failed: " + e.getMessage(), e);
    }
    ClassificationMetrics xgbMetrics =
        ClassificationMetrics.of(xgbScores, evalY, config.threshold());

    // Logistic regression, exported to ONNX by the caller.
    OnnxLogisticRegression logistic =
        new LogisticRegressionTrainer(
                config.logisticIterations(), config.logisticLearningRate(), 1e-4)
            .fit(trainX, trainY);
    double[] lrScores = new double[evalX.length];
    for (int i = 0; i < evalX.length; i++) {
      lrScores[i] = logistic.score(evalX[i]);
    }
    ClassificationMetrics lrMetrics = ClassificationMetrics.of(lrScores, evalY, config.threshold());

    // Baseline: first feature >= k, k chosen on the training slice.
    double k = bestThreshold(trainX, trainY, 0);
    double[] baselineScores = new double[evalX.length];
    for (int i = 0; i < evalX.length; i++) {
      float value = evalX[i][0];
      baselineScores[i] = Float.isNaN(value) ? Double.NEGATIVE_INFINITY : value;
    }
    ClassificationMetrics baseline = ClassificationMetrics.of(baselineScores, evalY, k);
    return new Fit(
        split,
        purged,
        trainY,
        evalY,
        xgbBytes,
        logistic,
        xgbMetrics,
        lrMetrics,
        baseline,
        k,
        ScoreReference.of(xgbScores),
        ScoreReference.of(lrScores));
  }

  /**
   * The threshold on feature {@code column} with the best F1 on {@code x}/{@code y}: the smallest
   * of the values that tie. NaN values are never flagged.
   */
  static double bestThreshold(float[][] x, boolean[] y, int column) {
    TreeSet<Float> candidates = new TreeSet<>();
    int positives = 0;
    for (int i = 0; i < x.length; i++) {
      if (!Float.isNaN(x[i][column])) {
        candidates.add(x[i][column]);
      }
      positives += y[i] ? 1 : 0;
    }
    double best = candidates.isEmpty() ? 1 : candidates.first();
    double bestF1 = -1;
    for (float k : candidates) {
      long tp = 0;
      long flagged = 0;
      for (int i = 0; i < x.length; i++) {
        if (x[i][column] >= k) {
          flagged++;
          tp += y[i] ? 1 : 0;
        }
      }
      double f1 = tp == 0 ? 0 : 2.0 * tp / (flagged + positives);
      if (f1 > bestF1) {
        bestF1 = f1;
        best = k;
      }
    }
    return best;
  }

  static float[][] features(List<TrainingRow> rows) {
    float[][] x = new float[rows.size()][];
    for (int i = 0; i < x.length; i++) {
      x[i] = rows.get(i).features();
    }
    return x;
  }

  static boolean[] positives(List<TrainingRow> rows) {
    boolean[] y = new boolean[rows.size()];
    for (int i = 0; i < y.length; i++) {
      y[i] = rows.get(i).positive();
    }
    return y;
  }

  /** The feature vectors of {@code rows}, as served ({@link Features#toVector()}). */
  public static float[][] vectors(List<LabelledWindow> rows) {
    float[][] x = new float[rows.size()][];
    for (int i = 0; i < x.length; i++) {
      x[i] = rows.get(i).features().toVector();
    }
    return x;
  }

  static boolean[] labels(List<LabelledWindow> rows) {
    boolean[] y = new boolean[rows.size()];
    for (int i = 0; i < y.length; i++) {
      y[i] = rows.get(i).fraud();
    }
    return y;
  }

  static void requireBothClasses(boolean[] y, String slice, Instant split, Path file) {
    int positives = count(y);
    if (positives == 0 || positives == y.length) {
      throw new IllegalArgumentException(
          "the "
              + slice
              + " slice (split at "
              + split
              + ") of "
              + file
              + " has "
              + positives
              + " positively labelled windows out of "
              + y.length
              + "; it needs both classes: use a longer labelled stream (more events) or another"
              + " trainFraction");
    }
  }

  private static int count(boolean[] y) {
    int n = 0;
    for (boolean b : y) {
      n += b ? 1 : 0;
    }
    return n;
  }

  static DMatrix matrix(float[][] rows) throws XGBoostError {
    int columns = rows[0].length;
    float[] flat = new float[rows.length * columns];
    for (int i = 0; i < rows.length; i++) {
      System.arraycopy(rows[i], 0, flat, i * columns, columns);
    }
    return new DMatrix(flat, rows.length, columns, Float.NaN);
  }

  private static float[] floats(boolean[] y) {
    float[] f = new float[y.length];
    for (int i = 0; i < y.length; i++) {
      f[i] = y[i] ? 1f : 0f;
    }
    return f;
  }

  private static double[] column(float[][] predictions) {
    double[] scores = new double[predictions.length];
    for (int i = 0; i < scores.length; i++) {
      scores[i] = predictions[i][0];
    }
    return scores;
  }

  /** A duration as ISO-8601 in the largest units, e.g. {@code PT5M}. */
  static String iso(org.joda.time.Duration duration) {
    return duration.toPeriod().toString();
  }

  static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by every Java runtime", e);
    }
  }

  /** The xgboost4j version on the classpath. */
  static String xgboostVersion() {
    try (InputStream in = XGBoost.class.getResourceAsStream("/xgboost4j-version.properties")) {
      Properties properties = new Properties();
      if (in != null) {
        properties.load(in);
      }
      return properties.getProperty("version", "unknown");
    } catch (IOException e) {
      return "unknown";
    }
  }

  /**
   * {@code TrainModel <labelled replay> <output dir> [seed] [how the data was made]}: trains with
   * {@link TrainConfig#defaults()} and prints the report.
   */
  public static void main(String[] args) throws IOException {
    if (args.length < 2) {
      System.err.println(
          "usage: TrainModel <labelled replay file> <output dir> [seed] [data description]");
      System.exit(2);
    }
    TrainConfig config = TrainConfig.defaults();
    if (args.length > 2) {
      config = config.withSeed(Long.parseLong(args[2]));
    }
    if (args.length > 3) {
      config = config.withDataDescription(args[3]);
    }
    TrainingReport report = train(Paths.get(args[0]), Paths.get(args[1]), config);
    System.out.println(report.markdown());
  }
}
