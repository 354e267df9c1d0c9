package dev.tidemark.pipelines.flink;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * One job as Flink's REST API lists it ({@code GET /jobs/overview}): its id, name, state, start
 * time, duration, and how many of its tasks run.
 *
 * @param id the 32-hex-digit job id
 * @param name the job name; for a Beam job, {@code --jobName}
 * @param state Flink's job status: {@code RUNNING}, {@code FINISHED}, {@code CANCELED}, ...
 * @param startTime when the JobManager accepted it, or null before it started
 * @param duration how long it has run (or ran)
 * @param tasks the job's tasks
 * @param runningTasks how many of them run now
 */
public record FlinkJob(
    String id,
    String name,
    String state,
    @Nullable Instant startTime,
    Duration duration,
    int tasks,
    int runningTasks) {

  /** The states after which a job does nothing more (Flink's globally terminal states). */
  public static final Set<String> TERMINAL_STATES = Set.of("FINISHED", "CANCELED", "FAILED");

  /** Whether the job has ended for good. */
  public boolean ended() {
    return TERMINAL_STATES.contains(state);
  }

  /** Whether the job runs with every task running: a savepoint can be taken. */
  public boolean fullyRunning() {
    return "RUNNING".equals(state) && tasks > 0 && runningTasks == tasks;
  }

  /** A job of {@code GET /jobs/overview}'s {@code jobs} array. */
  static FlinkJob fromOverview(JsonNode job) {
    long start = job.path("start-time").asLong(-1);
    JsonNode tasks = job.path("tasks");
    return new FlinkJob(
        job.path("jid").asText(),
        job.path("name").asText(),
        job.path("state").asText(),
        start > 0 ? Instant.ofEpochMilli(start) : null,
        Duration.ofMillis(Math.max(0, job.path("duration").asLong(0))),
        tasks.path("total").asInt(0),
        tasks.path("running").asInt(0));
  }
}
