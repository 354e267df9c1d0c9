package dev.tidemark.launcher.check;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.launcher.KafkaFeed;
import dev.tidemark.launcher.LiveRun;
import dev.tidemark.pipelines.Outputs;
import dev.tidemark.pipelines.io.ReplayFile;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * The four outputs of one run (a batch run's files or a streaming run's committed topics) as the
 * views a comparison needs, each keyed so that a batch and a streaming run of the same input give
 * the same keys and, where nothing was lost or doubled, the same values.
 *
 * <ul>
 *   <li>Decisions: per {@code decisionId} how often each version was seen, and the keep-latest
 *       final state (the highest version) in its {@link #stableDecision stable form}.
 *   <li>Dead letters: a multiset of {@code reason|identity}, the identity being the record's
 *       top-level {@code source} and {@code id} where its payload has them (read leniently, so a
 *       truncated payload still names its event), else the SHA-256 of the original bytes.
 *       End-of-stream markers have the identity {@code source|id} of {@link
 *       LiveRun#END_MARKER_SOURCE}.
 *   <li>Duplicates: per {@code source|id} the sorted stable records (every field of a duplicate
 *       record: {@code identicalPayload} tells a conflict).
 *   <li>Too-late records: per {@code source|id} the sorted records without {@code watermark}, the
 *       bound the event was judged against, which depends on when the gate's probes fired.
 * </ul>
 */
public final class OutputView {
  private static final JsonFactory LENIENT = new JsonFactory();

  private long decisionsCommitted;
  private final Map<String, TreeMap<Long, Integer>> versions = new TreeMap<>();
  private final Map<String, Long> latestVersion = new TreeMap<>();
  private final Map<String, String> finalState = new TreeMap<>();
  private final Map<String, Long> deadLetters = new TreeMap<>();
  private final Map<String, String> deadLetterOrigins = new TreeMap<>();
  private final Map<String, Long> deadLettersByReason = new TreeMap<>();
  private long deadLetterRecords;
  private final Map<String, List<String>> duplicates = new TreeMap<>();
  private long duplicateRecords;
  private final Map<String, List<String>> tooLate = new TreeMap<>();
  private long tooLateRecords;
  private final List<String> partiallyLate = new ArrayList<>();

  /** An empty view; fill it with the {@code add*} methods. */
  public OutputView() {}

  /**
   * Every record committed to the four output topics up to now, read {@code read_committed}.
   *
   * @param topics output name ({@link Outputs#NAMES}) to topic, as {@code KafkaSinks.topics}
   */
  public static OutputView fromTopics(KafkaClients clients, Map<String, String> topics) {
    Map<String, List<byte[]>> values = new TreeMap<>();
    for (String name : Outputs.NAMES) {
      List<byte[]> records = new ArrayList<>();
      for (ConsumerRecord<byte[], byte[]> record :
          KafkaFeed.readAll(clients, topic(topics, name))) {
        records.add(record.value());
      }
      values.put(name, records);
    }
    return of(values);
  }

  /** The records {@link LiveRun#awaitQuiet} returned, by output name. */
  public static OutputView fromRecords(Map<String, List<ConsumerRecord<byte[], byte[]>>> records) {
    Map<String, List<byte[]>> values = new TreeMap<>();
    for (String name : Outputs.NAMES) {
      List<byte[]> list = new ArrayList<>();
      for (ConsumerRecord<byte[], byte[]> record : records.getOrDefault(name, List.of())) {
        list.add(record.value());
      }
      values.put(name, list);
    }
    return of(values);
  }

  /**
   * The NDJSON outputs of a file-sink run under {@code outputDirectory} (one folder per output).
   */
  public static OutputView fromFiles(Path outputDirectory) {
    return fromFiles(List.of(outputDirectory));
  }

  /** The NDJSON outputs of file-sink runs over disjoint parts of one input, as one view. */
  public static OutputView fromFiles(List<Path> outputDirectories) {
    Map<String, List<byte[]>> values = new TreeMap<>();
    for (String name : Outputs.NAMES) {
      List<byte[]> lines = new ArrayList<>();
      for (Path outputDirectory : outputDirectories) {
        addLines(outputDirectory.resolve(name), lines);
      }
      values.put(name, lines);
    }
    return of(values);
  }

  private static void addLines(Path dir, List<byte[]> lines) {
    if (!Files.isDirectory(dir)) {
      return;
    }
    try (Stream<Path> files = Files.list(dir)) {
      for (Path file :
          files.filter(f -> f.getFileName().toString().endsWith(".ndjson")).sorted().toList()) {
        for (byte[] line : ReplayFile.splitLines(Files.readAllBytes(file))) {
          if (line.length > 0) {
            lines.add(line);
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the outputs in " + dir, e);
    }
  }

  private static OutputView of(Map<String, List<byte[]>> values) {
    OutputView view = new OutputView();
    values.get(Outputs.NAMES.get(0)).forEach(view::addDecision);
    values.get(Outputs.NAMES.get(1)).forEach(view::addDeadLetter);
    values.get(Outputs.NAMES.get(2)).forEach(view::addDuplicate);
    values.get(Outputs.NAMES.get(3)).forEach(view::addTooLate);
    return view;
  }

  private static String topic(Map<String, String> topics, String name) {
    String topic = topics.get(name);
    if (topic == null) {
      throw new IllegalArgumentException("no topic for output '" + name + "' in " + topics);
    }
    return topic;
  }

  /** Adds one decision record (its JSON line). */
  public void addDecision(byte[] json) {
    JsonNode decision = parse(json, "decision");
    String id = decision.path("decisionId").asText();
    long version = decision.path("version").asLong();
    decisionsCommitted++;
    versions.computeIfAbsent(id, k -> new TreeMap<>()).merge(version, 1, Integer::sum);
    if (version >= latestVersion.getOrDefault(id, -1L)) {
      latestVersion.put(id, version);
      finalState.put(id, stableDecision(decision));
    }
  }

  /** Adds one dead-letter record (its JSON line). */
  public void addDeadLetter(byte[] json) {
    JsonNode letter = parse(json, "dead letter");
    deadLetterRecords++;
    String reason = letter.path("reason").asText();
    deadLettersByReason.merge(reason, 1L, Long::sum);
    String key = reason + "|" + identity(letter);
    deadLetters.merge(key, 1L, Long::sum);
    deadLetterOrigins.putIfAbsent(letter.path("origin").asText(), key);
  }

  /** Adds one duplicate record (its JSON line). */
  public void addDuplicate(byte[] json) {
    JsonNode duplicate = parse(json, "duplicate");
    duplicateRecords++;
    duplicates
        .computeIfAbsent(sourceAndId(duplicate), k -> new ArrayList<>())
        .add(Json.canonical(duplicate));
  }

  /** Adds one too-late record (its JSON line). */
  public void addTooLate(byte[] json) {
    ObjectNode record = (ObjectNode) parse(json, "too-late record");
    tooLateRecords++;
    record.remove("watermark");
    if (record.path("partiallyLate").asBoolean()) {
      partiallyLate.add(Json.canonical(record));
    }
    tooLate
        .computeIfAbsent(sourceAndId(record), k -> new ArrayList<>())
        .add(Json.canonical(record));
  }

  /**
   * A decision without what legitimately differs between a batch and a streaming run of the same
   * input: its version and pane bookkeeping (how many early panes fired depends on processing
   * time), what it corrects (a batch run's single pane corrects nothing) and the processing and
   * decision wall clocks. What remains is the window, its features, its event and ingestion clocks
   * (the ingestion time is the record timestamp the feed set from the replay clock) and the score:
   * the final pane of a window holds all its events in both runs.
   */
  public static String stableDecision(JsonNode decision) {
    ObjectNode copy = decision.deepCopy();
    copy.remove("version");
    copy.remove("pane");
    copy.remove("correction");
    copy.remove("supersedes");
    JsonNode clocks = copy.get("clocks");
    if (clocks instanceof ObjectNode) {
      ((ObjectNode) clocks).remove("processingTime");
      ((ObjectNode) clocks).remove("decisionTime");
    }
    return Json.canonical(copy);
  }

  /**
   * The identity of a dead-lettered record: {@code source|id} read leniently from the start of its
   * payload (top-level members only, stopping at the first syntax error, so a cut payload still
   * names its event when those members come first), else {@code sha256:} and the original bytes'
   * hash, which a record that is not a readable event keeps on every path into the pipeline.
   */
  static String identity(JsonNode letter) {
    String payload = letter.path("payload").isTextual() ? letter.get("payload").asText() : null;
    if (payload != null) {
      String[] sourceAndId = leadingSourceAndId(payload);
      if (sourceAndId[0] != null && sourceAndId[1] != null) {
        return sourceAndId[0] + "|" + sourceAndId[1];
      }
    }
    return "sha256:" + letter.path("payloadSha256").asText();
  }

  private static String[] leadingSourceAndId(String payload) {
    String[] found = new String[2];
    try (JsonParser parser = LENIENT.createParser(payload)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        return found;
      }
      JsonToken token;
      while ((token = parser.nextToken()) == JsonToken.FIELD_NAME) {
        String name = parser.currentName();
        JsonToken value = parser.nextToken();
        if (value == JsonToken.VALUE_STRING && ("source".equals(name) || "id".equals(name))) {
          String text = parser.getText();
          if (!text.isEmpty()) {
            found["source".equals(name) ? 0 : 1] = text;
          }
          if (found[0] != null && found[1] != null) {
            return found;
          }
        } else if (value == JsonToken.START_OBJECT || value == JsonToken.START_ARRAY) {
          parser.skipChildren();
        }
      }
      if (token == null) {
        return found;
      }
    } catch (IOException e) {
      // A cut or broken payload: what was read before the error stands.
    }
    return found;
  }

  private static String sourceAndId(JsonNode record) {
    return record.path("source").asText() + "|" + record.path("id").asText();
  }

  private static JsonNode parse(byte[] json, String what) {
    try {
      JsonNode node = Json.MAPPER.readTree(json);
      if (node == null || !node.isObject()) {
        throw new IllegalArgumentException(
            "not a " + what + " record: " + new String(json, StandardCharsets.UTF_8));
      }
      return node;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read a " + what + " record", e);
    }
  }

  /** Decision records read, every version and copy. */
  public long decisionsCommitted() {
    return decisionsCommitted;
  }

  /** Per {@code decisionId}, each version seen and how many times. */
  public Map<String, TreeMap<Long, Integer>> versions() {
    return Collections.unmodifiableMap(versions);
  }

  /** {@code decisionId@version} pairs seen more than once, once per extra copy. */
  public List<String> duplicateVersions() {
    List<String> doubled = new ArrayList<>();
    versions.forEach(
        (id, seen) ->
            seen.forEach(
                (version, count) -> {
                  for (int i = 1; i < count; i++) {
                    doubled.add(id + "@" + version);
                  }
                }));
    return doubled;
  }

  /** {@code decisionId@version} pairs missing below a decision's highest version seen. */
  public List<String> missingVersions() {
    List<String> missing = new ArrayList<>();
    versions.forEach(
        (id, seen) -> {
          for (long version = 0; version < seen.lastKey(); version++) {
            if (!seen.containsKey(version)) {
              missing.add(id + "@" + version);
            }
          }
        });
    return missing;
  }

  /** Per {@code decisionId}, the stable form of its highest version. */
  public Map<String, String> finalState() {
    return Collections.unmodifiableMap(finalState);
  }

  /** Dead letters as {@code reason|identity} to how many, end-of-stream markers included. */
  public Map<String, Long> deadLetters() {
    return Collections.unmodifiableMap(deadLetters);
  }

  /**
   * Dead letters as {@code reason|identity} to how many, counting each origin (the input record a
   * dead letter was made from: file line or Kafka partition and offset) once: what an at-least-once
   * sink's repeated deliveries of the same dead letter collapse to.
   */
  public Map<String, Long> deadLettersByOrigin() {
    Map<String, Long> collapsed = new TreeMap<>();
    deadLetterOrigins.values().forEach(key -> collapsed.merge(key, 1L, Long::sum));
    return collapsed;
  }

  /** Dead letters by reason, end-of-stream markers included. */
  public Map<String, Long> deadLettersByReason() {
    return Collections.unmodifiableMap(deadLettersByReason);
  }

  /** Dead-letter records read. */
  public long deadLetterRecords() {
    return deadLetterRecords;
  }

  /** Duplicate records per {@code source|id}. */
  public Map<String, List<String>> duplicates() {
    return Collections.unmodifiableMap(duplicates);
  }

  /** Duplicate records read. */
  public long duplicateRecords() {
    return duplicateRecords;
  }

  /** Too-late records per {@code source|id}, without their watermark. */
  public Map<String, List<String>> tooLate() {
    return Collections.unmodifiableMap(tooLate);
  }

  /** Too-late records read, partially late ones included. */
  public long tooLateRecords() {
    return tooLateRecords;
  }

  /**
   * Unique events that were windowed, derived from the decisions alone: the sum of {@code
   * features.txnCount} over the final states of the windows that tile event time without overlap
   * (start a whole multiple of {@code windowSize}; with sliding windows every event is in exactly
   * one of them), plus the partially late events whose tiling window is among their missed ones
   * (they were windowed, just not there). Needs accumulating panes, where the final pane of a
   * window counts all its events. With {@code collapseRepeats} a partially late record committed
   * more than once (an at-least-once sink) counts once.
   */
  public long windowedEvents(Duration windowSize, boolean collapseRepeats) {
    long size = windowSize.getMillis();
    long windowed = 0;
    for (String state : finalState.values()) {
      JsonNode decision = parse(state.getBytes(StandardCharsets.UTF_8), "decision");
      Instant start = Instant.parse(decision.path("windowStart").asText());
      Instant end = Instant.parse(decision.path("windowEnd").asText());
      if (Math.floorMod(start.getMillis(), size) == 0
          && end.getMillis() - start.getMillis() == size) {
        windowed += decision.path("features").path("txnCount").asLong();
      }
    }
    for (String text : collapseRepeats ? new java.util.TreeSet<>(partiallyLate) : partiallyLate) {
      JsonNode record = parse(text.getBytes(StandardCharsets.UTF_8), "too-late record");
      for (JsonNode window : record.path("missedWindows")) {
        Instant start = Instant.parse(window.path("start").asText());
        if (Math.floorMod(start.getMillis(), size) == 0) {
          windowed++;
        }
      }
    }
    return windowed;
  }

  /**
   * Too-late records that are not partially late: events in no window at all. With {@code
   * collapseRepeats} a record committed more than once (an at-least-once sink) counts once.
   */
  public long fullyTooLate(boolean collapseRepeats) {
    if (!collapseRepeats) {
      return tooLateRecords - partiallyLate.size();
    }
    long distinct = 0;
    for (List<String> records : tooLate.values()) {
      distinct += new java.util.TreeSet<>(records).size();
    }
    return distinct - new java.util.TreeSet<>(partiallyLate).size();
  }
}
