package dev.tidemark.tools.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Optional;

/**
 * The run's options the report needs and the outputs do not carry. A run writes them as {@value
 * #FILE_NAME} beside {@code summary.json} (whose keys are a contract of their own), and {@code
 * tidemark report} reads them back.
 *
 * @param allowedLateness {@code --allowedLateness}, marked on the lateness histogram
 * @param decisionThreshold {@code --decisionThreshold}, marked on the score histograms
 * @param accumulationMode {@code --accumulationMode}: without corrections when {@code DISCARDING}
 */
public record ReportSettings(
    Duration allowedLateness, double decisionThreshold, String accumulationMode) {
  /** The file beside {@code summary.json}. */
  public static final String FILE_NAME = "report-options.json";

  /** The pipeline's defaults, for outputs written without {@value #FILE_NAME}. */
  public static final ReportSettings DEFAULTS =
      new ReportSettings(Duration.ofHours(1), 0.5, "ACCUMULATING");

  public ReportSettings {
    if (allowedLateness == null || allowedLateness.isNegative()) {
      throw new IllegalArgumentException(
          "--allowedLateness must be a non-negative ISO-8601 duration such as PT1H, got "
              + allowedLateness);
    }
  }

  /** A copy with another allowed lateness, given as ISO-8601 ({@code PT1H}). */
  public ReportSettings withAllowedLateness(String iso) {
    try {
      return new ReportSettings(Duration.parse(iso), decisionThreshold, accumulationMode);
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(
          "--allowedLateness=" + iso + ": not an ISO-8601 duration such as PT1H", e);
    }
  }

  /** Writes {@value #FILE_NAME} into {@code directory}. */
  public void writeTo(Path directory) {
    ObjectNode json = Json.MAPPER.createObjectNode();
    json.put("allowedLateness", allowedLateness.toString());
    json.put("decisionThreshold", decisionThreshold);
    json.put("accumulationMode", accumulationMode);
    try {
      Files.createDirectories(directory);
      Files.writeString(
          directory.resolve(FILE_NAME),
          Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(json) + "\n",
          StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + directory.resolve(FILE_NAME), e);
    }
  }

  /** The settings a run recorded in {@code directory}, if it recorded any. */
  public static Optional<ReportSettings> readFrom(Path directory) {
    Path file = directory.resolve(FILE_NAME);
    if (!Files.isRegularFile(file)) {
      return Optional.empty();
    }
    try {
      JsonNode json = Json.MAPPER.readTree(file.toFile());
      return Optional.of(
          new ReportSettings(
              Duration.parse(json.path("allowedLateness").asText("PT1H")),
              json.path("decisionThreshold").asDouble(DEFAULTS.decisionThreshold()),
              json.path("accumulationMode").asText(DEFAULTS.accumulationMode())));
    } catch (IOException | DateTimeParseException e) {
      throw new IllegalArgumentException(file + " is not a valid report options file: " + e, e);
    }
  }
}
