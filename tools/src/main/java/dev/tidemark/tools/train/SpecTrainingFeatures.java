package dev.tidemark.tools.train;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.spec.FieldParser;
import dev.tidemark.spec.FieldRejection;
import dev.tidemark.spec.FieldValues;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecFeaturesFn;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.RawRecord;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.SlidingWindows;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * The feature step of training for any spec, in the JVM: each record of a labelled replay is
 * checked as a CloudEvent of the spec's types and its {@code data} read by the spec's {@link
 * FieldParser}; the valid events are assigned to the spec's sliding windows and combined per (key,
 * window) with the spec's {@link SpecFeaturesFn}, the same combine the pipeline runs. In one batch
 * every window is complete, so a row holds what the window's on-time pane would hold.
 *
 * <p>Labels are point in time: a (key, window) is positive when one of its own events has a {@code
 * data.label} other than {@code legit} (the generator writes {@code fraud} for payments and {@code
 * takeover} for logins); an event without a label counts as legit. The label is never a feature
 * (the spec does not declare it).
 *
 * <p>Duplicates: the first line of each CloudEvents identity ({@code source}+{@code id}) in file
 * (arrival) order is kept, as a streaming replay's deduplication keeps it; the replay is taken to
 * be shorter than the spec's {@code identity.horizon}. Too-late events are kept (a streaming replay
 * would divert them); rejected records are counted by reason.
 */
public final class SpecTrainingFeatures {
  /** The label of negative events; any other label is positive. */
  public static final String NEGATIVE_LABEL = "legit";

  private SpecTrainingFeatures() {}

  /**
   * The rows and what the step counted.
   *
   * @param rows one per (key, window), in {@link TrainingRow#TIME_ORDER}
   * @param lines lines of the file
   * @param droppedCopies repeated lines of an identity dropped
   * @param validEvents events the spec accepts (after dropping repeated identities)
   * @param rejected rejected records per dead-letter reason
   * @param labels valid events per {@code data.label} value ({@code (none)} for no label)
   */
  public record Result(
      List<TrainingRow> rows,
      int lines,
      int droppedCopies,
      long validEvents,
      Map<String, Long> rejected,
      Map<String, Long> labels) {}

  /** Reads {@code replay} and computes the labelled features of {@code spec} per (key, window). */
  public static Result compute(PipelineSpec spec, Path replay) throws IOException {
    List<RawRecord> all = TrainingFeatures.readRecords(replay);
    List<RawRecord> records = TrainingFeatures.firstCopies(all);
    FieldParser parser = FieldParser.of(spec);
    SpecFeaturesFn combine = SpecFeaturesFn.of(spec);
    SlidingWindows windows =
        SlidingWindows.of(Duration.millis(spec.windows().size().toMillis()))
            .every(Duration.millis(spec.windows().period().toMillis()));
    Map<String, Long> rejected = new TreeMap<>();
    Map<String, Long> labels = new TreeMap<>();
    Map<String, Pane> panes = new HashMap<>();
    long valid = 0;
    for (RawRecord record : records) {
      Event event;
      try {
        event = read(spec, parser, record);
      } catch (Rejected e) {
        rejected.merge(e.reason, 1L, Long::sum);
        continue;
      }
      valid++;
      labels.merge(event.label == null ? "(none)" : event.label, 1L, Long::sum);
      boolean positive = event.label != null && !NEGATIVE_LABEL.equals(event.label);
      String key = parser.key(event.values);
      for (IntervalWindow window : windows.assignWindows(new Instant(event.timeMillis))) {
        Pane pane =
            panes.computeIfAbsent(
                LabelledWindow.key(key, window.start(), window.end()),
                k -> new Pane(key, window, combine.createAccumulator()));
        combine.addInput(pane.accumulator, event.values);
        pane.positive |= positive;
      }
    }
    List<TrainingRow> rows = new ArrayList<>(panes.size());
    for (Pane pane : panes.values()) {
      rows.add(
          new TrainingRow(
              pane.key,
              pane.window.start(),
              pane.window.end(),
              combine.toVector(combine.extractOutput(pane.accumulator)),
              pane.positive));
    }
    rows.sort(TrainingRow.TIME_ORDER);
    return new Result(
        rows,
        TrainingFeatures.countLines(replay),
        all.size() - records.size(),
        valid,
        rejected,
        labels);
  }

  /** One (key, window) being combined. */
  private static final class Pane {
    final String key;
    final IntervalWindow window;
    final SpecFeaturesFn.Accumulator accumulator;
    boolean positive;

    Pane(String key, IntervalWindow window, SpecFeaturesFn.Accumulator accumulator) {
      this.key = key;
      this.window = window;
      this.accumulator = accumulator;
    }
  }

  /** A record the spec rejects, with its dead-letter reason; control flow, no stack trace. */
  private static final class Rejected extends Exception {
    private static final long serialVersionUID = 1L;
    final String reason;

    Rejected(String reason, String message) {
      super(message, null, false, false);
      this.reason = reason;
    }
  }

  /** A valid event: its fields, event time and label. */
  private record Event(FieldValues values, long timeMillis, @Nullable String label) {}

  /**
   * Checks {@code record} as a CloudEvent of the spec and reads its fields.
   *
   * @throws Rejected with the reason the pipeline gives such a record
   */
  private static Event read(PipelineSpec spec, FieldParser parser, RawRecord record)
      throws Rejected {
    byte[] payload = record.payload();
    if (payload.length > spec.events().maxEventBytes()) {
      throw new Rejected("oversized_record", payload.length + " bytes");
    }
    try {
      StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(java.nio.ByteBuffer.wrap(payload));
    } catch (CharacterCodingException e) {
      throw new Rejected("invalid_utf8", "not UTF-8");
    }
    JsonNode node;
    try {
      node = Json.MAPPER.readTree(payload);
    } catch (IOException | RuntimeException e) {
      throw new Rejected("invalid_json", "not JSON");
    }
    if (node == null || !node.isObject() || !node.has("specversion")) {
      throw new Rejected("not_a_cloudevent", "not a CloudEvent object");
    }
    if (!"1.0".equals(node.get("specversion").asText())) {
      throw new Rejected("unsupported_specversion", node.get("specversion").toString());
    }
    for (String attribute : List.of("id", "source", "type")) {
      JsonNode value = node.get(attribute);
      if (value == null || !value.isTextual() || value.asText().isEmpty()) {
        throw new Rejected("missing_attribute", attribute);
      }
    }
    if (!spec.events().types().contains(node.get("type").asText())) {
      throw new Rejected("unsupported_type", node.get("type").asText());
    }
    long ingestion = record.ingestionTime().getMillis();
    String clock = spec.clocks().eventTime();
    long time;
    FieldValues values;
    try {
      if (PipelineSpec.Clocks.TIME_ATTRIBUTE.equals(clock)) {
        time = attributeTime(node);
        values = parser.parse(node.get("data"), time, ingestion);
      } else {
        // The event time is a timestamp field: read it, then stamp the fields with it.
        time = parser.parse(node.get("data"), ingestion, ingestion).getLong(parser.indexOf(clock));
        values = parser.parse(node.get("data"), time, ingestion);
      }
    } catch (FieldRejection e) {
      throw new Rejected(e.reason(), e.getMessage());
    }
    if (time > ingestion + spec.clocks().maxFutureSkew().toMillis()) {
      throw new Rejected("time_in_future", "event time after ingestion + maxFutureSkew");
    }
    JsonNode label = node.get("data").get("label");
    return new Event(values, time, label != null && label.isTextual() ? label.asText() : null);
  }

  private static long attributeTime(JsonNode node) throws Rejected {
    JsonNode time = node.get("time");
    if (time == null || !time.isTextual()) {
      throw new Rejected("missing_attribute", "time");
    }
    try {
      return OffsetDateTime.parse(time.asText()).toInstant().toEpochMilli();
    } catch (RuntimeException e) {
      throw new Rejected("invalid_time", time.asText());
    }
  }
}
