package dev.tidemark.drill;

import dev.tidemark.cluster.LocalCluster;
import dev.tidemark.launcher.KafkaFeed;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.pipelines.TidemarkOptions;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * One sink mode's fault run: the job is submitted, the input is fed at a fixed rate while the
 * {@link FaultPlan} kills TaskManagers that run the job's tasks (each started again at once) and
 * restarts the broker; then end-of-stream markers flush every window, and the drill waits until the
 * committed outputs stop changing.
 */
final class FaultRun {
  /** What happened: the committed outputs and what the run did to get them. */
  record Outcome(
      long fed,
      int markers,
      int kills,
      int brokerRestarts,
      int brokerKills,
      int jobManagerKills,
      long jobRestarts,
      Map<String, List<ConsumerRecord<byte[], byte[]>>> committed,
      boolean settled,
      Map<String, Double> taskManagerMetrics,
      Duration wallTime,
      List<String> log,
      List<Struck> faults) {
    /** The most event time a fault left behind its job's source: see {@link Struck}. */
    long largestBacklogMillis() {
      return faults.stream().mapToLong(Struck::backlogEventMillis).max().orElse(0);
    }
  }

  /**
   * One fault as it struck.
   *
   * @param kind what it did
   * @param atSeconds when, from the start of the feed
   * @param target the process it struck
   * @param toFeed input records not yet produced when it struck
   * @param pending records produced but not yet committed by the job's source (its consumer group's
   *     offsets, committed at each completed checkpoint): what a restore reads again
   * @param counts whether it hit pending work ({@code toFeed + pending > 0}); one that did not is
   *     listed but not counted toward the requested faults
   * @param recoverySeconds from the fault until the job ran every task again (a broker fault: until
   *     the broker was back)
   * @param backlogEventMillis the event time between the source's committed position when the fault
   *     struck and the feed's position when the job ran again: how far the restored job's watermark
   *     may trail the reference's while it reads that backlog
   */
  record Struck(
      FaultPlan.Kind kind,
      double atSeconds,
      String target,
      long toFeed,
      long pending,
      boolean counts,
      double recoverySeconds,
      long backlogEventMillis) {
    Map<String, Object> toMap() {
      Map<String, Object> map = new java.util.LinkedHashMap<>();
      map.put("kind", kind.toString());
      map.put("atSeconds", Math.round(atSeconds * 10) / 10.0);
      map.put("target", target);
      map.put("inputToFeed", toFeed);
      map.put("fedNotCommitted", pending);
      map.put("countsTowardFaults", counts);
      map.put("recoverySeconds", Math.round(recoverySeconds * 10) / 10.0);
      map.put("backlogEventSeconds", backlogEventMillis / 1000.0);
      return map;
    }
  }

  private final LocalCluster cluster;
  private final DrillJobs jobs;
  private final PrintStream progress;

  private final Recomputation input;
  private final @Nullable String dropCommitted;

  /**
   * @param input the fed input, read: it maps a position in the feed to its event time
   * @param dropCommitted a test hook: the output ({@code decisions}, {@code dead-letters}, ...) of
   *     which the drill forgets its first committed record before comparing, as if the sink had
   *     lost it; null in every real drill
   */
  FaultRun(
      LocalCluster cluster,
      DrillJobs jobs,
      Recomputation input,
      @Nullable String dropCommitted,
      PrintStream progress) {
    this.cluster = cluster;
    this.jobs = jobs;
    this.input = input;
    this.dropCommitted = dropCommitted;
    this.progress = progress;
  }

  Outcome run(
      String prefix,
      KafkaOptions.KafkaSinkMode sink,
      Path events,
      double rate,
      FaultPlan plan,
      Path output,
      Duration timeout)
      throws Exception {
    DrillJobs.Topics topics = new DrillJobs.Topics(prefix);
    TidemarkOptions options =
        jobs.options(topics, output.resolve("job"), List.of(DrillJobs.sinkMode(sink)));
    Map<String, String> outputs = jobs.createTopics(options, 2);
    List<String> log = new ArrayList<>();
    String jobId = null;
    try {
      jobId = jobs.submit(options, null);
      note(log, "submitted job " + jobId + " (" + sink + " sink): " + jobs.rest().webUi(jobId));
      long started = System.nanoTime();
      // The input in parts, cut where the plan's faults fall: each fault strikes as the part after
      // it starts to be fed (never after the feed), once the job has recovered from the one before;
      // the feed waits for that recovery only when it outlasts a whole part.
      List<Double> cuts = new ArrayList<>();
      double feedMillis = Math.max(1, input.records() * 1000.0 / Math.max(rate, 1e-9));
      for (FaultPlan.Fault fault : plan.faults()) {
        cuts.add(Math.min(1.0, fault.at().toMillis() / feedMillis));
      }
      List<Path> parts = SavepointSteps.splitAt(events, output.resolve("feed"), cuts);
      int kills = 0;
      int brokerRestarts = 0;
      int brokerKills = 0;
      int jobManagerKills = 0;
      int restartsSeen = 0;
      List<Struck> struck = new ArrayList<>();
      long fedRecords = 0;
      long maxEventTime = 0;
      Long clock = null;
      for (int part = 0; part < parts.size(); part++) {
        if (part > 0) {
          // A fault strikes a running job: after the previous one it may still be recovering.
          awaitJobBack(jobId, -1);
        }
        Path file = parts.get(part);
        Long startClock = clock;
        CompletableFuture<KafkaFeed.Fed> feeding =
            CompletableFuture.supplyAsync(
                () -> {
                  try {
                    return KafkaFeed.produce(
                        jobs.clients(),
                        topics.input(),
                        file,
                        KafkaFeed.Mode.MIXED,
                        rate,
                        startClock);
                  } catch (Exception e) {
                    throw new IllegalStateException("feeding " + topics.input() + " failed", e);
                  }
                });
        if (part > 0) {
          FaultPlan.Fault fault = plan.faults().get(part - 1);
          DrillJobs.InputPosition before = jobs.inputPosition(options);
          long toFeed = Math.max(0, input.records() - before.produced());
          boolean counts = toFeed + before.pending() > 0;
          long strikeNanos = System.nanoTime();
          double second = (strikeNanos - started) / 1e9;
          String target;
          if (fault.kind() == FaultPlan.Kind.KILL_TASK_MANAGER) {
            java.time.Instant killed = java.time.Instant.now();
            List<String> running = new ArrayList<>(jobs.rest().taskManagersOf(jobId));
            if (running.isEmpty()) {
              throw new IllegalStateException("job " + jobId + " reports no TaskManager");
            }
            target = running.get((int) Math.floorMod(fault.pick(), (long) running.size()));
            int index = taskManagerIndex(target);
            long pid = cluster.killTaskManager(index);
            kills += counts ? 1 : 0;
            note(
                log,
                String.format(
                    "%.1f s: SIGKILL %s (pid %d), one of %s running the job; %d records to feed,"
                        + " %d fed and not committed",
                    second, target, pid, running, toFeed, before.pending()));
            cluster.startTaskManager(index);
            awaitRestart(jobId, killed);
            restartsSeen++;
          } else if (fault.kind() == FaultPlan.Kind.KILL_BROKER) {
            String decisions = outputs.get("decisions");
            List<Integer> open = awaitOpenTransaction(decisions);
            Map<Integer, Integer> leaders = jobs.leaders(decisions);
            List<Integer> candidates = open.isEmpty() ? new ArrayList<>(leaders.keySet()) : open;
            int partition =
                candidates.get((int) Math.floorMod(fault.pick(), (long) candidates.size()));
            int broker = leaders.get(partition);
            target = LocalCluster.broker(broker);
            long pid = cluster.killBroker(broker);
            brokerKills += counts ? 1 : 0;
            note(
                log,
                String.format(
                    "%.1f s: SIGKILL %s (pid %d), leader of %s partition %d%s; %d records to feed,"
                        + " %d fed and not committed",
                    second,
                    target,
                    pid,
                    decisions,
                    partition,
                    open.contains(partition) ? " with a transaction open" : "",
                    toFeed,
                    before.pending()));
            if (cluster.settings().brokers() > 1) {
              // The others take over its partitions; it comes back once they have.
              awaitLeadersWithout(decisions, broker);
              note(
                  log,
                  String.format(
                      "%.1f s: %s leads no partition of %s; starting it again",
                      (System.nanoTime() - started) / 1e9, target, decisions));
            }
            cluster.startBrokerAndWait(broker);
            awaitJobBack(jobId, -1);
          } else if (fault.kind() == FaultPlan.Kind.KILL_JOB_MANAGER) {
            int leader = cluster.awaitLeadingJobManager(Duration.ofMinutes(1));
            target = LocalCluster.jobManager(leader);
            long completed = latestCheckpoint(jobId);
            long pid = cluster.killJobManager(leader);
            jobManagerKills += counts ? 1 : 0;
            note(
                log,
                String.format(
                    "%.1f s: SIGKILL %s (pid %d), the leading JobManager, after checkpoint %d; %d"
                        + " records to feed, %d fed and not committed",
                    second, target, pid, completed, toFeed, before.pending()));
            int next = awaitJobBack(jobId, leader);
            note(
                log,
                String.format(
                    "%.1f s: %s leads; the job restored checkpoint %s",
                    (System.nanoTime() - started) / 1e9,
                    LocalCluster.jobManager(next),
                    restoredCheckpoint(jobId)));
            cluster.startJobManagerAgain(leader);
          } else {
            target = "kafka";
            cluster.restartBroker();
            brokerRestarts += counts ? 1 : 0;
            note(
                log,
                String.format(
                    "%.1f s: broker restarted; %d records to feed, %d fed and not committed",
                    second, toFeed, before.pending()));
            jobs.awaitFullyRunning(jobId, Duration.ofMinutes(5));
          }
          DrillJobs.InputPosition after = jobs.inputPosition(options);
          double recovery = (System.nanoTime() - strikeNanos) / 1e9;
          // From the source's committed position (the first record when nothing is committed yet)
          // to the feed's position when the job ran again.
          long from = input.eventTimeAfter(Math.max(1, before.produced() - before.pending()));
          long to = input.eventTimeAfter(after.produced());
          long backlog =
              from == Long.MIN_VALUE || to == Long.MIN_VALUE ? 0 : Math.max(0, to - from);
          Struck one =
              new Struck(
                  fault.kind(),
                  second,
                  target,
                  toFeed,
                  before.pending(),
                  counts,
                  recovery,
                  backlog);
          struck.add(one);
          note(
              log,
              String.format(
                  "%.1f s: job runs every task again, %.1f s after the fault%s",
                  (System.nanoTime() - started) / 1e9,
                  recovery,
                  counts ? "" : "; the fault hit no pending work and does not count"));
        }
        KafkaFeed.Fed fed;
        try {
          fed = feeding.get();
        } catch (ExecutionException e) {
          throw new IllegalStateException("the feed failed: " + e.getCause().getMessage(), e);
        }
        fedRecords += fed.records;
        maxEventTime = Math.max(maxEventTime, fed.maxEventTimeMillis);
        clock = fed.clockMillis != null ? fed.clockMillis : clock;
      }
      note(
          log,
          String.format(
              "%.1f s: fed %d records; sending end-of-stream markers",
              (System.nanoTime() - started) / 1e9, fedRecords));
      DrillJobs.Finished finished =
          jobs.finish(jobId, options, outputs, fedRecords, maxEventTime, timeout);
      if (finished.restoreLoop() != null) {
        note(log, finished.restoreLoop());
      }
      Map<String, List<ConsumerRecord<byte[], byte[]>>> committed =
          dropFirst(finished.committed(), dropCommitted, log);
      Duration wall = Duration.ofNanos(System.nanoTime() - started);
      // Flink's count, or the restarts the drill saw if the sampled metric is behind.
      long restarts = Math.max(jobs.rest().restarts(jobId), restartsSeen);
      note(
          log,
          String.format("%.1f s: outputs quiet; %d job restarts", wall.toMillis() / 1e3, restarts));
      // What the TaskManagers' Prometheus endpoints report while the job still runs.
      List<Integer> ports = new ArrayList<>();
      for (int i = 0; i < cluster.settings().taskManagers(); i++) {
        ports.add(cluster.settings().taskManagerPrometheusPort(i));
      }
      Map<String, Double> metrics = TaskManagerMetrics.scrape(ports, jobId);
      return new Outcome(
          fedRecords,
          finished.markers(),
          kills,
          brokerRestarts,
          brokerKills,
          jobManagerKills,
          restarts,
          committed,
          finished.settled(),
          metrics,
          wall,
          log,
          struck);
    } finally {
      jobs.cancelQuietly(jobId);
    }
  }

  /**
   * Waits until the job has begun a restart after {@code killed} and runs every task again. The
   * restart is read from the job's state timestamps: the {@code numRestarts} metric can lag behind
   * by minutes after a TaskManager is lost.
   */
  private void awaitRestart(String jobId, java.time.Instant killed) throws Exception {
    long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
    while (jobs.rest().lastRestart(jobId).filter(restart -> !restart.isBefore(killed)).isEmpty()) {
      jobs.checkRunning(jobId);
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "job " + jobId + " did not restart within 5 minutes of a TaskManager kill");
      }
      Thread.sleep(500);
    }
    jobs.awaitFullyRunning(jobId, Duration.ofMinutes(5));
  }

  /**
   * The test hook: {@code committed} without the first record of output {@code output} (unchanged
   * when {@code output} is null). The first, not the last: a decision's last edition can repeat the
   * one before it (an on-time pane that adds nothing to the last early one), and losing it changes
   * no reader's state; the first committed edition is a version 0, missed below a later version or
   * as the window's only state.
   */
  static Map<String, List<ConsumerRecord<byte[], byte[]>>> dropFirst(
      Map<String, List<ConsumerRecord<byte[], byte[]>>> committed,
      @Nullable String output,
      List<String> log) {
    if (output == null) {
      return committed;
    }
    List<ConsumerRecord<byte[], byte[]>> records = committed.get(output);
    if (records == null || records.isEmpty()) {
      throw new IllegalArgumentException(
          "test hook: no committed record of output '" + output + "' to drop");
    }
    Map<String, List<ConsumerRecord<byte[], byte[]>>> dropped = new java.util.LinkedHashMap<>();
    committed.forEach((name, list) -> dropped.put(name, list));
    dropped.put(output, records.subList(1, records.size()));
    log.add("test hook: dropped the first committed record of " + output);
    return dropped;
  }

  /**
   * The partitions of {@code topic} with a transaction open, waited for up to 30 s (a transactional
   * sink opens one after each commit); empty when none opened (the idempotent sink writes none).
   */
  private List<Integer> awaitOpenTransaction(String topic) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      List<Integer> open = jobs.openTransactions(topic);
      if (!open.isEmpty() || System.nanoTime() > deadline) {
        return open;
      }
      Thread.sleep(100);
    }
  }

  /** Waits until broker {@code broker} leads no partition of {@code topic}. */
  private void awaitLeadersWithout(String topic, int broker) throws Exception {
    long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
    while (jobs.leaders(topic).containsValue(broker)) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "broker "
                + broker
                + " still leads a partition of "
                + topic
                + " 2 minutes after its kill");
      }
      Thread.sleep(250);
    }
  }

  /**
   * Waits until a JobManager other than {@code killed} (-1: any) leads and the job runs every task
   * again, through whichever REST endpoint answers; returns the leader's index.
   */
  private int awaitJobBack(String jobId, int killed) throws Exception {
    long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
    Exception last = null;
    while (System.nanoTime() < deadline) {
      try {
        java.util.Optional<Integer> leader =
            cluster.settings().highAvailability()
                ? cluster.leadingJobManager()
                : java.util.Optional.of(0);
        if (leader.isPresent() && leader.get() != killed) {
          dev.tidemark.pipelines.flink.FlinkJob job = jobs.rest().job(jobId);
          if (job.fullyRunning()) {
            return leader.get();
          }
          jobs.checkRunning(jobId);
        }
      } catch (dev.tidemark.pipelines.flink.FlinkRestException e) {
        last = e;
      }
      Thread.sleep(500);
    }
    throw new IllegalStateException(
        "job " + jobId + " did not run every task again within 5 minutes: " + last, last);
  }

  private long latestCheckpoint(String jobId) {
    try {
      return jobs.rest()
          .get("/jobs/" + jobId + "/checkpoints")
          .path("latest")
          .path("completed")
          .path("id")
          .asLong(-1);
    } catch (dev.tidemark.pipelines.flink.FlinkRestException e) {
      return -1;
    }
  }

  private String restoredCheckpoint(String jobId) {
    try {
      com.fasterxml.jackson.databind.JsonNode restored =
          jobs.rest().get("/jobs/" + jobId + "/checkpoints").path("latest").path("restored");
      return restored.isMissingNode() || restored.isNull()
          ? "(none reported)"
          : restored.path("id").asText() + " (" + restored.path("external_path").asText() + ")";
    } catch (dev.tidemark.pipelines.flink.FlinkRestException e) {
      return "(unknown: " + e.getMessage() + ")";
    }
  }

  /** {@code taskmanager-N} to N. */
  static int taskManagerIndex(String resourceId) {
    if (!resourceId.startsWith(LocalCluster.TASK_MANAGER_PREFIX)) {
      throw new IllegalStateException(
          "TaskManager " + resourceId + " is not one of the local cluster's");
    }
    return Integer.parseInt(resourceId.substring(LocalCluster.TASK_MANAGER_PREFIX.length()));
  }

  private void note(List<String> log, @Nullable String line) {
    log.add(line);
    progress.println("drill: " + line);
  }
}
