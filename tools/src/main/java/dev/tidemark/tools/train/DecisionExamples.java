package dev.tidemark.tools.train;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.util.Rfc3339;
import dev.tidemark.transforms.values.Evaluation;
import dev.tidemark.transforms.values.Label;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.DateTimeException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import org.joda.time.Instant;

/**
 * Training examples from what was decided and what was learnt later: each window's decision edition
 * in force (its on-time edition; a window whose first non-early pane was late, that late pane),
 * with its features exactly as they were scored, labelled by the labels of the events in its
 * window. Point-in-time correct by construction: a decision's features are those of its moment, so
 * no feature value from after it can reach the example, and its time is its decision time.
 *
 * <p>A label is matched to the windows of its {@code key} whose span holds its {@code eventTime}. A
 * window with a positive label is positive; one with labels, all negative, is negative; a window no
 * label reached is left out (its outcome is unknown). Labels are deduplicated on their own {@code
 * source} + {@code id} (the first copy counts); a label that matches no decided window (an unknown
 * event, or one whose windows were not among the decisions read), or that lacks a key or event
 * time, is counted, never silently dropped.
 */
public final class DecisionExamples {
  private DecisionExamples() {}

  /** One example: the training row and the decision it came from. */
  public record Example(TrainingRow row, String decisionId, long version, Instant decisionTime) {
    /** Decision-time order, then the decision's id: the order of the split. */
    static final Comparator<Example> DECISION_ORDER =
        Comparator.comparing(Example::decisionTime).thenComparing(Example::decisionId);
  }

  /**
   * The examples and the accounting of what was read.
   *
   * @param examples in {@link Example#DECISION_ORDER}
   * @param decisionLines decision records read
   * @param windows distinct windows (decision ids) among them
   * @param onTimeEditions examples from an on-time edition
   * @param lateEditions examples from a window's first late edition (it had no on-time pane)
   * @param withoutEdition windows with early panes only (not yet final when read): no example
   * @param unlabelledWindows windows in force that no label reached: no example
   * @param labelLines label records read
   * @param repeatedLabels copies of a label identity already read (the first copy counts)
   * @param conflictingLabels among them, copies whose content differs from the first
   * @param rejectedLabels lines that are not labels, by reason
   * @param labelsWithoutKeyOrTime labels that name their event only by identity
   * @param unmatchedLabels labels whose key and time fall in no decided window
   * @param labelValues distinct labels by value
   */
  public record Result(
      List<Example> examples,
      long decisionLines,
      long windows,
      long onTimeEditions,
      long lateEditions,
      long withoutEdition,
      long unlabelledWindows,
      long labelLines,
      long repeatedLabels,
      long conflictingLabels,
      Map<String, Long> rejectedLabels,
      long labelsWithoutKeyOrTime,
      long unmatchedLabels,
      Map<String, Long> labelValues) {
    /** The examples' training rows, in decision-time order. */
    public List<TrainingRow> rows() {
      return examples.stream().map(Example::row).toList();
    }
  }

  /** A decision edition as read: what an example needs. */
  private record Edition(
      String decisionId,
      String key,
      Instant windowStart,
      Instant windowEnd,
      String timing,
      long version,
      Instant decisionTime,
      float[] features) {}

  /**
   * Reads the decisions under {@code decisions} (a file, or a directory whose regular files are
   * read in name order, {@code .gz} ones decompressed) and the labels in {@code labels}, and makes
   * the examples of {@code spec}'s key and features; {@code positiveValues} are the label values
   * that mean the positive class.
   *
   * @throws IllegalArgumentException if a decision record is not one of this spec's (no key, no
   *     decision time, a window that is not RFC 3339)
   */
  public static Result read(
      PipelineSpec spec, Path decisions, Path labels, Set<String> positiveValues)
      throws IOException {
    String keyField = spec.events().key();
    List<String> names = spec.featureNames();
    Map<String, Edition> inForce = new HashMap<>();
    Map<String, Boolean> seenWindows = new HashMap<>();
    long decisionLines = 0;
    for (Path file : files(decisions)) {
      try (BufferedReader reader = reader(file)) {
        String line;
        long number = 0;
        while ((line = reader.readLine()) != null) {
          number++;
          if (line.isBlank()) {
            continue;
          }
          decisionLines++;
          Edition edition = edition(line, keyField, names, file + ":" + number);
          seenWindows.put(edition.decisionId(), Boolean.TRUE);
          if (!Evaluation.Edition.counts(edition.timing())) {
            continue;
          }
          inForce.merge(edition.decisionId(), edition, DecisionExamples::earlierFinal);
        }
      }
    }

    // Windows by key, in start order, to match labels to.
    Map<String, TreeMap<Long, List<Edition>>> byKey = new HashMap<>();
    for (Edition edition : inForce.values()) {
      byKey
          .computeIfAbsent(edition.key(), k -> new TreeMap<>())
          .computeIfAbsent(edition.windowStart().getMillis(), k -> new ArrayList<>())
          .add(edition);
    }
    long maxSize =
        inForce.values().stream()
            .mapToLong(e -> e.windowEnd().getMillis() - e.windowStart().getMillis())
            .max()
            .orElse(0);

    Map<String, Label> firstCopies = new LinkedHashMap<>();
    Map<String, Long> rejected = new TreeMap<>();
    Map<String, Long> values = new TreeMap<>();
    Map<String, Boolean> outcome = new HashMap<>();
    long labelLines = 0;
    long repeated = 0;
    long conflicting = 0;
    long withoutKeyOrTime = 0;
    long unmatched = 0;
    try (BufferedReader reader = reader(labels)) {
      String line;
      while ((line = reader.readLine()) != null) {
        if (line.isBlank()) {
          continue;
        }
        labelLines++;
        Label label;
        try {
          label = Label.parse(line);
        } catch (IllegalArgumentException e) {
          rejected.merge(reason(e.getMessage()), 1L, Long::sum);
          continue;
        }
        Label first = firstCopies.putIfAbsent(label.identity(), label);
        if (first != null) {
          repeated++;
          conflicting += first.equals(label) ? 0 : 1;
          continue;
        }
        values.merge(label.value(), 1L, Long::sum);
        if (label.key() == null || label.eventTime() == null) {
          withoutKeyOrTime++;
          continue;
        }
        boolean positive = positiveValues.contains(label.value());
        boolean matched = false;
        TreeMap<Long, List<Edition>> windows = byKey.get(label.key());
        long time = label.eventTime().getMillis();
        if (windows != null) {
          for (List<Edition> starting :
              windows.subMap(time - maxSize, false, time, true).values()) {
            for (Edition edition : starting) {
              if (time < edition.windowEnd().getMillis()) {
                matched = true;
                outcome.merge(edition.decisionId(), positive, Boolean::logicalOr);
              }
            }
          }
        }
        unmatched += matched ? 0 : 1;
      }
    }

    List<Example> examples = new ArrayList<>();
    long onTime = 0;
    long late = 0;
    for (Edition edition : inForce.values()) {
      Boolean positive = outcome.get(edition.decisionId());
      if (positive == null) {
        continue;
      }
      if (edition.timing().equals(Evaluation.Edition.ON_TIME)) {
        onTime++;
      } else {
        late++;
      }
      examples.add(
          new Example(
              new TrainingRow(
                  edition.key(),
                  edition.windowStart(),
                  edition.windowEnd(),
                  edition.features(),
                  positive),
              edition.decisionId(),
              edition.version(),
              edition.decisionTime()));
    }
    examples.sort(Example.DECISION_ORDER);
    return new Result(
        examples,
        decisionLines,
        seenWindows.size(),
        onTime,
        late,
        seenWindows.size() - inForce.size(),
        inForce.size() - examples.size(),
        labelLines,
        repeated,
        conflicting,
        rejected,
        withoutKeyOrTime,
        unmatched,
        values);
  }

  /** Of two non-early editions of one window, the one in force, by the pipeline's own rule. */
  private static Edition earlierFinal(Edition a, Edition b) {
    return Evaluation.Edition.isInForceOver(a.timing(), a.version(), b.timing(), b.version())
        ? a
        : b;
  }

  private static Edition edition(String line, String keyField, List<String> names, String where) {
    JsonNode node;
    try {
      node = Json.MAPPER.readTree(line);
    } catch (IOException e) {
      throw new IllegalArgumentException(where + " is not JSON: " + e.getMessage(), e);
    }
    String decisionId = text(node, "decisionId", where);
    String key = text(node, keyField, where);
    String timing = text(node.path("pane"), "timing", where);
    JsonNode features = node.path("features");
    float[] row = new float[names.size()];
    for (int j = 0; j < row.length; j++) {
      JsonNode value = features.get(names.get(j));
      row[j] = value == null || !value.isNumber() ? Float.NaN : value.floatValue();
    }
    try {
      return new Edition(
          decisionId,
          key,
          instant(text(node, "windowStart", where)),
          instant(text(node, "windowEnd", where)),
          timing,
          node.path("version").asLong(),
          instant(text(node.path("clocks"), "decisionTime", where)),
          row);
    } catch (DateTimeException e) {
      throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
    }
  }

  private static String text(JsonNode node, String name, String where) {
    JsonNode value = node.get(name);
    if (value == null || !value.isTextual()) {
      throw new IllegalArgumentException(
          where
              + " has no '"
              + name
              + "': is it a decision of this spec"
              + (name.equals("decisionTime")
                  ? " (the decision time is in every sink's records)"
                  : "")
              + "?");
    }
    return value.asText();
  }

  private static Instant instant(String text) {
    return new Instant(Rfc3339.epochMillis(text));
  }

  /** A rejection's reason without the line's own values: its text up to the first colon. */
  private static String reason(String message) {
    int colon = message.indexOf(':');
    return colon < 0 ? message : message.substring(0, colon);
  }

  private static List<Path> files(Path path) throws IOException {
    if (Files.isRegularFile(path)) {
      return List.of(path);
    }
    if (!Files.isDirectory(path)) {
      throw new IllegalArgumentException("no decisions at " + path);
    }
    try (Stream<Path> files = Files.walk(path)) {
      return files
          .filter(Files::isRegularFile)
          .filter(f -> !f.getFileName().toString().startsWith("."))
          .sorted()
          .toList();
    }
  }

  private static BufferedReader reader(Path file) throws IOException {
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException("no file at " + file);
    }
    InputStream in = Files.newInputStream(file);
    if (file.getFileName().toString().endsWith(".gz")) {
      in = new GZIPInputStream(in);
    }
    return new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
  }
}
