package dev.tidemark.tools.capture;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.io.kafka.KafkaCloudEvents;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.RawRecord;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Captures a range of a Kafka topic as a replay file (see {@link
 * dev.tidemark.pipelines.io.ReplayFile}), so an incident can be replayed deterministically on the
 * DirectRunner.
 *
 * <p>Range: by default the whole topic, every partition from its beginning to its end offset when
 * the capture starts. {@link #withFromTime}/{@link #withToTime} bound it by record timestamp: each
 * partition from its first committed record at or after {@code from} (found with {@code
 * consumer.offsetsForTimes}) up to but not including its first committed record at or after {@code
 * to}. {@link #withFromOffsets}/{@link #withToOffsets} bound it by offset per partition ({@code to}
 * exclusive) and restrict the capture to the partitions they name. Either way each partition's
 * range is one contiguous offset range: with producer-set timestamps that are not monotonic, a
 * record inside it may carry a timestamp outside {@code [from, to)}.
 *
 * <p>Reading: {@code read_committed} (aborted transactions are skipped), assigned partitions, no
 * consumer group and no offset commits; the topic is never created. Records are merged across
 * partitions ordered by (record timestamp, partition, offset).
 *
 * <p>Writing: one line per record. A binary-mode record becomes its structured JSON form through
 * {@link KafkaCloudEvents#toRawRecord}; a structured record is written as its value; a record the
 * binding rejects is written with its raw value, for the replay to dead-letter. Lines must not
 * break: a value holding a line break is re-serialized compactly when it is JSON (same members,
 * number text kept exactly), else its line breaks become spaces ("altered"). A value that the
 * replay would read as a directive is wrapped in a JSON array ("altered"), so it is dead-lettered
 * as not a CloudEvent, as it is live, instead of moving the replay's clocks. Before a record whose
 * timestamp is {@code d > 0} after the previous one, an {@code {"advanceProcessingTime":"<d>"}}
 * line moves the replay's ingestion clock as Kafka's moved. The file ends without {@code
 * advanceWatermarkToInfinity}: the replay ends itself.
 *
 * <p>Costs: the captured records are held in memory until they are sorted, as the replay holds the
 * whole file; capture incident-sized ranges.
 *
 * <pre>{@code
 * KafkaCapture.Report report =
 *     KafkaCapture.of(KafkaClients.from(options), "tidemark.events")
 *         .withFromTime(Instant.parse("2026-01-01T10:00:00Z"))
 *         .withToTime(Instant.parse("2026-01-01T10:15:00Z"))
 *         .writeTo(Paths.get("incident.ndjson"));
 * }</pre>
 */
public final class KafkaCapture {
  /** How long a capture waits for a read that makes no progress before it gives up. */
  public static final Duration DEFAULT_STALL_TIMEOUT = Duration.ofSeconds(60);

  /** How long a capture waits for the topic's metadata and offsets. */
  public static final Duration METADATA_TIMEOUT = Duration.ofSeconds(30);

  /** The directive names of {@link dev.tidemark.pipelines.io.ReplayFile}. */
  private static final Set<String> DIRECTIVES =
      Set.of("advanceWatermarkTo", "advanceProcessingTime", "advanceWatermarkToInfinity");

  private static final String OFFSETS_FORM = "PARTITION:OFFSET[,PARTITION:OFFSET...], e.g. 0:100";

  private final KafkaClients clients;
  private final String topic;
  private final @Nullable Instant fromTime;
  private final @Nullable Instant toTime;
  private final SortedMap<Integer, Long> fromOffsets;
  private final SortedMap<Integer, Long> toOffsets;
  private final Duration stallTimeout;

  private KafkaCapture(
      KafkaClients clients,
      String topic,
      @Nullable Instant fromTime,
      @Nullable Instant toTime,
      SortedMap<Integer, Long> fromOffsets,
      SortedMap<Integer, Long> toOffsets,
      Duration stallTimeout) {
    this.clients = clients;
    this.topic = topic;
    this.fromTime = fromTime;
    this.toTime = toTime;
    this.fromOffsets = fromOffsets;
    this.toOffsets = toOffsets;
    this.stallTimeout = stallTimeout;
  }

  /** A capture of the whole of {@code topic}, from its beginning to its end when it starts. */
  public static KafkaCapture of(KafkaClients clients, String topic) {
    Objects.requireNonNull(clients, "clients");
    if (topic == null || topic.isBlank()) {
      throw new IllegalArgumentException("capture needs a topic: set --kafkaInputTopic=TOPIC");
    }
    return new KafkaCapture(
        clients,
        topic,
        null,
        null,
        Collections.emptySortedMap(),
        Collections.emptySortedMap(),
        DEFAULT_STALL_TIMEOUT);
  }

  /** Starts each partition at its first record whose timestamp is at or after {@code from}. */
  public KafkaCapture withFromTime(Instant from) {
    Objects.requireNonNull(from, "from");
    if (!fromOffsets.isEmpty()) {
      throw new IllegalArgumentException("use either --from or --fromOffsets, not both");
    }
    checkTimes(from, toTime);
    return new KafkaCapture(clients, topic, from, toTime, fromOffsets, toOffsets, stallTimeout);
  }

  /** Ends each partition before its first record whose timestamp is at or after {@code to}. */
  public KafkaCapture withToTime(Instant to) {
    Objects.requireNonNull(to, "to");
    if (!toOffsets.isEmpty()) {
      throw new IllegalArgumentException("use either --to or --toOffsets, not both");
    }
    checkTimes(fromTime, to);
    return new KafkaCapture(clients, topic, fromTime, to, fromOffsets, toOffsets, stallTimeout);
  }

  /**
   * Starts the named partitions at these offsets; only the partitions named here or in {@link
   * #withToOffsets} are captured.
   */
  public KafkaCapture withFromOffsets(Map<Integer, Long> offsets) {
    if (fromTime != null) {
      throw new IllegalArgumentException("use either --from or --fromOffsets, not both");
    }
    SortedMap<Integer, Long> from = checkOffsets("--fromOffsets", offsets);
    checkOffsetOrder(from, toOffsets);
    return new KafkaCapture(clients, topic, fromTime, toTime, from, toOffsets, stallTimeout);
  }

  /**
   * Ends the named partitions before these offsets (exclusive); only the partitions named here or
   * in {@link #withFromOffsets} are captured.
   */
  public KafkaCapture withToOffsets(Map<Integer, Long> offsets) {
    if (toTime != null) {
      throw new IllegalArgumentException("use either --to or --toOffsets, not both");
    }
    SortedMap<Integer, Long> to = checkOffsets("--toOffsets", offsets);
    checkOffsetOrder(fromOffsets, to);
    return new KafkaCapture(clients, topic, fromTime, toTime, fromOffsets, to, stallTimeout);
  }

  /**
   * Gives up when reading makes no progress for this long; default {@link #DEFAULT_STALL_TIMEOUT}.
   */
  public KafkaCapture withStallTimeout(Duration timeout) {
    if (timeout == null || timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("the stall timeout must be positive, got " + timeout);
    }
    return new KafkaCapture(clients, topic, fromTime, toTime, fromOffsets, toOffsets, timeout);
  }

  /** Parses an RFC 3339 timestamp given as {@code option}, with a message that says the form. */
  public static Instant parseTime(String option, String text) {
    try {
      return OffsetDateTime.parse(text.trim()).toInstant();
    } catch (DateTimeParseException | NullPointerException e) {
      throw new IllegalArgumentException(
          option
              + "="
              + text
              + ": not an RFC 3339 timestamp; write it like 2026-01-01T10:00:00Z or"
              + " 2026-01-01T11:00:00.250+01:00");
    }
  }

  /** Parses {@code 0:100,1:250} given as {@code option}, with a message that says the form. */
  public static SortedMap<Integer, Long> parseOffsets(String option, String text) {
    SortedMap<Integer, Long> offsets = new TreeMap<>();
    if (text == null || text.isBlank()) {
      throw new IllegalArgumentException(option + " is empty: expected " + OFFSETS_FORM);
    }
    for (String pair : text.split(",", -1)) {
      String[] parts = pair.trim().split(":", -1);
      int partition;
      long offset;
      try {
        if (parts.length != 2) {
          throw new NumberFormatException();
        }
        partition = Integer.parseInt(parts[0].trim());
        offset = Long.parseLong(parts[1].trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            option + "=" + text + ": '" + pair + "' is malformed; expected " + OFFSETS_FORM);
      }
      if (offsets.put(partition, offset) != null) {
        throw new IllegalArgumentException(
            option + "=" + text + ": partition " + partition + " is given twice");
      }
    }
    return checkOffsets(option, offsets);
  }

  private static SortedMap<Integer, Long> checkOffsets(String option, Map<Integer, Long> offsets) {
    if (offsets == null || offsets.isEmpty()) {
      throw new IllegalArgumentException(option + " needs at least one " + OFFSETS_FORM);
    }
    SortedMap<Integer, Long> checked = new TreeMap<>();
    for (Map.Entry<Integer, Long> entry : offsets.entrySet()) {
      if (entry.getKey() == null || entry.getKey() < 0) {
        throw new IllegalArgumentException(
            option + ": partition " + entry.getKey() + " is not a partition number (0, 1, ...)");
      }
      if (entry.getValue() == null || entry.getValue() < 0) {
        throw new IllegalArgumentException(
            option
                + ": offset "
                + entry.getValue()
                + " of partition "
                + entry.getKey()
                + " is negative");
      }
      checked.put(entry.getKey(), entry.getValue());
    }
    return Collections.unmodifiableSortedMap(checked);
  }

  private static void checkOffsetOrder(Map<Integer, Long> from, Map<Integer, Long> to) {
    for (Map.Entry<Integer, Long> entry : from.entrySet()) {
      Long end = to.get(entry.getKey());
      if (end != null && end < entry.getValue()) {
        throw new IllegalArgumentException(
            "partition "
                + entry.getKey()
                + ": --fromOffsets "
                + entry.getValue()
                + " is after --toOffsets "
                + end
                + " (the range is [from, to))");
      }
    }
  }

  private static void checkTimes(@Nullable Instant from, @Nullable Instant to) {
    if (from != null && to != null && !from.isBefore(to)) {
      throw new IllegalArgumentException(
          "--from=" + from + " must be before --to=" + to + " (--to is exclusive)");
    }
  }

  /**
   * Reads the range and writes the replay file to {@code output} (replacing it).
   *
   * @throws IllegalArgumentException for a topic or partition that does not exist, offsets outside
   *     a partition, or a broker that does not answer
   */
  public Report writeTo(Path output) throws IOException {
    List<Line> lines = new ArrayList<>();
    Counts counts = new Counts();
    SortedMap<Integer, PartitionRange> ranges;
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerConfig())) {
      ranges = ranges(consumer);
      read(consumer, ranges, lines, counts);
    } catch (TimeoutException e) {
      throw new IllegalArgumentException(
          "no answer from Kafka at "
              + clients.bootstrapServers()
              + " within "
              + METADATA_TIMEOUT.toSeconds()
              + " s; check --kafkaBootstrapServers and the security options: "
              + e.getMessage(),
          e);
    }
    lines.sort(
        Comparator.comparingLong(Line::timestamp)
            .thenComparingInt(Line::partition)
            .thenComparingLong(Line::offset));
    Path parent = output.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    int written = 0;
    int directives = 0;
    try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(output))) {
      Long previous = null;
      for (Line line : lines) {
        if (previous != null && line.timestamp() > previous) {
          String directive =
              "{\"advanceProcessingTime\":\""
                  + Duration.ofMillis(line.timestamp() - previous)
                  + "\"}\n";
          out.write(directive.getBytes(StandardCharsets.UTF_8));
          directives++;
          written++;
        }
        out.write(line.bytes());
        out.write('\n');
        written++;
        previous = line.timestamp();
      }
    }
    SortedMap<Integer, Integer> perPartition = new TreeMap<>();
    SortedMap<Integer, long[]> offsets = new TreeMap<>();
    for (PartitionRange range : ranges.values()) {
      perPartition.put(range.partition.partition(), 0);
      offsets.put(range.partition.partition(), new long[] {range.start, range.stop});
    }
    for (Line line : lines) {
      perPartition.merge(line.partition(), 1, Integer::sum);
    }
    return new Report(
        topic,
        output,
        offsets,
        perPartition,
        lines.isEmpty() ? null : Instant.ofEpochMilli(lines.get(0).timestamp()),
        lines.isEmpty() ? null : Instant.ofEpochMilli(lines.get(lines.size() - 1).timestamp()),
        lines.size(),
        written,
        directives,
        counts);
  }

  private Map<String, Object> consumerConfig() {
    Map<String, Object> config = new HashMap<>();
    config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    config.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
    // Every position is set by seek; a position that falls out of the log fails the capture.
    config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
    config.put(ConsumerConfig.CLIENT_ID_CONFIG, "tidemark-capture");
    return clients.merged(config);
  }

  /**
   * One captured partition: the offsets {@code [start, stop)} it is read in, narrowed while reading
   * when the range is bounded by time.
   */
  private static final class PartitionRange {
    final TopicPartition partition;

    /** The first offset of the range; with {@code --from}, where the search for it starts. */
    long start;

    /** The offset the range ends before; with {@code --to}, the limit of the search for it. */
    long stop;

    /** Still skipping records before {@code --from} (after offsetsForTimes' answer). */
    boolean skipping;

    /** The range ends at the first record at or after {@code --to}. */
    boolean cutByTime;

    boolean done;

    PartitionRange(TopicPartition partition, long start, long stop) {
      this.partition = partition;
      this.start = start;
      this.stop = stop;
    }
  }

  /**
   * Each captured partition's offset range, validated against the log.
   *
   * <p>Bounds by time: offsetsForTimes answers with the first offset whose timestamp is at or after
   * the time, transaction markers and aborted records included, and a marker carries the broker's
   * clock when the transaction ended, not the producer's record timestamps. So its answer for
   * {@code --from} is only where the search starts (records before {@code --from} are skipped up to
   * the first committed record at or after it), and {@code --to} is applied while reading (the
   * range ends before the first committed record at or after it), else a transaction ended after
   * {@code --to} would cut the capture short.
   */
  private SortedMap<Integer, PartitionRange> ranges(KafkaConsumer<byte[], byte[]> consumer) {
    List<PartitionInfo> infos = consumer.partitionsFor(topic, METADATA_TIMEOUT);
    if (infos == null || infos.isEmpty()) {
      throw new IllegalArgumentException(
          "topic '"
              + topic
              + "' does not exist on "
              + clients.bootstrapServers()
              + "; name the topic to capture with --kafkaInputTopic=TOPIC");
    }
    SortedSet<Integer> existing = new TreeSet<>();
    infos.forEach(info -> existing.add(info.partition()));
    SortedSet<Integer> selected = new TreeSet<>(fromOffsets.keySet());
    selected.addAll(toOffsets.keySet());
    for (Integer partition : selected) {
      if (!existing.contains(partition)) {
        throw new IllegalArgumentException(
            "partition "
                + partition
                + " of --fromOffsets/--toOffsets does not exist: topic '"
                + topic
                + "' has partitions "
                + existing);
      }
    }
    if (selected.isEmpty()) {
      selected = existing;
    }
    List<TopicPartition> partitions = new ArrayList<>();
    selected.forEach(p -> partitions.add(new TopicPartition(topic, p)));
    Map<TopicPartition, Long> beginning = consumer.beginningOffsets(partitions, METADATA_TIMEOUT);
    // With read_committed: the last stable offset, the end of what is committed now.
    Map<TopicPartition, Long> end = consumer.endOffsets(partitions, METADATA_TIMEOUT);
    Map<TopicPartition, OffsetAndTimestamp> fromTimes = Map.of();
    if (fromTime != null) {
      Map<TopicPartition, Long> query = new HashMap<>();
      partitions.forEach(p -> query.put(p, fromTime.toEpochMilli()));
      Map<TopicPartition, OffsetAndTimestamp> found =
          consumer.offsetsForTimes(query, METADATA_TIMEOUT);
      fromTimes = found == null ? Map.of() : found;
    }
    SortedMap<Integer, PartitionRange> ranges = new TreeMap<>();
    for (TopicPartition partition : partitions) {
      long first = beginning.get(partition);
      long last = end.get(partition);
      Long fromOffset = fromOffsets.get(partition.partition());
      Long toOffset = toOffsets.get(partition.partition());
      long stop =
          toOffset == null ? last : checkWithin("--toOffsets", partition, toOffset, first, last);
      long start = first;
      if (fromOffset != null) {
        start = checkWithin("--fromOffsets", partition, fromOffset, first, last);
      } else if (fromTime != null) {
        OffsetAndTimestamp found = fromTimes.get(partition);
        start = found == null ? stop : Math.max(first, found.offset());
      }
      PartitionRange range = new PartitionRange(partition, Math.min(start, stop), stop);
      if (start > stop && fromOffset != null) {
        throw new IllegalArgumentException(
            "partition "
                + partition.partition()
                + ": --fromOffsets "
                + start
                + " is after the end of the range, "
                + stop);
      }
      range.skipping = fromOffset == null && fromTime != null;
      range.cutByTime = toOffset == null && toTime != null;
      ranges.put(partition.partition(), range);
    }
    return ranges;
  }

  private static long checkWithin(
      String option, TopicPartition partition, long offset, long first, long last) {
    if (offset < first || offset > last) {
      throw new IllegalArgumentException(
          option
              + ": offset "
              + offset
              + " of partition "
              + partition.partition()
              + " is outside the partition, which holds offsets ["
              + first
              + ", "
              + last
              + ") now"
              + (offset < first ? " (earlier records were deleted)" : ""));
    }
    return offset;
  }

  private void read(
      KafkaConsumer<byte[], byte[]> consumer,
      SortedMap<Integer, PartitionRange> ranges,
      List<Line> lines,
      Counts counts) {
    Map<TopicPartition, PartitionRange> open = new HashMap<>();
    for (PartitionRange range : ranges.values()) {
      if (range.start < range.stop) {
        open.put(range.partition, range);
      } else {
        finish(range);
      }
    }
    if (open.isEmpty()) {
      return;
    }
    consumer.assign(open.keySet());
    for (PartitionRange range : open.values()) {
      consumer.seek(range.partition, range.start);
    }
    Map<TopicPartition, Long> positions = new HashMap<>();
    long lastProgress = System.nanoTime();
    while (true) {
      boolean progress = false;
      for (PartitionRange range : open.values()) {
        if (range.done) {
          continue;
        }
        long position = consumer.position(range.partition, METADATA_TIMEOUT);
        Long before = positions.put(range.partition, position);
        progress |= before == null || before != position;
        if (position >= range.stop) {
          finish(range);
          consumer.pause(List.of(range.partition));
        }
      }
      if (open.values().stream().allMatch(range -> range.done)) {
        return;
      }
      if (progress) {
        lastProgress = System.nanoTime();
      } else if (System.nanoTime() - lastProgress > stallTimeout.toNanos()) {
        throw new IllegalStateException(
            "reading '"
                + topic
                + "' made no progress for "
                + stallTimeout.toSeconds()
                + " s: at offsets "
                + positions
                + ", reading up to "
                + stops(open.values()));
      }
      for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
        PartitionRange range = open.get(new TopicPartition(record.topic(), record.partition()));
        if (range == null || range.done || record.offset() >= range.stop) {
          continue;
        }
        if (range.skipping) {
          if (record.timestamp() < Objects.requireNonNull(fromTime).toEpochMilli()) {
            continue;
          }
          range.skipping = false;
          range.start = record.offset();
        }
        if (range.cutByTime
            && record.timestamp() >= Objects.requireNonNull(toTime).toEpochMilli()) {
          range.stop = record.offset();
          finish(range);
          consumer.pause(List.of(range.partition));
          continue;
        }
        lines.add(line(record, counts));
      }
    }
  }

  private static Map<TopicPartition, Long> stops(Iterable<PartitionRange> ranges) {
    Map<TopicPartition, Long> stops = new HashMap<>();
    ranges.forEach(range -> stops.put(range.partition, range.stop));
    return stops;
  }

  /** Marks a range read; a range still looking for its first record is empty. */
  private static void finish(PartitionRange range) {
    if (range.skipping) {
      range.start = range.stop;
      range.skipping = false;
    }
    range.done = true;
  }

  /** One record as one line of the replay file. */
  private Line line(ConsumerRecord<byte[], byte[]> record, Counts counts) {
    boolean binary = record.headers().lastHeader("ce_specversion") != null;
    RawRecord raw =
        KafkaCloudEvents.toRawRecord(
            record.headers(),
            record.value(),
            new org.joda.time.Instant(record.timestamp()),
            KafkaCloudEvents.origin(record.topic(), record.partition(), record.offset()));
    if (raw.sourceError() != null) {
      counts.rejected++;
    } else if (binary) {
      counts.binaryConverted++;
    }
    byte[] bytes = raw.payload();
    boolean altered = false;
    if (hasLineBreak(bytes)) {
      byte[] compact = compactJson(bytes);
      if (compact != null) {
        bytes = compact;
        counts.reserialized++;
      } else {
        bytes = bytes.clone();
        for (int i = 0; i < bytes.length; i++) {
          if (bytes[i] == '\n' || bytes[i] == '\r') {
            bytes[i] = ' ';
          }
        }
        altered = true;
      }
    }
    if (isDirectiveShaped(bytes)) {
      byte[] wrapped = new byte[bytes.length + 2];
      wrapped[0] = '[';
      System.arraycopy(bytes, 0, wrapped, 1, bytes.length);
      wrapped[wrapped.length - 1] = ']';
      bytes = wrapped;
      altered = true;
    }
    if (altered) {
      counts.altered++;
    }
    return new Line(record.timestamp(), record.partition(), record.offset(), bytes);
  }

  private static boolean hasLineBreak(byte[] bytes) {
    for (byte b : bytes) {
      if (b == '\n' || b == '\r') {
        return true;
      }
    }
    return false;
  }

  /**
   * One JSON value without the whitespace between its tokens, or null when the bytes are not
   * exactly one JSON value. Members keep their order (duplicates too) and numbers their exact text.
   */
  public static byte @Nullable [] compactJson(byte[] bytes) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(bytes.length);
    try (JsonParser parser = Json.MAPPER.getFactory().createParser(bytes);
        JsonGenerator generator = Json.MAPPER.getFactory().createGenerator(out)) {
      int depth = 0;
      do {
        JsonToken token = parser.nextToken();
        if (token == null) {
          return null;
        }
        switch (token) {
          case START_OBJECT:
            generator.writeStartObject();
            depth++;
            break;
          case END_OBJECT:
            generator.writeEndObject();
            depth--;
            break;
          case START_ARRAY:
            generator.writeStartArray();
            depth++;
            break;
          case END_ARRAY:
            generator.writeEndArray();
            depth--;
            break;
          case FIELD_NAME:
            generator.writeFieldName(parser.currentName());
            break;
          case VALUE_STRING:
            generator.writeString(parser.getText());
            break;
          case VALUE_NUMBER_INT:
          case VALUE_NUMBER_FLOAT:
            generator.writeNumber(parser.getText());
            break;
          case VALUE_TRUE:
          case VALUE_FALSE:
            generator.writeBoolean(token == JsonToken.VALUE_TRUE);
            break;
          case VALUE_NULL:
            generator.writeNull();
            break;
          default:
            return null;
        }
      } while (depth > 0);
      if (parser.nextToken() != null) {
        return null;
      }
    } catch (IOException e) {
      return null;
    }
    return out.toByteArray();
  }

  /** Whether the replay reader would take this line for a directive (as ReplayFile decides). */
  private static boolean isDirectiveShaped(byte[] line) {
    JsonNode node;
    try {
      node = Json.MAPPER.readTree(line);
    } catch (IOException e) {
      return false;
    }
    if (node == null || !node.isObject() || node.has("specversion")) {
      return false;
    }
    for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
      if (DIRECTIVES.contains(names.next())) {
        return true;
      }
    }
    return false;
  }

  /** A captured record, ready to be written. */
  private static final class Line {
    private final long timestamp;
    private final int partition;
    private final long offset;
    private final byte[] bytes;

    Line(long timestamp, int partition, long offset, byte[] bytes) {
      this.timestamp = timestamp;
      this.partition = partition;
      this.offset = offset;
      this.bytes = bytes;
    }

    long timestamp() {
      return timestamp;
    }

    int partition() {
      return partition;
    }

    long offset() {
      return offset;
    }

    byte[] bytes() {
      return bytes;
    }
  }

  /** What happened to the records on their way into lines. */
  private static final class Counts {
    int binaryConverted;
    int rejected;
    int reserialized;
    int altered;
  }

  /** What a capture read and wrote. */
  public static final class Report {
    private final String topic;
    private final Path output;
    private final SortedMap<Integer, long[]> ranges;
    private final SortedMap<Integer, Integer> recordsByPartition;
    private final @Nullable Instant firstTimestamp;
    private final @Nullable Instant lastTimestamp;
    private final int records;
    private final int lines;
    private final int directives;
    private final int binaryConverted;
    private final int rejected;
    private final int reserialized;
    private final int altered;

    private Report(
        String topic,
        Path output,
        SortedMap<Integer, long[]> ranges,
        SortedMap<Integer, Integer> recordsByPartition,
        @Nullable Instant firstTimestamp,
        @Nullable Instant lastTimestamp,
        int records,
        int lines,
        int directives,
        Counts counts) {
      this.topic = topic;
      this.output = output;
      this.ranges = ranges;
      this.recordsByPartition = Collections.unmodifiableSortedMap(recordsByPartition);
      this.firstTimestamp = firstTimestamp;
      this.lastTimestamp = lastTimestamp;
      this.records = records;
      this.lines = lines;
      this.directives = directives;
      this.binaryConverted = counts.binaryConverted;
      this.rejected = counts.rejected;
      this.reserialized = counts.reserialized;
      this.altered = counts.altered;
    }

    /** Records captured, per partition (0 for a captured partition with none in range). */
    public SortedMap<Integer, Integer> recordsByPartition() {
      return recordsByPartition;
    }

    /** The offset each captured partition started at. */
    public long startOffset(int partition) {
      return ranges.get(partition)[0];
    }

    /** The offset each captured partition ended before (exclusive). */
    public long stopOffset(int partition) {
      return ranges.get(partition)[1];
    }

    /** Records captured, i.e. event lines written. */
    public int records() {
      return records;
    }

    /** Lines written: records and directives. */
    public int lines() {
      return lines;
    }

    /** {@code advanceProcessingTime} lines written. */
    public int directives() {
      return directives;
    }

    /** Binary-mode records written in structured form. */
    public int binaryConverted() {
      return binaryConverted;
    }

    /** Records the CloudEvents binding rejected, written with their raw value. */
    public int rejected() {
      return rejected;
    }

    /** JSON values with line breaks, written re-serialized compactly (same JSON). */
    public int reserialized() {
      return reserialized;
    }

    /** Values changed to fit the format: line breaks made spaces, or a directive-shaped value. */
    public int altered() {
      return altered;
    }

    /** The report on one line. */
    @Override
    public String toString() {
      StringBuilder partitions = new StringBuilder();
      for (Map.Entry<Integer, long[]> range : ranges.entrySet()) {
        partitions
            .append(partitions.length() == 0 ? "" : ", ")
            .append('p')
            .append(range.getKey())
            .append(' ')
            .append(recordsByPartition.get(range.getKey()))
            .append(" [")
            .append(range.getValue()[0])
            .append(',')
            .append(range.getValue()[1])
            .append(')');
      }
      return "captured "
          + records
          + " records of "
          + topic
          + " ("
          + partitions
          + "), record times "
          + (firstTimestamp == null ? "none" : firstTimestamp + " to " + lastTimestamp)
          + " -> "
          + output
          + ": "
          + lines
          + " lines, "
          + directives
          + " directives; "
          + binaryConverted
          + " binary converted, "
          + rejected
          + " rejected by the binding, "
          + reserialized
          + " re-serialized, "
          + altered
          + " altered";
    }
  }
}
