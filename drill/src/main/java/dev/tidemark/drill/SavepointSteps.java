package dev.tidemark.drill;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.launcher.KafkaFeed;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.io.ReplayFile;
import dev.tidemark.transforms.util.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * The drill's planned changes, each through a savepoint: a rescale (parallelism 2, then 1, then 2
 * again with the input topic's partitions raised from 2 to 4) and a model upgrade (resumed with the
 * ONNX model). Both use the sink mode given to the constructor ({@code --savepointSink}).
 */
final class SavepointSteps {
  /** The ONNX model the upgrade resumes with, as the cluster's processes read it. */
  static final String UPGRADE_MODEL =
      "model/src/main/resources/models/tidemark-fraud-logreg-v1.onnx";

  /** The name the upgrade model's sidecar gives it, which its decisions carry. */
  static final String UPGRADE_MODEL_NAME = "tidemark-fraud-logreg";

  /** What a step did and its committed outputs. */
  record Outcome(
      KafkaOptions.KafkaSinkMode sink,
      int fed,
      int markers,
      Map<String, List<ConsumerRecord<byte[], byte[]>>> committed,
      List<String> savepoints,
      List<String> log,
      Map<String, Object> checks) {}

  private final DrillJobs jobs;
  private final KafkaOptions.KafkaSinkMode sink;
  private final Path home;
  private final PrintStream progress;

  /**
   * Records fed per second of wall time, as in the fault runs. A burst would let the restored job
   * read one partition's backlog ahead of another's: the watermark, the slowest partition's, then
   * trails the records read by more than the too-late margin, and an event the reference diverts
   * would count in its window (measured: one event of 104,000 in a burst of 34,667 records).
   */
  private final double rate;

  SavepointSteps(
      DrillJobs jobs,
      KafkaOptions.KafkaSinkMode sink,
      double rate,
      Path home,
      PrintStream progress) {
    this.jobs = jobs;
    this.sink = sink;
    this.rate = rate;
    this.home = home;
    this.progress = progress;
  }

  /** The too-late gate's shards in every job of the rescale. */
  static final int GATE_SHARDS = 2;

  private static final String GATE_SHARDS_ARG = "--gateShards=" + GATE_SHARDS;

  /**
   * Feeds the input in three parts: the first to a job at parallelism 2, stopped with a savepoint;
   * the second to a job resumed from it at parallelism 1, stopped with a savepoint; then the input
   * topic goes from 2 to 4 partitions and the third part goes to a job resumed at parallelism 2.
   * Every job keeps the too-late gate's {@value #GATE_SHARDS} shards, as a restore must.
   */
  Outcome rescale(String prefix, Path events, Path output, Duration timeout) throws Exception {
    List<Path> parts = split(events, output, 3);
    DrillJobs.Topics topics = new DrillJobs.Topics(prefix);
    List<String> log = new ArrayList<>();
    List<String> savepoints = new ArrayList<>();
    TidemarkOptions first =
        jobs.options(
            topics,
            output.resolve("job"),
            List.of("--parallelism=2", GATE_SHARDS_ARG, DrillJobs.sinkMode(sink)));
    Map<String, String> outputs = jobs.createTopics(first, 2);
    int fed = 0;
    String savepoint = null;
    KafkaFeed.Fed last = null;
    long maxEventTime = 0;
    int[] parallelism = {2, 1, 2};
    for (int step = 0; step < 3; step++) {
      if (step == 2) {
        jobs.raisePartitions(topics.input(), 4);
        note(log, "raised " + topics.input() + " to 4 partitions");
      }
      TidemarkOptions options =
          jobs.options(
              topics,
              output.resolve("job"),
              List.of(
                  "--parallelism=" + parallelism[step], GATE_SHARDS_ARG, DrillJobs.sinkMode(sink)));
      String jobId = jobs.submit(options, savepoint);
      note(
          log,
          "job "
              + jobId
              + " at parallelism "
              + parallelism[step]
              + (savepoint == null ? "" : ", restored from " + savepoint));
      try {
        last =
            KafkaFeed.produce(
                jobs.clients(),
                topics.input(),
                parts.get(step),
                KafkaFeed.Mode.MIXED,
                rate,
                last == null ? null : last.clockMillis);
        fed += last.records;
        maxEventTime = Math.max(maxEventTime, last.maxEventTimeMillis);
        if (step < 2) {
          jobs.awaitConsumed(jobId, options, timeout);
          savepoint = jobs.stopWithSavepoint(jobId, output.resolve("savepoints"));
          savepoints.add(savepoint);
          note(log, "fed " + last.records + " records; stopped with savepoint " + savepoint);
          jobId = null;
        } else {
          DrillJobs.Finished finished =
              jobs.finish(jobId, options, outputs, fed, maxEventTime, timeout);
          note(
              log,
              "fed " + last.records + " records and " + finished.markers() + " end markers; quiet");
          return new Outcome(
              sink, fed, finished.markers(), finished.committed(), savepoints, log, Map.of());
        }
      } finally {
        jobs.cancelQuietly(jobId);
      }
    }
    throw new IllegalStateException("unreachable");
  }

  /**
   * Feeds the first half to a job scoring with the default model, stops it with a savepoint,
   * resumes with the ONNX model, re-sends an event of the first half that the input holds once,
   * then feeds the second half. Checks: the re-sent event is a duplicate (dedup state survived the
   * upgrade), every decision made after the resume names the new model, and none made before it.
   */
  Outcome upgrade(String prefix, Path events, Path output, Duration timeout) throws Exception {
    List<Path> parts = split(events, output, 2);
    DrillJobs.Topics topics = new DrillJobs.Topics(prefix);
    List<String> log = new ArrayList<>();
    TidemarkOptions before =
        jobs.options(topics, output.resolve("job"), List.of(DrillJobs.sinkMode(sink)));
    Map<String, String> outputs = jobs.createTopics(before, 2);
    String jobId = jobs.submit(before, null);
    String savepoint;
    KafkaFeed.Fed first;
    try {
      first =
          KafkaFeed.produce(
              jobs.clients(), topics.input(), parts.get(0), KafkaFeed.Mode.MIXED, rate, null);
      jobs.awaitConsumed(jobId, before, timeout);
      // The default model must have decided before the upgrade: windows fire early panes only
      // --earlyFiringDelay of processing time after their first event, and a stop keeps the rest.
      jobs.awaitRecords(jobId, outputs.get("decisions"), 1, timeout);
      savepoint = jobs.stopWithSavepoint(jobId, output.resolve("savepoints"));
      jobId = null;
    } finally {
      jobs.cancelQuietly(jobId);
    }
    note(log, "fed " + first.records + " records with the default model; savepoint " + savepoint);
    // Decisions scored before the savepoint may still be committed after the resume (the
    // transactional sink's last transaction), so the model is judged by when a decision was made.
    Instant upgraded = Instant.now();

    String model = home.resolve(UPGRADE_MODEL).toString();
    TidemarkOptions after =
        jobs.options(
            topics,
            output.resolve("job"),
            List.of("--modelUri=" + model, DrillJobs.sinkMode(sink)));
    jobId = jobs.submit(after, savepoint);
    note(log, "job " + jobId + " resumed with " + model);
    try {
      byte[] resent = eventHeldOnce(parts.get(0), events);
      JsonNode resentEvent = Json.MAPPER.readTree(resent);
      Path resend = output.resolve("resend.ndjson");
      Files.write(resend, resent);
      KafkaFeed.Fed again =
          KafkaFeed.produce(
              jobs.clients(),
              topics.input(),
              resend,
              KafkaFeed.Mode.STRUCTURED,
              0,
              first.clockMillis);
      KafkaFeed.Fed second =
          KafkaFeed.produce(
              jobs.clients(),
              topics.input(),
              parts.get(1),
              KafkaFeed.Mode.MIXED,
              rate,
              again.clockMillis);
      DrillJobs.Finished finished =
          jobs.finish(
              jobId,
              after,
              outputs,
              first.records + again.records + second.records,
              Math.max(first.maxEventTimeMillis, second.maxEventTimeMillis),
              timeout);
      Map<String, List<ConsumerRecord<byte[], byte[]>>> committed = finished.committed();
      String source = resentEvent.path("source").asText();
      String id = resentEvent.path("id").asText();
      long resentDuplicates =
          committed.get("duplicates").stream()
              .map(record -> json(record.value()))
              .filter(
                  d -> source.equals(d.path("source").asText()) && id.equals(d.path("id").asText()))
              .count();
      Map<String, Long> modelsAfter = new HashMap<>();
      Map<String, Long> modelsBefore = new HashMap<>();
      for (ConsumerRecord<byte[], byte[]> record : committed.get("decisions")) {
        JsonNode decision = json(record.value());
        Instant decided = Instant.parse(decision.path("clocks").path("decisionTime").asText());
        String name = decision.path("model").path("name").asText();
        (decided.isBefore(upgraded) ? modelsBefore : modelsAfter).merge(name, 1L, Long::sum);
      }
      note(
          log,
          "re-sent "
              + source
              + " "
              + id
              + ": "
              + resentDuplicates
              + " duplicate record(s); models before "
              + modelsBefore
              + ", after "
              + modelsAfter);
      Map<String, Object> checks = new HashMap<>();
      checks.put("resentIdentity", source + " " + id);
      checks.put("resentRecordedAsDuplicate", resentDuplicates == 1);
      checks.put("decisionsBefore", modelsBefore);
      checks.put("decisionsAfter", modelsAfter);
      return new Outcome(
          sink,
          first.records + again.records + second.records,
          finished.markers(),
          committed,
          List.of(savepoint),
          log,
          checks);
    } finally {
      jobs.cancelQuietly(jobId);
    }
  }

  /**
   * The first valid payment event of {@code part} whose source and id the whole input holds once.
   */
  static byte[] eventHeldOnce(Path part, Path input) throws IOException {
    Map<String, Integer> counts = new HashMap<>();
    for (byte[] line : ReplayFile.splitLines(Files.readAllBytes(input))) {
      @Nullable String identity = identity(line);
      if (identity != null) {
        counts.merge(identity, 1, Integer::sum);
      }
    }
    for (byte[] line : ReplayFile.splitLines(Files.readAllBytes(part))) {
      @Nullable String identity = identity(line);
      if (identity != null && counts.get(identity) == 1) {
        return line;
      }
    }
    throw new IllegalStateException(part + " holds no event that the input holds only once");
  }

  private static @Nullable String identity(byte[] line) {
    try {
      JsonNode node = Json.MAPPER.readTree(line);
      if (node != null
          && node.isObject()
          && "1.0".equals(node.path("specversion").asText())
          && node.path("type").asText().startsWith("payments.")
          && node.path("data").isObject()) {
        return node.path("source").asText() + " " + node.path("id").asText();
      }
    } catch (IOException e) {
      // A malformed line: not an identity.
    }
    return null;
  }

  /** Splits the replay file into {@code count} files of about equal line counts, in order. */
  static List<Path> split(Path events, Path output, int count) throws IOException {
    List<Double> cuts = new ArrayList<>();
    for (int part = 1; part < count; part++) {
      cuts.add(part / (double) count);
    }
    return splitAt(events, output, cuts);
  }

  /**
   * Splits the replay file, in order, at the fractions {@code cuts} (ascending, 0 to 1) of its
   * lines: {@code cuts.size() + 1} files.
   */
  static List<Path> splitAt(Path events, Path output, List<Double> cuts) throws IOException {
    List<byte[]> lines = ReplayFile.splitLines(Files.readAllBytes(events));
    Files.createDirectories(output);
    List<Path> parts = new ArrayList<>();
    int count = cuts.size() + 1;
    int from = 0;
    for (int part = 0; part < count; part++) {
      int to =
          part == cuts.size()
              ? lines.size()
              : Math.max(from, (int) Math.round(lines.size() * cuts.get(part)));
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      for (byte[] line : lines.subList(from, Math.min(to, lines.size()))) {
        bytes.write(line);
        bytes.write('\n');
      }
      Path file = output.resolve("part-" + (part + 1) + "-of-" + count + ".ndjson");
      Files.write(file, bytes.toByteArray());
      parts.add(file);
      from = Math.min(to, lines.size());
    }
    return parts;
  }

  private static JsonNode json(byte[] value) {
    try {
      return Json.MAPPER.readTree(value);
    } catch (IOException e) {
      throw new IllegalStateException("an output record is not JSON", e);
    }
  }

  private void note(List<String> log, String line) {
    log.add(line);
    progress.println("drill: " + line);
  }
}
