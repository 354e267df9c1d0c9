package dev.tidemark.tools.train;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.transforms.AssembleDecisions;
import dev.tidemark.transforms.ComputeFeatures;
import dev.tidemark.transforms.DeduplicateEvents;
import dev.tidemark.transforms.ParseCloudEvents;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Event;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.RawRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.io.TextIO;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithFailures;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.transforms.windowing.SlidingWindows;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * The feature step of training: the serving transforms ({@link ParseCloudEvents} → {@link
 * DeduplicateEvents} → {@link ComputeFeatures}) run in batch on a bounded {@code Create} of the
 * replay file's records, so a training row's features are exactly what the pipeline would score for
 * that (account, window). In batch the watermark passes every window once all input is read, so
 * every window fires one on-time pane with all its events (early firings are off; none are late).
 *
 * <p>Labels come from a separate small pass over the same records in plain Java: each event line's
 * {@code data.label}, keyed by CloudEvents identity ({@code source}+{@code id}), assigned to the
 * (account, window)s of the event with the same {@link SlidingWindows}; lines the parser rejected
 * are left out. An (account, window) is fraud when it holds a {@code fraud}-labelled event.
 *
 * <p>Duplicates: in a streaming replay the first copy of an identity to arrive is the one kept. In
 * one batch "first" would be up to the runner (and conflicting copies differ in content), so the
 * step keeps the first line of each identity in file (arrival) order before the pipeline, which
 * makes the features deterministic and equal to what the replay keeps. The edge case: if that first
 * line is invalid and a later copy valid, the replay would keep the later copy and training keeps
 * neither.
 *
 * <p>Differences from serving, by design: the whole file is one batch, so too-late events are not
 * diverted (a streaming replay of the same file would divert them).
 *
 * <p>Runs on the DirectRunner, which must be on the classpath at run time ({@code ./tidemark} has
 * it; the {@code model} module has it only for tests). The DirectRunner pays a fixed cost per
 * bundle and DeduplicateEvents makes a bundle per event, so the step's time grows by that cost with
 * every event.
 */
public final class TrainingFeatures {
  /**
   * Shards of ComputeFeatures' too-late gate. The gate decides only lateness, and in batch nothing
   * is late, so this changes no feature. One shard holds every event in one keyed state cell, which
   * the DirectRunner copies on every bundle (quadratic in the events); each shard also fires its
   * own probe timers. Four balanced the two when measured.
   */
  static final int GATE_SHARDS = 4;

  private TrainingFeatures() {}

  /** The training rows and what the step counted. */
  public record Result(
      List<LabelledWindow> rows, Map<String, Long> counters, int lines, int droppedCopies) {}

  /** The two outputs of the feature graph. */
  public record Outputs(PCollection<String> rows, PCollection<String> rejectedOrigins) {}

  /** Reads {@code replay}, computes labelled features per (account, window), in time order. */
  public static Result compute(Path replay, Duration windowSize, Duration windowPeriod)
      throws IOException {
    List<RawRecord> all = readRecords(replay);
    List<RawRecord> records = firstCopies(all);
    PipelineOptions options;
    try {
      // The DirectRunner's immutability and encodability checks walk the whole pipeline for every
      // bundle; training makes a bundle per event, so they would dominate the run time.
      options =
          PipelineOptionsFactory.fromArgs(
                  "--runner=DirectRunner",
                  "--enforceImmutability=false",
                  "--enforceEncodability=false")
              .create();
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(
          "TrainModel runs its feature step on Beam's DirectRunner; put"
              + " org.apache.beam:beam-runners-direct-java on the classpath (./tidemark has it)",
          e);
    }
    Path outDir = Files.createTempDirectory("tidemark-training-rows-");
    try {
      Pipeline pipeline = Pipeline.create(options);
      Outputs outputs =
          expand(
              pipeline.apply(
                  "ReadLabelledReplay",
                  Create.of(records).withCoder(RawRecord.RawRecordCoder.of())),
              windowSize,
              windowPeriod);
      outputs.rows().apply("WriteRows", TextIO.write().to(outDir.resolve("rows").toString()));
      outputs
          .rejectedOrigins()
          .apply("WriteRejected", TextIO.write().to(outDir.resolve("rejected").toString()));
      PipelineResult result = pipeline.run();
      result.waitUntilFinish();

      Set<String> rejected = new HashSet<>(readLines(outDir, "rejected"));
      Set<String> fraudWindows =
          fraudWindows(records, rejected, SlidingWindows.of(windowSize).every(windowPeriod));
      List<LabelledWindow> rows = new ArrayList<>();
      for (String line : readLines(outDir, "rows")) {
        LabelledWindow row = LabelledWindow.fromJsonLine(line);
        rows.add(
            new LabelledWindow(
                row.accountId(),
                row.windowStart(),
                row.windowEnd(),
                row.features(),
                fraudWindows.contains(row.key())));
      }
      rows.sort(LabelledWindow.TIME_ORDER);
      return new Result(rows, counters(result), countLines(replay), all.size() - records.size());
    } finally {
      try (Stream<Path> paths = Files.walk(outDir)) {
        paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private static List<String> readLines(Path dir, String prefix) throws IOException {
    List<String> lines = new ArrayList<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path file :
          files.filter(f -> f.getFileName().toString().startsWith(prefix)).sorted().toList()) {
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
          if (!line.isEmpty()) {
            lines.add(line);
          }
        }
      }
    }
    return lines;
  }

  /**
   * The (account, window) keys holding a {@code fraud}-labelled event: the label pass, over the
   * records the pipeline was given, minus those the parser rejected.
   */
  static Set<String> fraudWindows(
      List<RawRecord> records, Set<String> rejectedOrigins, SlidingWindows windows) {
    Set<String> keys = new HashSet<>();
    for (RawRecord record : records) {
      if (rejectedOrigins.contains(record.origin())) {
        continue;
      }
      JsonNode node = tryParse(record.payload());
      Instant time = eventTime(node);
      if (time == null
          || !"fraud".equals(node.path("data").path("label").asText())
          || !node.path("data").path("accountId").isTextual()) {
        continue;
      }
      String account = node.get("data").get("accountId").asText();
      for (IntervalWindow window : windows.assignWindows(time)) {
        keys.add(LabelledWindow.key(account, window.start(), window.end()));
      }
    }
    return keys;
  }

  /**
   * The feature graph on {@code raw} records (in the global window): one JSON line per (account,
   * window) with its features (see {@link LabelledWindow}, label not set), and the origins of the
   * records the parser rejected. Tests apply it to their own pipelines.
   */
  public static Outputs expand(
      PCollection<RawRecord> raw, Duration windowSize, Duration windowPeriod) {
    WithFailures.Result<PCollection<Event>, DeadLetter> parsed =
        raw.apply("ParseCloudEvents", ParseCloudEvents.create());
    DeduplicateEvents.Result deduped =
        parsed.output().apply("DeduplicateEvents", DeduplicateEvents.create());
    ComputeFeatures.Result features =
        deduped
            .events()
            .apply(
                "ComputeFeatures",
                ComputeFeatures.of(windowSize, windowPeriod)
                    .withoutEarlyFirings()
                    .withGateShards(GATE_SHARDS));
    PCollection<String> rows =
        features
            .features()
            .apply("ToTrainingRow", ParDo.of(new TrainingRowFn()))
            .setCoder(StringUtf8Coder.of());
    PCollection<String> rejected =
        parsed
            .failures()
            .apply("RejectedOrigins", ParDo.of(new OriginFn()))
            .setCoder(StringUtf8Coder.of());
    return new Outputs(rows, rejected);
  }

  /**
   * Keeps the first record of each CloudEvents identity in arrival order (what a streaming replay's
   * deduplication keeps); records that are not JSON objects with a string source and id pass.
   */
  static List<RawRecord> firstCopies(List<RawRecord> records) {
    Set<String> seen = new HashSet<>();
    List<RawRecord> first = new ArrayList<>(records.size());
    for (RawRecord record : records) {
      JsonNode node = tryParse(record.payload());
      if (node != null && node.path("source").isTextual() && node.path("id").isTextual()) {
        if (!seen.add(identity(node.get("source").asText(), node.get("id").asText()))) {
          continue;
        }
      }
      first.add(record);
    }
    return first;
  }

  /**
   * The replay file's records, as the replay reader would make them: every line except {@code
   * advance...} directives, with the ingestion clock starting at the first event's time and moved
   * by {@code advanceProcessingTime}.
   */
  static List<RawRecord> readRecords(Path replay) throws IOException {
    byte[] bytes = Files.readAllBytes(replay);
    List<RawRecord> records = new ArrayList<>();
    String name = replay.getFileName().toString();
    Instant clock = null;
    long pendingAdvanceMillis = 0;
    int lineNumber = 0;
    int start = 0;
    for (int i = 0; i <= bytes.length; i++) {
      if (i < bytes.length && bytes[i] != '\n') {
        continue;
      }
      int end = i > start && bytes[i - 1] == '\r' ? i - 1 : i;
      if (i == bytes.length && end <= start) {
        break;
      }
      lineNumber++;
      byte[] line = java.util.Arrays.copyOfRange(bytes, start, end);
      start = i + 1;
      JsonNode node = tryParse(line);
      if (node != null && node.isObject() && !node.has("specversion")) {
        if (node.has("advanceProcessingTime")) {
          pendingAdvanceMillis += durationMillis(node.get("advanceProcessingTime").asText());
          continue;
        }
        if (node.has("advanceWatermarkTo") || node.has("advanceWatermarkToInfinity")) {
          continue;
        }
      }
      if (clock == null) {
        Instant first = eventTime(node);
        clock = first == null ? new Instant(0) : first;
      }
      clock = clock.plus(Duration.millis(pendingAdvanceMillis));
      pendingAdvanceMillis = 0;
      records.add(RawRecord.of(line, clock, "train:" + name + ":" + lineNumber));
    }
    return records;
  }

  static int countLines(Path replay) throws IOException {
    byte[] bytes = Files.readAllBytes(replay);
    int lines = 0;
    for (byte b : bytes) {
      lines += b == '\n' ? 1 : 0;
    }
    return bytes.length > 0 && bytes[bytes.length - 1] != '\n' ? lines + 1 : lines;
  }

  private static long durationMillis(String text) {
    try {
      return java.time.Duration.parse(text).toMillis();
    } catch (RuntimeException e) {
      return 0;
    }
  }

  private static @Nullable JsonNode tryParse(byte[] line) {
    try {
      return Json.MAPPER.readTree(line);
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  static @Nullable Instant eventTime(@Nullable JsonNode node) {
    if (node == null || !node.isObject() || !node.path("time").isTextual()) {
      return null;
    }
    try {
      return new Instant(
          OffsetDateTime.parse(node.get("time").asText()).toInstant().toEpochMilli());
    } catch (RuntimeException e) {
      return null;
    }
  }

  private static Map<String, Long> counters(PipelineResult result) {
    Map<String, Long> counters = new TreeMap<>();
    for (MetricResult<Long> counter :
        result.metrics().queryMetrics(MetricsFilter.builder().build()).getCounters()) {
      if (TidemarkMetrics.NAMESPACE.equals(counter.getName().getNamespace())) {
        counters.merge(counter.getName().getName(), counter.getAttempted(), Long::sum);
      }
    }
    return counters;
  }

  static String identity(String source, String id) {
    // Length-prefixed, so no two (source, id) pairs collide.
    return source.length() + ":" + source + "|" + id;
  }

  /** One training-row line per fired pane (batch: one per account and window). */
  static final class TrainingRowFn extends DoFn<KV<String, Features>, String> {
    @ProcessElement
    public void processElement(
        @Element KV<String, Features> pane,
        IntervalWindow window,
        PaneInfo paneInfo,
        OutputReceiver<String> out) {
      if (AssembleDecisions.timing(paneInfo) != PaneInfo.Timing.ON_TIME) {
        throw new IllegalStateException(
            "window "
                + window
                + " of "
                + pane.getKey()
                + " fired a "
                + paneInfo.getTiming()
                + " pane in batch; expected one on-time pane");
      }
      out.output(
          new LabelledWindow(pane.getKey(), window.start(), window.end(), pane.getValue(), false)
              .toJsonLine());
    }
  }

  /** The origin of a rejected record. */
  static final class OriginFn extends DoFn<DeadLetter, String> {
    @ProcessElement
    public void processElement(@Element DeadLetter deadLetter, OutputReceiver<String> out) {
      out.output(deadLetter.origin());
    }
  }

  static void requireNotEmpty(List<LabelledWindow> rows, Path replay) {
    if (rows.isEmpty()) {
      throw new IllegalArgumentException(
          "no (account, window) features came out of "
              + replay
              + "; is it a Tidemark replay file?");
    }
  }
}
