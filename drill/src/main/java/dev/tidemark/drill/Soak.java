package dev.tidemark.drill;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.cluster.LocalCluster;
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
 * rate for the given time, sampled as it runs: the TaskManagers' heap, the RocksDB state, the
 * latest checkpoint's duration and size, and the input the job has not committed yet. It holds when
 * the job kept up (never restarted; in the second half never more than a minute of feed behind; a
 * job {@value #GIVE_UP_SECONDS} seconds of feed behind stops the soak at once) and each of heap,
 * state and checkpoint duration stayed flat over the second half: the largest one-minute figure at
 * most {@value #FLAT} times the smallest.
 *
 * <p>The sustained rate is measured first on the same job, fed steadily as in the soak: a step of
 * {@code probeStep} at {@value #PROBE_FIRST_RATE} records/s, then each step {@value #PROBE_FACTOR}
 * times faster, until a step ends more than {@value #PROBE_LAG_SECONDS} seconds of its feed behind.
 * The sustained rate is the last step's rate that kept up. (Draining a backlog measures more: large
 * bundles, and fewer early panes than a steady feed fires.) The soak's input continues the probe's
 * event time, with the generator's adversarial mix over {@value #ACCOUNTS} accounts (the probe's
 * too), about 24 seconds of event time per second of wall time, and the job runs with {@code
 * --dedupHorizon=PT1H}: the dedup state of the default 24 h horizon would need a day of event time
 * to stop growing, which a 30-minute soak at this pace does not reach; with an hour it is steady
 * after a few minutes, like the windows' (an hour of allowed lateness).
 *
 * <p>One-minute figures:
 *
 * <ul>
 *   <li>heap: once a minute the soak forces a full collection on each TaskManager ({@code jcmd
 *       <pid> GC.run}) and reads the heap in use right after it, the heap the job keeps; the heap
 *       sampled in between (young garbage included) is charted, not judged;
 *   <li>state: RocksDB's estimate of its live data ({@code estimate-live-data-size}), summed over
 *       every state of every operator, the minute's median. A checkpoint's full size is charted and
 *       not judged: incremental checkpoints keep SST files of overwritten and deleted entries until
 *       a compaction rewrites them;
 *   <li>checkpoint duration: the minute's median, read as at least {@value
 *       #CHECKPOINT_FLOOR_MILLIS} ms: below a second, a duration is dominated by when the barrier
 *       met a busy moment, and a ratio of such figures is noise.
 * </ul>
 *
 * <p>The report also lists each state's live keys at the start of the second half and at the end,
 * so that a state that grows is named.
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

  /** The probe's first rate, in records per second. */
  static final double PROBE_FIRST_RATE = 30;

  /** Each probe step's rate over the previous one's. */
  static final double PROBE_FACTOR = 1.5;

  /** The most probe steps (the last one's rate is about 1,300 records/s). */
  static final int PROBE_MAX_STEPS = 10;

  /** A probe step kept up when it ended at most this many seconds of its feed behind. */
  static final double PROBE_LAG_SECONDS = 10;

  /**
   * Accounts in the probe's and the soak's input, as in the 100,000-event drill. Windows hold state
   * per account, so the state the job carries, and with it checkpoints and RocksDB's work, grow
   * with the accounts: a probe on fewer accounts than the soak would measure a faster job.
   */
  static final int ACCOUNTS = 1000;

  /** A soak whose job falls this many seconds of its feed behind has not kept up: it stops. */
  static final double GIVE_UP_SECONDS = 300;

  /** Checkpoint durations are judged as at least this long (see the class comment). */
  static final double CHECKPOINT_FLOOR_MILLIS = 1000;

  /** The TaskManagers' heap in use, in Flink's Prometheus reporter's names. */
  static final String HEAP_METRIC = "flink_taskmanager_Status_JVM_Memory_Heap_Used";

  private static final Pattern HEAP_SAMPLE =
      Pattern.compile("^" + HEAP_METRIC + "(\\{[^}]*\\})?\\s+(\\S+)$", Pattern.MULTILINE);

  /**
   * A RocksDB native metric of one state of one operator instance: the state's name, the metric
   * ({@code live_data_size} or {@code num_keys}), its labels and its value.
   */
  private static final Pattern ROCKSDB_SAMPLE =
      Pattern.compile(
          "^flink_taskmanager_job_task_operator_(\\w+?)_rocksdb_estimate_(live_data_size|num_keys)"
              + "(\\{[^}]*\\})?\\s+(\\S+)$",
          Pattern.MULTILINE);

  /**
   * One sample.
   *
   * @param atSeconds from the start of the soak's feed
   * @param heapBytes heap in use, summed over the TaskManagers
   * @param heapAfterGcBytes heap in use right after a forced full collection, summed over the
   *     TaskManagers (-1 in a sample that forced none)
   * @param stateBytes RocksDB's estimate of its live data, summed over every state (-1 when no
   *     TaskManager reported it)
   * @param checkpointBytes full size of the latest completed checkpoint (-1 before the first)
   * @param checkpointMillis end-to-end duration of that checkpoint (-1 before the first)
   * @param checkpointId its id
   * @param lagRecords records produced to the input topic and not yet committed by the job
   */
  record Sample(
      double atSeconds,
      double heapBytes,
      double heapAfterGcBytes,
      double stateBytes,
      double checkpointBytes,
      double checkpointMillis,
      long checkpointId,
      long lagRecords) {}

  /** One step of the probe: its rate, and how far behind the job was at its end. */
  record ProbeStep(double rate, long lagRecords, boolean keptUp) {}

  /** What the soak measured, and its verdict. */
  record Outcome(
      double sustainedRate,
      double rate,
      Duration duration,
      long fed,
      long restarts,
      List<ProbeStep> probe,
      List<Sample> samples,
      Map<String, Double> secondHalfRatios,
      Map<String, List<Double>> liveKeysByState,
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
      ArrayNode steps = json.putArray("probe");
      for (ProbeStep step : probe) {
        ObjectNode s = steps.addObject();
        s.put("recordsPerSecond", round(step.rate()));
        s.put("lagRecords", step.lagRecords());
        s.put("keptUp", step.keptUp());
      }
      ObjectNode ratios = json.putObject("secondHalfMaxOverMin");
      secondHalfRatios.forEach((name, ratio) -> ratios.put(name, round(ratio)));
      json.put("flatBound", FLAT);
      json.put("checkpointFloorSeconds", CHECKPOINT_FLOOR_MILLIS / 1000);
      json.put("secondHalfMaxLagRecords", secondHalfMaxLag);
      json.put("keptUp", keptUp);
      json.put("holds", holds);
      // Each state's live keys at the start of the second half and at the end (the end's only
      // when the soak stopped before its second half).
      ObjectNode states = json.putObject("liveKeysByState");
      liveKeysByState.forEach(
          (name, keys) -> {
            ArrayNode pair = states.putArray(name);
            keys.forEach(pair::add);
          });
      ArrayNode list = json.putArray("samples");
      for (Sample sample : samples) {
        ObjectNode s = list.addObject();
        s.put("atSeconds", round(sample.atSeconds()));
        s.put("heapMiB", round(sample.heapBytes() / MIB));
        s.put(
            "heapAfterGcMiB",
            sample.heapAfterGcBytes() < 0 ? -1 : round(sample.heapAfterGcBytes() / MIB));
        s.put("stateMiB", sample.stateBytes() < 0 ? -1 : round(sample.stateBytes() / MIB));
        s.put(
            "checkpointMiB",
            sample.checkpointBytes() < 0 ? -1 : round(sample.checkpointBytes() / MIB));
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
  private final LocalCluster cluster;
  private final PrintStream progress;

  Soak(DrillJobs jobs, LocalCluster cluster, PrintStream progress) {
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
      Duration probeStep,
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
    Feed feed = new Feed(topics.input(), GeneratorConfig.DEFAULT_START);
    Path soakInput = output.resolve("soak.ndjson");
    if (rate != null) {
      // Written before the job starts: a partition that has had no record for the job's idle
      // timeout since its reader started follows the wall clock (EventTimePolicy), and the
      // input's event time lies far behind it, so a feed that began only after a long input was
      // written would be judged too late as a whole and no state would ever expire.
      feed.generate(seed + 1, rate, duration, soakInput);
    }
    String jobId = jobs.submit(options, null);
    note(log, "submitted job " + jobId + " (" + sink + " sink): " + jobs.rest().webUi(jobId));
    try {
      List<ProbeStep> probe = new ArrayList<>();
      double sustained = 0;
      if (rate == null) {
        double stepRate = PROBE_FIRST_RATE;
        for (int step = 0; step < PROBE_MAX_STEPS; step++) {
          Path input = output.resolve("probe-" + (step + 1) + ".ndjson");
          feed.generate(seed + 100 + step, stepRate, probeStep, input);
          List<Long> lags = new ArrayList<>();
          feed.feed(
              input,
              stepRate,
              every,
              () -> {
                lags.add(jobs.inputPosition(options).pending());
                return true;
              });
          jobs.checkRunning(jobId);
          lags.add(jobs.inputPosition(options).pending());
          // The smallest lag of the step's last third: a checkpoint that met a busy moment
          // leaves one high sample, a job that falls behind leaves every one high.
          long lag =
              lags.subList(lags.size() - Math.max(1, lags.size() / 3), lags.size()).stream()
                  .mapToLong(Long::longValue)
                  .min()
                  .orElse(0);
          boolean keptUp = lag <= Math.ceil(stepRate * PROBE_LAG_SECONDS);
          probe.add(new ProbeStep(stepRate, lag, keptUp));
          note(
              log,
              String.format(
                  "probe: %.0f records/s for %s: %d records behind at its end, %s",
                  stepRate, probeStep, lag, keptUp ? "kept up" : "fell behind"));
          if (!keptUp) {
            break;
          }
          sustained = stepRate;
          stepRate *= PROBE_FACTOR;
        }
        if (sustained == 0) {
          throw new IllegalStateException(
              "the job did not keep up with the probe's first rate of "
                  + PROBE_FIRST_RATE
                  + " records/s: see probe in drill.json");
        }
        // The last step's backlog is drained before the soak's feed starts.
        jobs.awaitConsumed(jobId, options, Duration.ofMinutes(20));
        note(log, String.format("probe: sustained %.0f records/s", sustained));
      }
      double soakRate = rate != null ? rate : SHARE_OF_SUSTAINED * sustained;
      if (rate == null) {
        // The partitions have records by now: idle while this is written, their watermark moves
        // on from their last event time only by the wall-clock time writing takes: a second of
        // event time per second, where the feed's event time moves 24.
        feed.generate(seed + 1, soakRate, duration, soakInput);
      }
      note(
          log,
          String.format(
              "soak: %s at %.0f records/s (%s), sampled every %s",
              duration,
              soakRate,
              rate != null
                  ? "--rate"
                  : String.format("%.0f %% of sustained", 100 * soakRate / sustained),
              every));
      long restartsBefore = jobs.rest().restarts(jobId);
      List<Sample> samples = new ArrayList<>();
      int perMinute = Math.max(1, (int) (60_000 / every.toMillis()));
      Map<String, Double> keysAtStart = new LinkedHashMap<>();
      long producedBefore = jobs.inputPosition(options).produced();
      long fedStarted = System.nanoTime();
      long giveUpLag = (long) Math.ceil(soakRate * GIVE_UP_SECONDS);
      long fed =
          feed.feed(
              soakInput,
              soakRate,
              every,
              () -> {
                jobs.checkRunning(jobId);
                boolean collect = samples.size() % perMinute == 0;
                Sample last =
                    sample(jobId, options, (System.nanoTime() - fedStarted) / 1e9, collect);
                samples.add(last);
                if (keysAtStart.isEmpty() && last.atSeconds() >= duration.toSeconds() / 2.0) {
                  keysAtStart.putAll(liveKeys(jobId));
                }
                if (collect) {
                  progress.printf(
                      "drill: soak %.0f s: heap %s after a full GC, state %s,"
                          + " checkpoint %d took %.1f s, %d records behind%n",
                      last.atSeconds(),
                      mib(last.heapAfterGcBytes(), "%.0f"),
                      mib(last.stateBytes(), "%.1f"),
                      last.checkpointId(),
                      last.checkpointMillis() / 1000,
                      last.lagRecords());
                }
                return last.lagRecords() <= giveUpLag;
              });
      boolean gaveUp = fed < 0;
      if (gaveUp) {
        fed = jobs.inputPosition(options).produced() - producedBefore;
        note(
            log,
            String.format(
                "soak: stopped after %.0f s: the job was more than %.0f s of feed behind",
                (System.nanoTime() - fedStarted) / 1e9, GIVE_UP_SECONDS));
      }
      Map<String, Double> keysAtEnd = liveKeys(jobId);
      Map<String, List<Double>> keysByState = new java.util.TreeMap<>();
      // A soak stopped before its second half has the end's figure only.
      keysAtEnd.forEach(
          (name, keys) ->
              keysByState.put(
                  name,
                  keysAtStart.isEmpty()
                      ? List.of(keys)
                      : List.of(keysAtStart.getOrDefault(name, 0.0), keys)));
      long restarts = jobs.rest().restarts(jobId) - restartsBefore;
      Map<String, Double> ratios = secondHalfRatios(samples);
      long maxLag = secondHalf(samples).stream().mapToLong(Sample::lagRecords).max().orElse(0);
      boolean keptUp = !gaveUp && restarts == 0 && maxLag <= Math.ceil(soakRate * 60);
      boolean flat =
          ratios.keySet().equals(java.util.Set.of("heap", "state", "checkpointDuration"))
              && ratios.values().stream().allMatch(ratio -> ratio < FLAT);
      note(
          log,
          String.format(
              "soak: fed %d records in %.0f s; second half max/min %s; at most %d records behind;"
                  + " %d restarts",
              fed, (System.nanoTime() - fedStarted) / 1e9, ratios, maxLag, restarts));
      return new Outcome(
          sustained,
          soakRate,
          duration,
          fed,
          restarts,
          probe,
          samples,
          ratios,
          keysByState,
          maxLag,
          keptUp,
          keptUp && flat,
          log);
    } finally {
      jobs.cancelQuietly(jobId);
    }
  }

  /** Work done while a feed runs, once per sampling period; false stops waiting for the feed. */
  interface Tick {
    boolean run() throws Exception;
  }

  /**
   * The soak's and the probe's input, fed in parts whose event time goes on from the last part's
   * and whose replay clock continues it.
   */
  private final class Feed {
    private final String topic;
    private Instant eventStart;
    private @org.checkerframework.checker.nullness.qual.Nullable Long clockMillis;

    Feed(String topic, Instant eventStart) {
      this.topic = topic;
      this.eventStart = eventStart;
    }

    /**
     * Writes to {@code file} about {@code length} of input at {@code rate} records/s, at {@value
     * #EVENT_SECONDS_PER_SECOND} seconds of event time per second.
     */
    void generate(long seed, double rate, Duration length, Path file) throws IOException {
      int records = (int) Math.ceil(rate * length.toMillis() / 1000.0);
      double eventsPerSecond = Math.max(0.01, rate / EVENT_SECONDS_PER_SECOND);
      // The generator adds re-sends and malformed records on top of its events: about 7 %.
      new EventGenerator(input(seed, (int) Math.ceil(records / 1.07), eventsPerSecond, eventStart))
          .writeTo(file);
    }

    /**
     * Feeds {@code file} at {@code rate} records/s, calling {@code tick} at once and then every
     * {@code every} until the feed ends; returns the records fed. When {@code tick} says stop, the
     * rest of the feed goes on in the background (the caller cancels the job) and the records
     * produced so far are returned.
     */
    long feed(Path file, double rate, Duration every, Tick tick) throws Exception {
      Long clock = clockMillis;
      CompletableFuture<KafkaFeed.Fed> feeding =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return KafkaFeed.produce(
                      jobs.clients(), topic, file, KafkaFeed.Mode.MIXED, rate, clock);
                } catch (IOException e) {
                  throw new IllegalStateException("feeding " + topic + " failed", e);
                }
              });
      long next = System.nanoTime();
      while (!feeding.isDone()) {
        if (!tick.run()) {
          return -1;
        }
        next += every.toNanos();
        long wait = (next - System.nanoTime()) / 1_000_000;
        if (wait > 0) {
          // Waits for the feed to end or the next tick, whichever comes first.
          try {
            feeding.get(wait, java.util.concurrent.TimeUnit.MILLISECONDS);
          } catch (java.util.concurrent.TimeoutException e) {
            // Time for the next tick.
          }
        }
      }
      KafkaFeed.Fed fed;
      try {
        fed = feeding.get();
      } catch (ExecutionException e) {
        throw new IllegalStateException("feeding " + topic + " failed: " + e.getCause(), e);
      }
      clockMillis = fed.clockMillis;
      eventStart =
          Instant.ofEpochMilli(Math.max(eventStart.toEpochMilli(), fed.maxEventTimeMillis))
              .plusSeconds(60)
              .truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
      return fed.records;
    }
  }

  /**
   * The soak's input: the generator's adversarial mix (re-sends, late, too-late and malformed
   * records) from {@code start}, over {@value #ACCOUNTS} accounts.
   */
  static GeneratorConfig input(long seed, int events, double eventsPerSecond, Instant start) {
    return GeneratorConfig.builder()
        .seed(seed)
        .numEvents(events)
        .numAccounts(ACCOUNTS)
        .eventsPerSecond(eventsPerSecond)
        .start(start)
        .build();
  }

  private Sample sample(String jobId, TidemarkOptions options, double atSeconds, boolean collect)
      throws Exception {
    double heapAfterGc = collect ? heapAfterFullCollection() : -1;
    double heap = 0;
    double state = -1;
    for (int i = 0; i < cluster.settings().taskManagers(); i++) {
      String exposition = exposition(cluster.settings().taskManagerPrometheusPort(i));
      heap += heapUsed(exposition);
      for (double bytes : rocksDb(exposition, jobId, "live_data_size").values()) {
        state = Math.max(state, 0) + bytes;
      }
    }
    double checkpointBytes = -1;
    double duration = -1;
    long id = -1;
    try {
      JsonNode completed =
          jobs.rest().get("/jobs/" + jobId + "/checkpoints").path("latest").path("completed");
      if (completed.isObject()) {
        checkpointBytes = completed.path("state_size").asDouble(-1);
        duration = completed.path("end_to_end_duration").asDouble(-1);
        id = completed.path("id").asLong(-1);
      }
    } catch (FlinkRestException e) {
      // No answer this time: the sample says -1.
    }
    long lag = jobs.inputPosition(options).pending();
    return new Sample(atSeconds, heap, heapAfterGc, state, checkpointBytes, duration, id, lag);
  }

  /** {@code bytes} in MiB, or {@code unknown} for a figure not read (-1). */
  static String mib(double bytes, String format) {
    return bytes < 0
        ? "unknown"
        : String.format(java.util.Locale.ROOT, format, bytes / MIB) + " MiB";
  }

  /**
   * Forces a full collection on every TaskManager ({@code jcmd <pid> GC.run}) and sums the heap in
   * use right after it; -1 when a TaskManager could not be collected.
   */
  private double heapAfterFullCollection() throws InterruptedException, IOException {
    double heap = 0;
    for (int i = 0; i < cluster.settings().taskManagers(); i++) {
      java.util.Optional<Long> pid = cluster.pid(LocalCluster.TASK_MANAGER_PREFIX + i);
      if (pid.isEmpty()) {
        return -1;
      }
      Process jcmd =
          new ProcessBuilder(
                  java.nio.file.Paths.get(System.getProperty("java.home"), "bin", "jcmd")
                      .toString(),
                  String.valueOf(pid.get()),
                  "GC.run")
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      if (!jcmd.waitFor(60, java.util.concurrent.TimeUnit.SECONDS) || jcmd.exitValue() != 0) {
        jcmd.destroyForcibly();
        return -1;
      }
      heap += heapUsed(exposition(cluster.settings().taskManagerPrometheusPort(i)));
    }
    return heap;
  }

  /** Each state's live keys over every TaskManager, by state name. */
  private Map<String, Double> liveKeys(String jobId) throws InterruptedException {
    Map<String, Double> keys = new java.util.TreeMap<>();
    for (int i = 0; i < cluster.settings().taskManagers(); i++) {
      rocksDb(exposition(cluster.settings().taskManagerPrometheusPort(i)), jobId, "num_keys")
          .forEach((name, value) -> keys.merge(name, value, Double::sum));
    }
    return keys;
  }

  /** A TaskManager's Prometheus exposition; empty when it does not answer. */
  private static String exposition(int port) throws InterruptedException {
    try {
      return TaskManagerMetrics.exposition(port);
    } catch (IOException e) {
      return "";
    }
  }

  /**
   * RocksDB's estimate {@code metric} ({@code live_data_size} or {@code num_keys}) of each state of
   * job {@code jobId} in a Prometheus exposition, summed over operator instances, by state name.
   */
  static Map<String, Double> rocksDb(String exposition, String jobId, String metric) {
    Map<String, Double> byState = new java.util.TreeMap<>();
    Matcher matcher = ROCKSDB_SAMPLE.matcher(exposition);
    String job = "job_id=\"" + jobId + "\"";
    while (matcher.find()) {
      String labels = matcher.group(3);
      if (matcher.group(2).equals(metric) && labels != null && labels.contains(job)) {
        byState.merge(matcher.group(1), Double.parseDouble(matcher.group(4)), Double::sum);
      }
    }
    return byState;
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
   * Max over min of the second half's one-minute figures, for {@code heap} (after a full
   * collection), {@code state} and {@code checkpointDuration} (each minute's median, durations read
   * as at least {@value #CHECKPOINT_FLOOR_MILLIS} ms), over the samples that have the figure. A
   * series with fewer than two minutes, or a minimum of 0, has no ratio.
   */
  static Map<String, Double> secondHalfRatios(List<Sample> samples) {
    List<Sample> half = secondHalf(samples);
    Map<String, Double> ratios = new LinkedHashMap<>();
    ratio(ratios, "heap", minutes(half, Sample::heapAfterGcBytes, true));
    ratio(ratios, "state", minutes(half, Sample::stateBytes, true));
    ratio(
        ratios,
        "checkpointDuration",
        minutes(
            half,
            s ->
                s.checkpointMillis() < 0
                    ? -1
                    : Math.max(CHECKPOINT_FLOOR_MILLIS, s.checkpointMillis()),
            true));
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
