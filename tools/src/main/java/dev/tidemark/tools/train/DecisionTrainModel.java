package dev.tidemark.tools.train;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.model.ModelMetadata;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.joda.time.Instant;

/**
 * Trains a new model version from what a run decided and the labels that came later ({@link
 * DecisionExamples}): the examples in decision-time order, the earlier {@code trainFraction} for
 * training and the rest for evaluation, split at a decision time; a training example whose window
 * overlaps an evaluation example's window of the same key (they share events, so labels) is purged.
 * Both models (XGBoost and the ONNX logistic regression, as {@link TrainModel} fits them) are
 * written as the next version in the output directory (one more than the highest version of their
 * names there), with sidecars that record the decisions and labels they came from, so a run
 * watching that directory swaps the new version in.
 */
public final class DecisionTrainModel {
  private DecisionTrainModel() {}

  /** What was written and measured. */
  public record Report(
      Path xgboostModel,
      Path onnxModel,
      String version,
      DecisionExamples.Result data,
      int trainRows,
      int evalRows,
      int purged,
      Instant split,
      TrainModel.Fit fit) {
    /** A few lines for the terminal. */
    public String summary() {
      return String.format(
          Locale.ROOT,
          "trained version %s from %d decision records (%d windows; %d examples: %d on-time, %d"
              + " late editions; %d windows without a label) and %d label records (%d repeated,"
              + " %d matching no decided window, %d without key or event time)%n"
              + "split at decision time %s: %d training examples, %d evaluation, %d purged%n"
              + "evaluation at threshold %.2f: XGBoost precision %.3f recall %.3f AUC-PR %.3f;"
              + " logistic regression precision %.3f recall %.3f AUC-PR %.3f%n"
              + "wrote %s and %s with their sidecars",
          version,
          data.decisionLines(),
          data.windows(),
          data.examples().size(),
          data.onTimeEditions(),
          data.lateEditions(),
          data.unlabelledWindows(),
          data.labelLines(),
          data.repeatedLabels(),
          data.unmatchedLabels(),
          data.labelsWithoutKeyOrTime(),
          Json.instant(split),
          trainRows,
          evalRows,
          purged,
          fit.xgboost().threshold(),
          fit.xgboost().precision(),
          fit.xgboost().recall(),
          fit.xgboost().aucPr(),
          fit.logisticMetrics().precision(),
          fit.logisticMetrics().recall(),
          fit.logisticMetrics().aucPr(),
          xgboostModel,
          onnxModel);
    }
  }

  /**
   * Trains from {@code decisions} and {@code labels} and writes the next model version into {@code
   * outputDir}; {@code config}'s version is replaced by the next one.
   *
   * @throws IllegalArgumentException if there are no examples, a slice lacks a class, or a feature
   *     is absent from some example
   */
  public static Report train(
      PipelineSpec spec,
      Path decisions,
      Path labels,
      Set<String> positiveValues,
      Path outputDir,
      TrainConfig config)
      throws IOException {
    DecisionExamples.Result data = DecisionExamples.read(spec, decisions, labels, positiveValues);
    List<DecisionExamples.Example> examples = data.examples();
    if (examples.isEmpty()) {
      throw new IllegalArgumentException(
          "no labelled decision: "
              + data.windows()
              + " windows decided in "
              + decisions
              + ", "
              + data.labelLines()
              + " label records in "
              + labels
              + " of which "
              + data.unmatchedLabels()
              + " match no decided window (same key, event time inside the window)");
    }
    List<TrainingRow> rows = data.rows();
    SpecTrainModel.requireEveryFeature(spec, rows, decisions);

    int at =
        Math.min(examples.size() - 1, (int) Math.floor(config.trainFraction() * examples.size()));
    Instant split = examples.get(at).decisionTime();
    // Per key, the earliest start of its evaluation windows: a training window of that key that
    // ends after it shares events, so labels, with an evaluation window. Other keys' windows share
    // none, so one late edition decided after the split purges only its own key's windows.
    Map<String, Long> evalFirstStart = new HashMap<>();
    List<TrainingRow> eval = new ArrayList<>();
    for (DecisionExamples.Example example : examples) {
      if (!example.decisionTime().isBefore(split)) {
        eval.add(example.row());
        evalFirstStart.merge(
            example.row().key(), example.row().windowStart().getMillis(), Math::min);
      }
    }
    List<TrainingRow> train = new ArrayList<>();
    for (DecisionExamples.Example example : examples) {
      long keyEvalStart = evalFirstStart.getOrDefault(example.row().key(), Long.MAX_VALUE);
      if (example.decisionTime().isBefore(split)
          && example.row().windowEnd().getMillis() <= keyEvalStart) {
        train.add(example.row());
      }
    }
    int purged = examples.size() - train.size() - eval.size();

    String version = Integer.toString(nextVersion(outputDir, config));
    TrainConfig versioned = config.withModel(config.modelName(), version);
    TrainModel.Fit fit = TrainModel.fitSlices(train, eval, split, purged, versioned, decisions);
    List<String> names = spec.featureNames();
    byte[] onnxBytes =
        fit.logistic()
            .toOnnx(
                versioned.onnxName(),
                "Tidemark "
                    + spec.name()
                    + " logistic regression v"
                    + version
                    + "; inputs "
                    + names);

    ObjectNode trainingData = JsonNodeFactory.instance.objectNode();
    trainingData.put("synthetic", false);
    trainingData.put("spec", spec.name());
    trainingData.put("from", "decisions and labels");
    trainingData.put("decisions", decisions.toString());
    trainingData.put("decisionsSha256", sha256(decisions));
    trainingData.put("labels", labels.toString());
    trainingData.put("labelsSha256", sha256(labels));
    trainingData.put("positiveLabelValues", String.join(",", positiveValues));
    trainingData.put("decisionRecords", data.decisionLines());
    trainingData.put("windows", data.windows());
    trainingData.put("examples", examples.size());
    trainingData.put("onTimeEditions", data.onTimeEditions());
    trainingData.put("lateEditions", data.lateEditions());
    trainingData.put("windowsWithoutFinalEdition", data.withoutEdition());
    trainingData.put("unlabelledWindows", data.unlabelledWindows());
    trainingData.put("labelRecords", data.labelLines());
    trainingData.put("repeatedLabels", data.repeatedLabels());
    trainingData.put("conflictingLabels", data.conflictingLabels());
    trainingData.put("labelsWithoutKeyOrTime", data.labelsWithoutKeyOrTime());
    trainingData.put("unmatchedLabels", data.unmatchedLabels());
    ObjectNode rejected = trainingData.putObject("rejectedLabelsPerReason");
    data.rejectedLabels().forEach(rejected::put);
    ObjectNode values = trainingData.putObject("labelsPerValue");
    data.labelValues().forEach(values::put);
    trainingData.put("splitDecisionTime", Json.instant(split));
    trainingData.put("trainExamples", train.size());
    trainingData.put("trainPositiveExamples", SpecTrainModel.count(fit.trainY()));
    trainingData.put("evalExamples", eval.size());
    trainingData.put("evalPositiveExamples", SpecTrainModel.count(fit.evalY()));
    trainingData.put("purgedExamples", purged);

    Files.createDirectories(outputDir);
    Path xgbFile = outputDir.resolve(versioned.xgboostName() + "-v" + version + ".ubj");
    Path onnxFile = outputDir.resolve(versioned.onnxName() + "-v" + version + ".onnx");
    String rule = names.get(0) + " >= " + SpecTrainingReport.number(fit.baselineThreshold());
    TrainModel.writeModels(
        versioned,
        names,
        xgbFile,
        fit.xgboostBytes(),
        onnxFile,
        onnxBytes,
        trainingData,
        fit,
        rule);
    for (Path model : List.of(xgbFile, onnxFile)) {
      ModelMetadata written =
          ModelMetadata.parse(
              Files.readAllBytes(ModelMetadata.sidecarOf(model)), model.getFileName().toString());
      spec.checkModelFeatures(spec.name(), model.toString(), written.featureNames());
    }
    return new Report(
        xgbFile, onnxFile, version, data, train.size(), eval.size(), purged, split, fit);
  }

  /** One more than the highest version of {@code config}'s model names in {@code dir}, else 1. */
  static int nextVersion(Path dir, TrainConfig config) throws IOException {
    if (!Files.isDirectory(dir)) {
      return 1;
    }
    Pattern pattern =
        Pattern.compile(
            "(?:"
                + Pattern.quote(config.xgboostName())
                + "|"
                + Pattern.quote(config.onnxName())
                + ")-v(\\d{1,9})\\.(?:ubj|onnx)");
    int highest = 0;
    try (Stream<Path> files = Files.list(dir)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        Matcher m = pattern.matcher(file.getFileName().toString());
        if (m.matches()) {
          highest = Math.max(highest, Integer.parseInt(m.group(1)));
        }
      }
    }
    return highest + 1;
  }

  /** The SHA-256 of a file, or of a directory's regular files in name order. */
  private static String sha256(Path path) throws IOException {
    MessageDigest digest;
    try {
      digest = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    List<Path> files;
    if (Files.isDirectory(path)) {
      try (Stream<Path> walk = Files.walk(path)) {
        files = walk.filter(Files::isRegularFile).sorted().toList();
      }
    } else {
      files = List.of(path);
    }
    byte[] buffer = new byte[1 << 16];
    for (Path file : files) {
      digest.update(path.relativize(file).toString().getBytes(StandardCharsets.UTF_8));
      try (InputStream in = new DigestInputStream(Files.newInputStream(file), digest)) {
        while (in.read(buffer) >= 0) {
          // the digest reads along
        }
      }
    }
    return HexFormat.of().formatHex(digest.digest());
  }
}
