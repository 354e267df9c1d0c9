package dev.tidemark.pipelines.io;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.DeadLetterReason;
import dev.tidemark.transforms.values.RawRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.TimestampedValue;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.joda.time.format.ISOPeriodFormat;

/**
 * Turns a replay file into a Beam {@link TestStream}, so a replay is exactly as deterministic as a
 * Beam test: the same file and options give the same panes every run.
 *
 * <p>Format: NDJSON, one line per arrival, in arrival order. A line is a structured-mode CloudEvent
 * (an object with {@code specversion}) or exactly one directive: {@code {"advanceWatermarkTo":
 * "2026-01-01T00:03:00Z"}}, {@code {"advanceProcessingTime": "PT10M"}} or {@code
 * {"advanceWatermarkToInfinity": true}}. Consecutive event lines form one arrival batch. Without
 * watermark directives the watermark follows a bounded-out-of-orderness policy: after each batch it
 * advances to the latest event time seen minus {@code maxOutOfOrderness}, when that moves it
 * forward, and to infinity at the end. An event whose time lies more than {@code maxFutureSkew}
 * after the replay clock (its ingestion time) does not count towards the latest event time: a
 * producer clock in the future must not move the watermark past the honest events (the parser
 * dead-letters such an event as {@code time_in_future}). Anything else on a line (bad JSON, a
 * broken directive, a directive that would move the watermark backwards) becomes a record for the
 * pipeline to dead-letter; nothing stops the replay.
 *
 * <p>The replay clock starts at the {@code time} of the first event line; each record's ingestion
 * time is the replay clock when its line was read. In a file with {@code advanceProcessingTime}
 * directives the clock moves only with them. In a file without any, it follows the data: before
 * each event line it moves up to the latest event time accepted so far and up to the watermark of
 * the last {@code advanceWatermarkTo}, so a hand-written file needs no clock directives, an event
 * that arrives after the watermark has passed its windows is judged too late rather than from a
 * clock in the future, and an event more than {@code maxFutureSkew} after its predecessors and the
 * watermark is still recognised as coming from a clock in the future. Records carry the minimum
 * timestamp: the parser moves each event to its event time.
 *
 * <p>Limit: the whole file is held in memory and in the pipeline definition (about twice its size
 * on the heap). It is for incident-sized captures, up to a few hundred thousand lines; reprocess
 * anything larger with {@code --source=backfill}.
 */
public final class ReplayFile {
  static final String WATERMARK_TO = "advanceWatermarkTo";
  static final String PROCESSING_TIME = "advanceProcessingTime";
  static final String WATERMARK_TO_INFINITY = "advanceWatermarkToInfinity";
  private static final Set<String> DIRECTIVES =
      Set.of(WATERMARK_TO, PROCESSING_TIME, WATERMARK_TO_INFINITY);

  /** The default bound on how far an event time may lie after the replay clock. */
  public static final Duration DEFAULT_MAX_FUTURE_SKEW = Duration.standardMinutes(10);

  private final TestStream<RawRecord> stream;
  private final int lines;
  private final int records;
  private final int directives;
  private final int rejected;

  private ReplayFile(
      TestStream<RawRecord> stream, int lines, int records, int directives, int rejected) {
    this.stream = stream;
    this.lines = lines;
    this.records = records;
    this.directives = directives;
    this.rejected = rejected;
  }

  /** The replay as a TestStream of raw records. */
  public TestStream<RawRecord> stream() {
    return stream;
  }

  /** Lines in the file. */
  public int lines() {
    return lines;
  }

  /** Lines that became records for the pipeline (events, and lines to dead-letter). */
  public int records() {
    return records;
  }

  /** Directives applied. */
  public int directives() {
    return directives;
  }

  /** Lines the reader itself rejected (broken directives, lines after the end). */
  public int rejected() {
    return rejected;
  }

  /** Reads {@code file} with the {@link #DEFAULT_MAX_FUTURE_SKEW}. */
  public static ReplayFile read(Path file, Duration maxOutOfOrderness) throws IOException {
    return read(file, maxOutOfOrderness, DEFAULT_MAX_FUTURE_SKEW);
  }

  /** Reads {@code file} with event times in the attribute {@code time}. */
  public static ReplayFile read(Path file, Duration maxOutOfOrderness, Duration maxFutureSkew)
      throws IOException {
    return read(file, maxOutOfOrderness, maxFutureSkew, CloudEventTime.ATTRIBUTE);
  }

  /**
   * Reads {@code file}, its events' times where {@code eventTime} says; see the class documentation
   * for the format.
   */
  public static ReplayFile read(
      Path file, Duration maxOutOfOrderness, Duration maxFutureSkew, CloudEventTime eventTime)
      throws IOException {
    if (maxFutureSkew.isShorterThan(Duration.ZERO)) {
      throw new IllegalArgumentException(
          "--maxFutureSkew must not be negative, got " + maxFutureSkew + "; use e.g. PT10M");
    }
    List<byte[]> lines = splitLines(Files.readAllBytes(file));
    List<JsonNode> parsed = new ArrayList<>(lines.size());
    boolean watermarkDirectives = false;
    boolean clockDirectives = false;
    Instant clock = null;
    for (byte[] line : lines) {
      JsonNode node = tryParse(line);
      parsed.add(node);
      if (isDirectiveShaped(node)) {
        watermarkDirectives |= node.has(WATERMARK_TO) || node.has(WATERMARK_TO_INFINITY);
        clockDirectives |= node.has(PROCESSING_TIME);
      } else if (clock == null) {
        clock = eventTime.of(node);
      }
    }
    Builder builder =
        new Builder(
            file.getFileName().toString(),
            clock == null ? new Instant(0) : clock,
            watermarkDirectives ? null : maxOutOfOrderness,
            maxFutureSkew,
            !clockDirectives,
            eventTime);
    for (int i = 0; i < lines.size(); i++) {
      builder.line(i + 1, lines.get(i), parsed.get(i));
    }
    return builder.finish(lines.size());
  }

  /** A replay file's lines as bytes, without their line ends ({@code \n} or {@code \r\n}). */
  public static List<byte[]> splitLines(byte[] bytes) {
    List<byte[]> lines = new ArrayList<>();
    int start = 0;
    for (int i = 0; i <= bytes.length; i++) {
      if (i == bytes.length || bytes[i] == '\n') {
        int end = i > start && bytes[i - 1] == '\r' ? i - 1 : i;
        if (i < bytes.length || end > start) {
          lines.add(Arrays.copyOfRange(bytes, start, end));
        }
        start = i + 1;
      }
    }
    return lines;
  }

  private static @Nullable JsonNode tryParse(byte[] line) {
    try {
      return Json.MAPPER.readTree(line);
    } catch (IOException e) {
      return null;
    }
  }

  private static boolean isDirectiveShaped(@Nullable JsonNode node) {
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

  /** Builds the TestStream line by line. */
  private static final class Builder {
    private final String fileName;
    private final @Nullable Duration maxOutOfOrderness;
    private final Duration maxFutureSkew;
    private final boolean clockFollowsEvents;
    private final CloudEventTime eventTime;
    private final List<TimestampedValue<RawRecord>> batch = new ArrayList<>();
    private TestStream.Builder<RawRecord> stream = TestStream.create(RawRecord.RawRecordCoder.of());
    private Instant clock;
    private Instant watermark = BoundedWindow.TIMESTAMP_MIN_VALUE;
    private Instant maxEventTime = BoundedWindow.TIMESTAMP_MIN_VALUE;
    private boolean ended;
    private int records;
    private int directives;
    private int rejected;

    Builder(
        String fileName,
        Instant clockStart,
        @Nullable Duration maxOutOfOrderness,
        Duration maxFutureSkew,
        boolean clockFollowsEvents,
        CloudEventTime eventTime) {
      this.fileName = fileName;
      this.clockFollowsEvents = clockFollowsEvents;
      this.eventTime = eventTime;
      this.clock = clockStart;
      this.maxOutOfOrderness = maxOutOfOrderness;
      this.maxFutureSkew = maxFutureSkew;
    }

    void line(int number, byte[] bytes, @Nullable JsonNode node) {
      String origin = "replay:" + fileName + ":" + number;
      if (ended) {
        reject(
            bytes,
            origin,
            DeadLetterReason.AFTER_END_OF_REPLAY,
            "line after advanceWatermarkToInfinity: the replay had already ended");
        return;
      }
      if (!isDirectiveShaped(node)) {
        if (clockFollowsEvents && maxEventTime.isAfter(clock)) {
          clock = maxEventTime;
        }
        // A watermark directive says the stream's time has reached it: so has the clock.
        if (clockFollowsEvents && watermark.isAfter(clock)) {
          clock = watermark;
        }
        Instant eventTime = this.eventTime.of(node);
        // An event too far after the replay clock has a wrong clock: it moves no watermark.
        if (eventTime != null
            && eventTime.isAfter(maxEventTime)
            && !eventTime.isAfter(clock.plus(maxFutureSkew))) {
          maxEventTime = eventTime;
        }
        add(RawRecord.of(bytes, clock, origin));
        return;
      }
      String problem = apply(node);
      if (problem != null) {
        reject(bytes, origin, DeadLetterReason.INVALID_DIRECTIVE, problem);
      } else {
        directives++;
      }
    }

    /** Applies a directive; returns why it cannot be applied, or null. */
    private @Nullable String apply(JsonNode node) {
      if (node.size() != 1) {
        return "a directive line must hold exactly one of " + DIRECTIVES + ", found " + node;
      }
      String name = node.fieldNames().next();
      JsonNode value = node.get(name);
      switch (name) {
        case WATERMARK_TO:
          Instant to = value.isTextual() ? CloudEventTime.parseTime(value.asText()) : null;
          if (to == null) {
            return WATERMARK_TO + " needs an RFC 3339 timestamp, got " + value;
          }
          if (!to.isAfter(watermark)) {
            return WATERMARK_TO
                + " "
                + value
                + " would not move the watermark forward from "
                + watermark;
          }
          flush();
          watermark = to;
          stream = stream.advanceWatermarkTo(to);
          return null;
        case PROCESSING_TIME:
          Duration by = value.isTextual() ? duration(value.asText()) : null;
          if (by == null || by.getMillis() <= 0) {
            return PROCESSING_TIME
                + " needs a positive ISO-8601 duration such as PT10S, got "
                + value;
          }
          flush();
          clock = clock.plus(by);
          stream = stream.advanceProcessingTime(by);
          return null;
        case WATERMARK_TO_INFINITY:
          if (!value.isBoolean() || !value.asBoolean()) {
            return WATERMARK_TO_INFINITY + " must be true, got " + value;
          }
          flush();
          ended = true;
          return null;
        default:
          return "unknown directive " + name + "; expected one of " + DIRECTIVES;
      }
    }

    private static @Nullable Duration duration(String text) {
      try {
        return ISOPeriodFormat.standard().parsePeriod(text).toStandardDuration();
      } catch (RuntimeException e) {
        return null;
      }
    }

    private void reject(byte[] bytes, String origin, DeadLetterReason reason, String message) {
      rejected++;
      add(RawRecord.rejected(bytes, clock, origin, reason, message));
    }

    private void add(RawRecord record) {
      records++;
      batch.add(TimestampedValue.of(record, BoundedWindow.TIMESTAMP_MIN_VALUE));
    }

    /** Ends the current arrival batch and, without watermark directives, advances the watermark. */
    private void flush() {
      if (batch.isEmpty()) {
        return;
      }
      @SuppressWarnings({"unchecked", "rawtypes"})
      TimestampedValue<RawRecord>[] rest =
          batch.subList(1, batch.size()).toArray(new TimestampedValue[0]);
      stream = stream.addElements(batch.get(0), rest);
      batch.clear();
      if (maxOutOfOrderness != null && !ended) {
        Instant candidate = maxEventTime.minus(maxOutOfOrderness);
        if (candidate.isAfter(watermark)) {
          watermark = candidate;
          stream = stream.advanceWatermarkTo(candidate);
        }
      }
    }

    ReplayFile finish(int lines) {
      flush();
      return new ReplayFile(
          stream.advanceWatermarkToInfinity(), lines, records, directives, rejected);
    }
  }
}
