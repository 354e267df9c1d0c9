package dev.tidemark.tools.report;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.pipelines.EvaluateDecisions;
import dev.tidemark.pipelines.Outputs;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.transforms.util.Json;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * What the report shows, read from a run's output directory: {@code summary.json}, the decisions
 * and the too-late records (every {@code *.ndjson} file of their directories, written once or
 * rolled). Times are epoch milliseconds.
 */
final class RunData {
  /** One decision, as the charts need it. */
  record DecisionPoint(
      String key,
      long windowStart,
      long windowEnd,
      long eventTime,
      long ingestionTime,
      long processingTime,
      long decisionTime,
      String timing,
      @Nullable String correction,
      boolean supersedes,
      @Nullable Double score,
      @Nullable String model) {}

  /** One too-late record: its event and ingestion time. */
  record TooLatePoint(long eventTime, long ingestionTime) {}

  final Path directory;
  final JsonNode summary;

  /** The decision at or above the threshold and below it: the spec's labels in summary.json. */
  final String atOrAboveLabel;

  final String belowLabel;
  final List<DecisionPoint> decisions;
  final List<TooLatePoint> tooLate;

  /** The drift alarms, one JSON object each as the drift output has them; none without it. */
  final List<JsonNode> driftAlarms;

  private RunData(
      Path directory,
      JsonNode summary,
      List<DecisionPoint> decisions,
      List<TooLatePoint> tooLate,
      List<JsonNode> driftAlarms) {
    this.directory = directory;
    this.summary = summary;
    JsonNode labels = summary.path("spec").path("labels");
    this.atOrAboveLabel = labels.path("atOrAbove").asText("review");
    this.belowLabel = labels.path("below").asText("allow");
    this.decisions = Collections.unmodifiableList(decisions);
    this.tooLate = Collections.unmodifiableList(tooLate);
    this.driftAlarms = Collections.unmodifiableList(driftAlarms);
  }

  /**
   * Reads the outputs under {@code directory}; an {@link IllegalArgumentException} says what is
   * missing when it holds no run's file outputs.
   */
  static RunData load(Path directory) {
    if (!Files.isDirectory(directory)) {
      throw new IllegalArgumentException(
          "--input=" + directory + ": no such directory; give the --output of a run");
    }
    Path summaryFile = directory.resolve("summary.json");
    if (!Files.isRegularFile(summaryFile)) {
      throw new IllegalArgumentException(
          "--input="
              + directory
              + ": no summary.json there; give the --output directory of a finished"
              + " './tidemark run' with --sink=files");
    }
    JsonNode summary;
    try {
      summary = Json.MAPPER.readTree(summaryFile.toFile());
    } catch (IOException e) {
      throw new IllegalArgumentException(summaryFile + " is not JSON: " + e.getMessage(), e);
    }
    // The outputs' directories, by the spec's output names: those summary.json gives, else the
    // default ones.
    JsonNode outputs = summary.path("outputs");
    Map<String, String> directories = new LinkedHashMap<>();
    for (int i = 0; i < Outputs.NAMES.size(); i++) {
      String output = PipelineSpec.OUTPUTS.get(i);
      directories.put(output, outputs.path(output).asText(Outputs.NAMES.get(i)));
    }
    List<String> missing =
        directories.values().stream()
            .filter(name -> !Files.isDirectory(directory.resolve(name)))
            .collect(Collectors.toList());
    if (!missing.isEmpty()) {
      throw new IllegalArgumentException(
          "--input="
              + directory
              + ": no "
              + String.join(", ", missing)
              + " output there; the report reads the files of a run with --sink=files");
    }
    // The key's field: the spec's, which summary.json names (payments' before it did).
    String keyField = summary.path("spec").path("key").asText("accountId");
    List<DecisionPoint> decisions = new ArrayList<>();
    for (JsonNode line : lines(directory.resolve(directories.get("decisions")))) {
      decisions.add(decision(line, keyField));
    }
    List<TooLatePoint> tooLate = new ArrayList<>();
    for (JsonNode line : lines(directory.resolve(directories.get("tooLate")))) {
      tooLate.add(
          new TooLatePoint(millis(line.path("eventTime")), millis(line.path("ingestionTime"))));
    }
    // The drift output, in time order: a run before drift alarms has none.
    Path drift = directory.resolve(outputs.path("drift").asText(EvaluateDecisions.DRIFT));
    List<JsonNode> alarms = Files.isDirectory(drift) ? lines(drift) : new ArrayList<>();
    alarms.sort(java.util.Comparator.comparing(alarm -> alarm.path("at").asText()));
    return new RunData(directory, summary, decisions, tooLate, alarms);
  }

  private static DecisionPoint decision(JsonNode line, String keyField) {
    JsonNode clocks = line.path("clocks");
    JsonNode model = line.path("model");
    return new DecisionPoint(
        line.path(keyField).asText(),
        millis(line.path("windowStart")),
        millis(line.path("windowEnd")),
        millis(clocks.path("eventTime")),
        millis(clocks.path("ingestionTime")),
        millis(clocks.path("processingTime")),
        millis(clocks.path("decisionTime")),
        line.path("pane").path("timing").asText("UNKNOWN"),
        line.hasNonNull("correction") ? line.get("correction").asText() : null,
        line.hasNonNull("supersedes"),
        line.path("score").isNumber() ? line.get("score").asDouble() : null,
        model.isObject()
            ? model.path("name").asText() + ":" + model.path("version").asText()
            : null);
  }

  private static long millis(JsonNode time) {
    if (!time.isTextual()) {
      throw new IllegalArgumentException("expected an RFC 3339 time, found " + time);
    }
    return Instant.parse(time.asText()).toEpochMilli();
  }

  /** The JSON objects of every {@code *.ndjson} file in {@code directory}, one per line. */
  private static List<JsonNode> lines(Path directory) {
    List<JsonNode> nodes = new ArrayList<>();
    try (Stream<Path> files = Files.list(directory)) {
      List<Path> sorted =
          files
              .filter(f -> f.getFileName().toString().endsWith(".ndjson"))
              .sorted()
              .collect(Collectors.toList());
      for (Path file : sorted) {
        try (BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
          int number = 0;
          for (String line = reader.readLine(); line != null; line = reader.readLine()) {
            number++;
            if (line.isBlank()) {
              continue;
            }
            try {
              nodes.add(Json.MAPPER.readTree(line));
            } catch (IOException e) {
              throw new IllegalArgumentException(
                  file + ":" + number + " is not a JSON line: " + e.getMessage(), e);
            }
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + directory, e);
    }
    return nodes;
  }

  /** A summary.json figure; 0 when absent. */
  long figure(String key) {
    return summary.path(key).asLong(0);
  }
}
