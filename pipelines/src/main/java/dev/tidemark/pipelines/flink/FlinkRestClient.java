package dev.tidemark.pipelines.flink;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * A client of a Flink cluster's REST API (the JobManager's web port, 8081 by default): list jobs,
 * stop one with a savepoint, cancel one, and find the job a submission created. It uses only the
 * JDK's HTTP client and Jackson, no Flink class, so it runs from any Tidemark jar.
 *
 * <pre>{@code
 * FlinkRestClient cluster = FlinkRestClient.of("127.0.0.1:8081");
 * String savepoint = cluster.stopWithSavepoint(jobId, "file:///shared/savepoints", timeout);
 * }</pre>
 *
 * <p>Every failure is a {@link FlinkRestException} whose message names the cluster and what to
 * check: an unreachable master, a job id the cluster does not know, a savepoint that failed there
 * (with Flink's cause).
 */
public final class FlinkRestClient {
  /** The REST address of the local cluster ({@code ./tidemark cluster up}). */
  public static final String DEFAULT_MASTER = "127.0.0.1:8081";

  /** Beam's {@code --flinkMaster} values that run the job in the launcher's own JVM. */
  public static final Set<String> LOCAL_MASTERS = Set.of("[local]", "[auto]", "[collection]");

  private static final Pattern JOB_ID = Pattern.compile("[0-9a-f]{32}");
  private static final Pattern HOST_PORT = Pattern.compile("[^\\s:/]+:[0-9]{1,5}");

  /** Flink's StopWithSavepointStoppingException: the savepoint exists, the stop then failed. */
  private static final Pattern SAVEPOINT_CREATED =
      Pattern.compile("A savepoint has been created at: (\\S+), but the corresponding job");

  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration POLL_INTERVAL = Duration.ofMillis(500);

  private final String master;
  private final URI base;
  private final HttpClient http;

  private FlinkRestClient(String master) {
    this.master = master;
    this.base = URI.create("http://" + master);
    this.http =
        HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(10))
            .version(HttpClient.Version.HTTP_1_1)
            .build();
  }

  /**
   * A client of the cluster whose REST endpoint is {@code flinkMaster}, {@code host:port} as Beam's
   * {@code --flinkMaster} takes it (an {@code http://} prefix is accepted).
   */
  public static FlinkRestClient of(String flinkMaster) {
    return new FlinkRestClient(hostPort(flinkMaster));
  }

  /**
   * Whether {@code --flinkMaster} names a cluster in other processes: not {@link #LOCAL_MASTERS}.
   */
  public static boolean isRemote(@Nullable String flinkMaster) {
    return flinkMaster != null && !LOCAL_MASTERS.contains(flinkMaster.trim());
  }

  /** {@code flinkMaster} as {@code host:port}, or an error that shows the expected form. */
  static String hostPort(String flinkMaster) {
    String master = flinkMaster == null ? "" : flinkMaster.trim();
    if (master.startsWith("http://")) {
      master = master.substring("http://".length());
    }
    if (master.endsWith("/")) {
      master = master.substring(0, master.length() - 1);
    }
    if (!HOST_PORT.matcher(master).matches()) {
      throw new IllegalArgumentException(
          "--flinkMaster="
              + flinkMaster
              + " is not a Flink REST address: give host:port, e.g. --flinkMaster="
              + DEFAULT_MASTER);
    }
    return master;
  }

  /** Refuses a job id that is not Flink's 32 hexadecimal digits (a usage error). */
  public static String checkJobId(String jobId) {
    if (jobId == null || !JOB_ID.matcher(jobId).matches()) {
      throw new IllegalArgumentException(
          "'"
              + jobId
              + "' is not a Flink job id (32 hexadecimal digits); './tidemark job list' shows the"
              + " jobs");
    }
    return jobId;
  }

  /** The cluster's {@code host:port}. */
  public String master() {
    return master;
  }

  /** The web UI's page of the job: the running job's overview (Flink 1.19's dashboard route). */
  public String webUi(String jobId) {
    return base + "/#/job/running/" + jobId + "/overview";
  }

  /** The cluster's jobs, newest first ({@code GET /jobs/overview}). */
  public List<FlinkJob> jobs() throws FlinkRestException {
    List<FlinkJob> jobs = new ArrayList<>();
    for (JsonNode job : get("/jobs/overview").path("jobs")) {
      jobs.add(FlinkJob.fromOverview(job));
    }
    jobs.sort(
        Comparator.comparing(
                (FlinkJob job) -> job.startTime() == null ? 0L : job.startTime().toEpochMilli())
            .reversed());
    return jobs;
  }

  /** The job with this id, or an error naming the cluster when it has none. */
  public FlinkJob job(String jobId) throws FlinkRestException {
    checkJobId(jobId);
    // /jobs/:id answers 404 for an unknown job; the overview gives the same fields as the list.
    get("/jobs/" + jobId);
    return jobs().stream()
        .filter(job -> job.id().equals(jobId))
        .findFirst()
        .orElseThrow(() -> unknownJob(jobId));
  }

  /**
   * How often the job has restarted after failures: the JobManager's {@code numRestarts} job metric
   * ({@code GET /jobs/:id/metrics?get=numRestarts}); 0 before it reports one.
   */
  public long restarts(String jobId) throws FlinkRestException {
    checkJobId(jobId);
    for (JsonNode metric : get("/jobs/" + jobId + "/metrics?get=numRestarts")) {
      if ("numRestarts".equals(metric.path("id").asText())) {
        return metric.path("value").asLong(0);
      }
    }
    return 0;
  }

  /**
   * When the job last began to restart after a failure ({@code timestamps.RESTARTING} of {@code GET
   * /jobs/:id}, from the JobManager's execution graph), or empty if it never did. Unlike {@link
   * #restarts}, a metric the JobManager samples, this changes as soon as the job restarts.
   */
  public Optional<Instant> lastRestart(String jobId) throws FlinkRestException {
    checkJobId(jobId);
    long millis = get("/jobs/" + jobId).path("timestamps").path("RESTARTING").asLong(0);
    return millis > 0 ? Optional.of(Instant.ofEpochMilli(millis)) : Optional.empty();
  }

  /**
   * The resource ids of the TaskManagers that run the job's tasks now (from {@code GET
   * /jobs/:id/vertices/:vertex/taskmanagers} of every vertex), sorted.
   */
  public Set<String> taskManagersOf(String jobId) throws FlinkRestException {
    checkJobId(jobId);
    Set<String> ids = new TreeSet<>();
    for (JsonNode vertex : get("/jobs/" + jobId).path("vertices")) {
      String path = "/jobs/" + jobId + "/vertices/" + vertex.path("id").asText() + "/taskmanagers";
      for (JsonNode taskManager : get(path).path("taskmanagers")) {
        String id = taskManager.path("taskmanager-id").asText("");
        if (!id.isEmpty() && "RUNNING".equals(taskManager.path("status").asText())) {
          ids.add(id);
        }
      }
    }
    return ids;
  }

  /** The ids of the cluster's jobs, ended ones included. */
  public Set<String> jobIds() throws FlinkRestException {
    return jobs().stream().map(FlinkJob::id).collect(Collectors.toCollection(TreeSet::new));
  }

  /**
   * The id of the job a submission just created: the job named {@code name} that was not among
   * {@code before} (the ids listed before submitting). Beam names the job {@code --jobName}, by
   * default unique per launch; excluding the earlier ids keeps a reused name unambiguous.
   */
  public String awaitSubmittedJob(String name, Set<String> before, Duration timeout)
      throws FlinkRestException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      Optional<FlinkJob> found =
          jobs().stream()
              .filter(job -> job.name().equals(name) && !before.contains(job.id()))
              .findFirst();
      if (found.isPresent()) {
        return found.get().id();
      }
      if (System.nanoTime() > deadline) {
        throw new FlinkRestException(
            "the job was submitted, but the Flink cluster at "
                + master
                + " lists no new job named '"
                + name
                + "' after "
                + timeout.toSeconds()
                + " s; './tidemark job list --flinkMaster="
                + master
                + "' shows its jobs");
      }
      sleep(POLL_INTERVAL);
    }
  }

  /**
   * Stops a running job with a savepoint, as {@code flink stop} does: without draining (windows
   * stay open, their state goes into the savepoint), then waits for the savepoint and returns its
   * path. {@code targetDirectory} null uses the cluster's {@code state.savepoints.dir}. When the
   * savepoint completed and the job then failed while stopping, the job has ended and the savepoint
   * is returned: Flink reports it consistent, and resuming from it commits its transactions.
   */
  public String stopWithSavepoint(String jobId, @Nullable String targetDirectory, Duration timeout)
      throws FlinkRestException {
    FlinkJob job = job(jobId);
    if (job.ended()) {
      throw new FlinkRestException(
          "the Flink job " + jobId + " on " + master + " has already ended (" + job.state() + ")");
    }
    ObjectNode body = Json.MAPPER.createObjectNode();
    if (targetDirectory != null) {
      body.put("targetDirectory", targetDirectory);
    }
    body.put("drain", false);
    String trigger =
        send("POST", "/jobs/" + jobId + "/stop", body.toString(), jobId)
            .path("request-id")
            .asText("");
    if (trigger.isEmpty()) {
      throw new FlinkRestException(
          "the Flink cluster at " + master + " did not return a savepoint trigger id");
    }
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      JsonNode status = get("/jobs/" + jobId + "/savepoints/" + trigger);
      if ("COMPLETED".equals(status.path("status").path("id").asText())) {
        JsonNode operation = status.path("operation");
        if (operation.hasNonNull("failure-cause")) {
          java.util.regex.Matcher created =
              SAVEPOINT_CREATED.matcher(
                  operation.get("failure-cause").path("stack-trace").asText());
          if (created.find()) {
            // The savepoint completed and a task failed while the job stopped: Flink calls the
            // savepoint consistent and the way to commit its transactions is to resume from it.
            return created.group(1);
          }
          throw new FlinkRestException(
              "the savepoint of the Flink job "
                  + jobId
                  + " failed, and the job keeps running: "
                  + failure(operation.get("failure-cause")));
        }
        return operation.path("location").asText();
      }
      if (System.nanoTime() > deadline) {
        throw new FlinkRestException(
            "the savepoint of the Flink job "
                + jobId
                + " did not complete within "
                + timeout.toSeconds()
                + " s (trigger "
                + trigger
                + "); see the job's checkpoints in the web UI: "
                + webUi(jobId));
      }
      sleep(POLL_INTERVAL);
    }
  }

  /**
   * Cancels the job if it has not ended yet, for clean-ups that leave no job behind: a job that has
   * ended is left as it is.
   */
  public void cancelIfRunning(String jobId, Duration timeout) throws FlinkRestException {
    if (!job(jobId).ended()) {
      cancel(jobId, timeout);
    }
  }

  /**
   * Cancels a job ({@code PATCH /jobs/:id?mode=cancel}) and waits until it has ended; returns its
   * final state. Its state is not saved: {@link #stopWithSavepoint} stops a job that resumes.
   */
  public String cancel(String jobId, Duration timeout) throws FlinkRestException {
    FlinkJob job = job(jobId);
    if (job.ended()) {
      throw new FlinkRestException(
          "the Flink job " + jobId + " on " + master + " has already ended (" + job.state() + ")");
    }
    send("PATCH", "/jobs/" + jobId + "?mode=cancel", null, jobId);
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      FlinkJob now = job(jobId);
      if (now.ended()) {
        return now.state();
      }
      if (System.nanoTime() > deadline) {
        throw new FlinkRestException(
            "the Flink job "
                + jobId
                + " was asked to cancel but is still "
                + now.state()
                + " after "
                + timeout.toSeconds()
                + " s");
      }
      sleep(POLL_INTERVAL);
    }
  }

  /** A {@code GET} of a REST path (such as {@code /jobs/ID/checkpoints}) as JSON. */
  public JsonNode get(String path) throws FlinkRestException {
    return send("GET", path, null, null);
  }

  private JsonNode send(String method, String path, @Nullable String body, @Nullable String jobId)
      throws FlinkRestException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(base.resolve(path))
            .timeout(REQUEST_TIMEOUT)
            .header("Accept", "application/json");
    if (body != null) {
      request
          .header("Content-Type", "application/json")
          .method(method, HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
    } else {
      request.method(method, HttpRequest.BodyPublishers.noBody());
    }
    HttpResponse<String> response;
    try {
      response =
          http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new FlinkRestException(
          "cannot reach the Flink cluster at http://"
              + master
              + " ("
              + e
              + "): is it running ('./tidemark cluster status')? Point at another one with"
              + " --flinkMaster=host:port",
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FlinkRestException("interrupted while calling the Flink cluster at " + master, e);
    }
    int status = response.statusCode();
    if (status == 404 && jobId != null) {
      throw unknownJob(jobId);
    }
    if (status == 404 && path.startsWith("/jobs/") && !path.startsWith("/jobs/overview")) {
      throw unknownJob(path.substring("/jobs/".length()).split("[/?]")[0]);
    }
    if (status / 100 != 2) {
      throw new FlinkRestException(
          "the Flink cluster at "
              + master
              + " answered "
              + method
              + " "
              + path
              + " with HTTP "
              + status
              + errors(response.body()));
    }
    String text = response.body();
    if (text == null || text.isBlank()) {
      return Json.MAPPER.createObjectNode();
    }
    try {
      return Json.MAPPER.readTree(text);
    } catch (IOException e) {
      throw new FlinkRestException(
          "the Flink cluster at " + master + " answered " + method + " " + path + " with non-JSON",
          e);
    }
  }

  private FlinkRestException unknownJob(String jobId) {
    return new FlinkRestException(
        "the Flink cluster at "
            + master
            + " has no job "
            + jobId
            + "; './tidemark job list --flinkMaster="
            + master
            + "' shows its jobs");
  }

  /** Flink's {@code {"errors": [...]}} body, as ": first error", or nothing. */
  private static String errors(@Nullable String body) {
    if (body == null || body.isBlank()) {
      return "";
    }
    try {
      JsonNode errors = Json.MAPPER.readTree(body).path("errors");
      if (errors.isArray() && errors.size() > 0) {
        return ": " + firstLine(errors.get(0).asText());
      }
    } catch (IOException e) {
      // Not Flink's error format: show the start of the body instead.
    }
    return ": " + firstLine(body);
  }

  /**
   * A savepoint's {@code failure-cause}: the exception's first line and, when there is one, the
   * innermost {@code Caused by:} line of its stack trace.
   */
  static String failure(JsonNode cause) {
    String trace = cause.path("stack-trace").asText("");
    if (trace.isEmpty()) {
      return cause.path("class").asText("unknown failure");
    }
    String first = firstLine(trace);
    String root = null;
    for (String line : trace.split("\\R")) {
      if (line.startsWith("Caused by: ")) {
        root = line.substring("Caused by: ".length()).trim();
      }
    }
    return root == null || root.equals(first) ? first : first + " (caused by " + root + ")";
  }

  private static String firstLine(String text) {
    String line = text.strip().split("\\R", 2)[0];
    return line.length() > 500 ? line.substring(0, 500) + "..." : line;
  }

  private static void sleep(Duration duration) throws FlinkRestException {
    try {
      Thread.sleep(duration.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FlinkRestException("interrupted while waiting for the Flink cluster", e);
    }
  }
}
