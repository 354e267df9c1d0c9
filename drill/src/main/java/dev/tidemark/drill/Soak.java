package dev.tidemark.drill;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.cluster.ClusterSettings;
import dev.tidemark.launcher.KafkaFeed;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.flink.FlinkRestException;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.ToDoubleFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code ./tidemark drill --soak=PT30M}: one job on the local cluster fed at 80 % of its sustained
 * rate for the given time, sampled as it runs: the TaskManagers' heap, the RocksDB state (the full
 * size of the latest completed checkpoint: with incremental RocksDB checkpoints, the SST files the
 * state consists of), the latest checkpoint's duration, and the input the job has not committed
 * yet. It holds when the job kept up (never restarted; in the second half never more than a minute
 * of feed behind) and each of the three stayed flat over the second half: the largest one-minute
 * figure at most {@value #FLAT} times the smallest.
 *
 * <p>The sustained rate is measured first on the same job: a backlog of {@code probeRecords} is fed
 * at once, after a warm-up of a fifth of that, and the rate is the backlog over the time the job
 * took to commit it. The soak's input then continues the probe's event time, with the generator's
 * adversarial mix, about 24 seconds of event time per second of wall time, and the job runs with
 * {@code --dedupHorizon=PT1H}: the dedup state of the default 24 h horizon would need a day of
 * event time to stop growing, which a 30-minute soak at this pace does not reach; with an hour it
 * is steady after a few minutes, like the windows' (an hour of allowed lateness).
 *
 * <p>One-minute figures: a heap sample is the heap in use at that moment, young garbage included,
 * so the minute's smallest sample stands for the heap that survives a collection; the state size
 * and the checkpoint duration are the minute's medians (RocksDB compactions and a checkpoint that
 * meets a busy moment make single samples jump).
 */
final class Soak {
  /** The most the largest one-minute figure of the second half may be over the smallest. */
  static final double FLAT = 1.2;

  /** Share of the sustained rate the soak feeds. */
  static final double SHARE_OF_SUSTAINED = 0.8;

  /** Seconds of event time per second of wall time in the soak's input. */
  static final double EVENT_SECONDS_PER_SECOND = 24;

  /** The dedup horizon of the soak's job (see the class comment). */
  static final String DEDUP_HORIZON = "PT1H";

  /** The TaskManagers' heap in use, in Flink's Prometheus reporter's names. */
  static final String HEAP_METRIC = "flink_taskmanager_Status_JVM_Memory_Heap_Used";

  private static final Pattern HEAP_SAMPLE =
      Pattern.compile("^" + HEAP_METRIC + "(\\{[^}]*\\})?\\s+(\\S+)$", Pattern.MULTILINE);

  /**
   * One sample.
   *
   * @param atSeconds from the start of the soak's feed
   * @param heapBytes heap in use, summed over the TaskManagers
   * @param stateBytes full size of the latest completed checkpoint (-1 before the first)
   * @param checkpointMillis end-to-end duration of that checkpoint (-1 before the first)
   * @param checkpointId its id
   * @param lagRecords records produced to the input topic and not yet committed by the job
   */
  record Sample(
      double atSeconds,
      double heapBytes,
      double stateBytes,
      double checkpointMillis,
      long checkpointId,
      long lagRecords) {}

  /** What the soak measured, and its verdict. */
  record Outcome(
      double sustainedRate,
      double rate,
      Duration duration,
      long fed,
      long restarts,
      List<Sample> samples,
      Map<String, Double> secondHalfRatios,
      long secondHalfMaxLag,
      boolean keptUp,
      boolean holds,
      List<String> log) {

    ObjectNode toJson() {
      ObjectNode json = Json.MAPPER.createObjectNode();
      json.put("sustainedRecordsPerSecond", round(sustainedRate));
      json.put("recordsPerSecond", round(rate));
      // The share fed: 80 %, or what --rate chose.
      json.put("shareOfSustained", sustainedRate > 0 ? round(rate / sustainedRate) : null);
      json.put("duration", duration.toString());
      json.put("fed", fed);
      json.put("jobRestarts", restarts);
      json.put("dedupHorizon", DEDUP_HORIZON);
      ObjectNode ratios = json.putObject("secondHalfMaxOverMin");
      secondHalfRatios.forEach((name, ratio) -> ratios.put(name, round(ratio)));
      json.put("flatBound", FLAT);
      json.put("secondHalfMaxLagRecords", secondHalfMaxLag);
      json.put("keptUp", keptUp);
      json.put("holds", holds);
      ArrayNode list = json.putArray("samples");
      for (Sample sample : samples) {
        ObjectNode s = list.addObject();
        s.put("atSeconds", round(sample.atSeconds()));
        s.put("heapMiB", round(sample.heapBytes() / MIB));
        s.put("stateMiB", sample.stateBytes() < 0 ? -1 : round(sample.stateBytes() / MIB));
        s.put("checkpointSeconds", round(sample.checkpointMillis() / 1000));
        s.put("checkpointId", sample.checkpointId());
        s.put("lagRecords", sample.lagRecords());
      }
      ArrayNode lines = json.putArray("log");
      log.forEach(lines::add);
      return json;
    }
  }

  static final double MIB = 1024.0 * 1024.0;

  private final DrillJobs jobs;
  private final ClusterSettings cluster;
  private final PrintStream progress;

  Soak(DrillJobs jobs, ClusterSettings cluster, PrintStream progress) {
    this.jobs = jobs;
    this.cluster = cluster;
    this.progress = progress;
  }

  /**
   * Runs the soak: submits the job, measures the sustained rate (unless {@code rate} is given),
   * feeds {@code duration} at the soak's rate while sampling every {@code every}, cancels the job.
   */
  Outcome run(
      String prefix,
      KafkaOptions.KafkaSinkMode sink,
      Duration duration,
      Duration every,
      int probeRecords,
      @org.checkerframework.checker.nullness.qual.Nullable Double rate,
      long seed,
      Path output)
      throws Exception {
    List<String> log = new ArrayList<>();
    DrillJobs.Topics topics = new DrillJobs.Topics(prefix);
    TidemarkOptions options =
        jobs.options(
            topics,
            output.resolve("job"),
            List.of(DrillJobs.sinkMode(sink), "--dedupHorizon=" + DEDUP_HORIZON));
    jobs.createTopics(options, 2);
    String jobId = jobs.submit(options, null);
    note(log, "submitted job " + jobId + " (" + sink + " sink): " + jobs.rest().webUi(jobId));
    try {
      // The probe: a warm-up, then a backlog fed at once; the sustained rate is what the job
      // commits of it per second.
      int warmUp = Math.max(1, probeRecords / 5);
      Instant start = GeneratorConfig.DEFAULT_START;
      Path probeInput = output.resolve("probe.ndjson");
      GeneratorConfig probeConfig = input(seed, warmUp + probeRecords, 10, start);
      new EventGenerator(probeConfig).writeTo(probeInput);
      List<Path> probeParts =
          SavepointSteps.splitAt(
              probeInput,
              output.resolve("probe"),
              List.of(warmUp / (double) (warmUp + probeRecords)));
      KafkaFeed.Fed warm =
          KafkaFeed.produce(
              jobs.clients(), topics.input(), probeParts.get(0), KafkaFeed.Mode.MIXED, 0, null);
      jobs.awaitConsumed(jobId, options, Duration.ofMinutes(10));
      long probeStarted = System.nanoTime();
      KafkaFeed.Fed probe =
          KafkaFeed.produce(
              jobs.clients(),
              topics.input(),
              probeParts.get(1),
              KafkaFeed.Mode.MIXED,
              0,
              warm.clockMillis);
      jobs.awaitConsumed(jobId, options, Duration.ofMinutes(30));
      double probeSeconds = (System.nanoTime() - probeStarted) / 1e9;
      double sustained = probe.records / probeSeconds;
      note(
          log,
          String.format(
              "probe: %d records committed in %.1f s after a warm-up of %d: sustained %.0f"
                  + " records/s",
              probe.records, probeSeconds, warm.records, sustained));
      double soakRate = rate != null ? rate : SHARE_OF_SUSTAINED * sustained;

      // The soak's input: enough records for the duration at that rate, its event time going on
      // from the probe's.
      int records = (int) Math.ceil(soakRate * duration.toMillis() / 1000.0);
      Path soakInput = output.resolve("soak.ndjson");
      double eventsPerSecond = Math.max(0.01, soakRate / EVENT_SECONDS_PER_SECOND);
      Instant soakStart =
          Instant.ofEpochMilli(Math.max(warm.maxEventTimeMillis, probe.maxEventTimeMillis))
              .plusSeconds(60)
              .truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
      // The generator adds re-sends and malformed records on top of its events: about 7 %.
      new EventGenerator(
              input(seed + 1, (int) Math.ceil(records / 1.07), eventsPerSecond, soakStart))
          .writeTo(soakInput);
      note(
          log,
          String.format(
              "soak: %s at %.0f records/s (%.0f %% of sustained%s), sampled every %s",
              duration,
              soakRate,
              100 * soakRate / sustained,
              rate != null ? ", --rate" : "",
              every));
      long restartsBefore = jobs.rest().restarts(jobId);
      Long clock = probe.clockMillis;
      long fedStarted = System.nanoTime();
      CompletableFuture<KafkaFeed.Fed> feeding =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return KafkaFeed.produce(
                      jobs.clients(),
                      topics.input(),
                      soakInput,
                      KafkaFeed.Mode.MIXED,
                      soakRate,
                      clock);
                } catch (IOException e) {
                  throw new IllegalStateException("feeding " + topics.input() + " failed", e);
                }
              });
      List<Sample> samples = new ArrayList<>();
      long next = System.nanoTime();
      while (!feeding.isDone()) {
        jobs.checkRunning(jobId);
        samples.add(sample(jobId, options, (System.nanoTime() - fedStarted) / 1e9));
        Sample last = samples.get(samples.size() - 1);
        if (samples.size() % Math.max(1, (int) (60_000 / every.toMillis())) == 0) {
          progress.printf(
              "drill: soak %.0f s: heap %.0f MiB, state %.1f MiB, checkpoint %d took %.1f s, %d"
                  + " records behind%n",
              last.atSeconds(),
              last.heapBytes() / MIB,
              last.stateBytes() / MIB,
              last.checkpointId(),
              last.checkpointMillis() / 1000,
              last.lagRecords());
        }
        next += every.toNanos();
        long wait = (next - System.nanoTime()) / 1_000_000;
        if (wait > 0) {
          // Waits for the feed to end or the next sample, whichever comes first.
          try {
            feeding.get(wait, java.util.concurrent.TimeUnit.MILLISECONDS);
          } catch (java.util.concurrent.TimeoutException e) {
            // Time for the next sample.
          }
        }
      }
      KafkaFeed.Fed fed;
      try {
        fed = feeding.get();
      } catch (ExecutionException e) {
        throw new IllegalStateException("the soak's feed failed: " + e.getCause().getMessage(), e);
      }
      long restarts = jobs.rest().restarts(jobId) - restartsBefore;
      Map<String, Double> ratios = secondHalfRatios(samples);
      long maxLag = secondHalf(samples).stream().mapToLong(Sample::lagRecords).max().orElse(0);
      boolean keptUp = restarts == 0 && maxLag <= Math.ceil(soakRate * 60);
      boolean flat = ratios.values().stream().allMatch(ratio -> ratio < FLAT);
      note(
          log,
          String.format(
              "soak: fed %d records in %.0f s; second half max/min %s; at most %d records behind;"
                  + " %d restarts",
              fed.records, (System.nanoTime() - fedStarted) / 1e9, ratios, maxLag, restarts));
      return new Outcome(
          sustained,
          soakRate,
          duration,
          fed.records,
          restarts,
          samples,
          ratios,
          maxLag,
          keptUp,
          keptUp && flat && !ratios.isEmpty(),
          log);
    } finally {
      jobs.cancelQuietly(jobId);
    }
  }

  /**
   * The soak's input: the generator's adversarial mix (re-sends, late, too-late and malformed
   * records) from {@code start}, about one account per hundred events.
   */
  static GeneratorConfig input(long seed, int events, double eventsPerSecond, Instant start) {
    return GeneratorConfig.builder()
        .seed(seed)
        .numEvents(events)
        .numAccounts(Math.max(50, Math.min(5000, events / 100)))
        .eventsPerSecond(eventsPerSecond)
        .start(start)
        .build();
  }

  private Sample sample(String jobId, TidemarkOptions options, double atSeconds) throws Exception {
    double heap = 0;
    for (int i = 0; i < cluster.taskManagers(); i++) {
      heap += heapUsed(cluster.taskManagerPrometheusPort(i));
    }
    double state = -1;
    double duration = -1;
    long id = -1;
    try {
      JsonNode completed =
          jobs.rest().get("/jobs/" + jobId + "/checkpoints").path("latest").path("completed");
      if (completed.isObject()) {
        state = completed.path("state_size").asDouble(-1);
        duration = completed.path("end_to_end_duration").asDouble(-1);
        id = completed.path("id").asLong(-1);
      }
    } catch (FlinkRestException e) {
      // No answer this time: the sample says -1.
    }
    long lag = jobs.inputPosition(options).pending();
    return new Sample(atSeconds, heap, state, duration, id, lag);
  }

  /** The heap in use that the Prometheus endpoint on {@code port} reports (0 if none). */
  private static double heapUsed(int port) throws InterruptedException {
    try {
      return heapUsed(TaskManagerMetrics.exposition(port));
    } catch (IOException e) {
      return 0;
    }
  }

  /** The heap in use in a Prometheus text exposition (0 if it has none). */
  static double heapUsed(String exposition) {
    Matcher matcher = HEAP_SAMPLE.matcher(exposition);
    double sum = 0;
    while (matcher.find()) {
      sum += Double.parseDouble(matcher.group(2));
    }
    return sum;
  }

  /** The samples of the second half of the soak. */
  static List<Sample> secondHalf(List<Sample> samples) {
    if (samples.isEmpty()) {
      return List.of();
    }
    double end = samples.get(samples.size() - 1).atSeconds();
    return samples.stream().filter(s -> s.atSeconds() >= end / 2).toList();
  }

  /**
   * Max over min of the second half's one-minute figures, for {@code heap} (each minute's smallest
   * sample), {@code state} and {@code checkpointDuration} (each minute's median, over the samples
   * that have a completed checkpoint). A series with fewer than two minutes, or a minimum of 0, has
   * no ratio.
   */
  static Map<String, Double> secondHalfRatios(List<Sample> samples) {
    List<Sample> half = secondHalf(samples);
    Map<String, Double> ratios = new LinkedHashMap<>();
    ratio(ratios, "heap", minutes(half, Sample::heapBytes, false));
    ratio(ratios, "state", minutes(half, Sample::stateBytes, true));
    ratio(ratios, "checkpointDuration", minutes(half, Sample::checkpointMillis, true));
    return ratios;
  }

  private static void ratio(Map<String, Double> ratios, String name, List<Double> minutes) {
    if (minutes.size() < 2) {
      return;
    }
    double max = minutes.stream().mapToDouble(Double::doubleValue).max().orElse(0);
    double min = minutes.stream().mapToDouble(Double::doubleValue).min().orElse(0);
    if (min > 0) {
      ratios.put(name, max / min);
    }
  }

  /**
   * One figure per whole minute of samples (minutes counted from the first sample): the median when
   * {@code median}, else the smallest; negative samples (no checkpoint yet) left out.
   */
  static List<Double> minutes(
      List<Sample> samples, ToDoubleFunction<Sample> value, boolean median) {
    Map<Long, List<Double>> byMinute = new LinkedHashMap<>();
    if (samples.isEmpty()) {
      return List.of();
    }
    double first = samples.get(0).atSeconds();
    for (Sample sample : samples) {
      double v = value.applyAsDouble(sample);
      if (v >= 0) {
        byMinute
            .computeIfAbsent(
                (long) Math.floor((sample.atSeconds() - first) / 60), k -> new ArrayList<>())
            .add(v);
      }
    }
    List<Double> figures = new ArrayList<>();
    for (List<Double> minute : byMinute.values()) {
      List<Double> sorted = minute.stream().sorted().toList();
      figures.add(
          median
              ? (sorted.size() % 2 == 1
                  ? sorted.get(sorted.size() / 2)
                  : (sorted.get(sorted.size() / 2 - 1) + sorted.get(sorted.size() / 2)) / 2)
              : sorted.get(0));
    }
    return figures;
  }

  private void note(List<String> log, String line) {
    log.add(line);
    progress.println("drill: " + line);
  }

  private static double round(double value) {
    return Math.round(value * 100) / 100.0;
  }
}
