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
      KafkaFeed.Fed fed,
      int markers,
      int kills,
      int brokerRestarts,
      long jobRestarts,
      Map<String, List<ConsumerRecord<byte[], byte[]>>> committed,
      Map<String, Double> taskManagerMetrics,
      Duration wallTime,
      List<String> log) {}

  private final LocalCluster cluster;
  private final DrillJobs jobs;
  private final PrintStream progress;

  FaultRun(LocalCluster cluster, DrillJobs jobs, PrintStream progress) {
    this.cluster = cluster;
    this.jobs = jobs;
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
      CompletableFuture<KafkaFeed.Fed> feeding =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return KafkaFeed.produce(
                      jobs.clients(), topics.input(), events, KafkaFeed.Mode.MIXED, rate, null);
                } catch (Exception e) {
                  throw new IllegalStateException("feeding " + topics.input() + " failed", e);
                }
              });
      int kills = 0;
      int brokerRestarts = 0;
      int restartsSeen = 0;
      for (FaultPlan.Fault fault : plan.faults()) {
        long wait = started + fault.at().toNanos() - System.nanoTime();
        if (wait > 0) {
          Thread.sleep(wait / 1_000_000);
        }
        // A fault strikes a running job: after the previous one it may still be recovering.
        jobs.awaitFullyRunning(jobId, Duration.ofMinutes(5));
        double second = (System.nanoTime() - started) / 1e9;
        if (fault.kind() == FaultPlan.Kind.KILL_TASK_MANAGER) {
          java.time.Instant killed = java.time.Instant.now();
          List<String> running = new ArrayList<>(jobs.rest().taskManagersOf(jobId));
          if (running.isEmpty()) {
            throw new IllegalStateException("job " + jobId + " reports no TaskManager");
          }
          String victim = running.get((int) Math.floorMod(fault.pick(), (long) running.size()));
          int index = taskManagerIndex(victim);
          long pid = cluster.killTaskManager(index);
          kills++;
          note(
              log,
              String.format(
                  "%.1f s: SIGKILL %s (pid %d), one of %s running the job",
                  second, victim, pid, running));
          cluster.startTaskManager(index);
          awaitRestart(jobId, killed);
          restartsSeen++;
          note(
              log,
              String.format(
                  "%.1f s: job restarted, all tasks running", (System.nanoTime() - started) / 1e9));
        } else {
          cluster.restartBroker();
          brokerRestarts++;
          note(log, String.format("%.1f s: broker restarted", second));
        }
      }
      KafkaFeed.Fed fed;
      try {
        fed = feeding.get();
      } catch (ExecutionException e) {
        throw new IllegalStateException("the feed failed: " + e.getCause().getMessage(), e);
      }
      note(
          log,
          String.format(
              "%.1f s: fed %d records; sending end-of-stream markers",
              (System.nanoTime() - started) / 1e9, fed.records));
      DrillJobs.Finished finished =
          jobs.finish(jobId, options, outputs, fed.records, fed.maxEventTimeMillis, timeout);
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
          fed,
          finished.markers(),
          kills,
          brokerRestarts,
          restarts,
          finished.committed(),
          metrics,
          wall,
          log);
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
