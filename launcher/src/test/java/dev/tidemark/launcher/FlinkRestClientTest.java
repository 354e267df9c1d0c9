package dev.tidemark.launcher;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.tidemark.pipelines.flink.ClusterPaths;
import dev.tidemark.pipelines.flink.FlinkJob;
import dev.tidemark.pipelines.flink.FlinkRestClient;
import dev.tidemark.pipelines.flink.FlinkRestException;
import dev.tidemark.pipelines.launch.ExitCodes;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * {@link FlinkRestClient} and the {@code job} commands against a tiny HTTP server on a loopback
 * port that answers as Flink's REST API does: listing, stop with a savepoint, cancel, and the error
 * paths (an unreachable master, an unknown job, a failed savepoint, a malformed id).
 */
@RunWith(JUnit4.class)
public class FlinkRestClientTest {
  private static final String RUNNING = "0123456789abcdef0123456789abcdef";
  private static final String FINISHED = "fedcba9876543210fedcba9876543210";
  private static final String UNKNOWN = "00000000000000000000000000000000";

  private HttpServer server;
  private String master;
  private final List<String> requests = new CopyOnWriteArrayList<>();
  private final Map<String, String> jobStates = new ConcurrentHashMap<>();
  private volatile String savepointOutcome = "COMPLETED";

  @Before
  public void startFakeFlink() throws IOException {
    jobStates.put(RUNNING, "RUNNING");
    jobStates.put(FINISHED, "FINISHED");
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", this::answer);
    server.start();
    master = "127.0.0.1:" + server.getAddress().getPort();
  }

  @After
  public void stopFakeFlink() {
    server.stop(0);
  }

  private void answer(HttpExchange exchange) throws IOException {
    String method = exchange.getRequestMethod();
    String path = exchange.getRequestURI().toString();
    String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    requests.add(method + " " + path + (body.isEmpty() ? "" : " " + body));
    if (path.equals("/jobs/overview")) {
      StringBuilder jobs = new StringBuilder();
      for (Map.Entry<String, String> job : jobStates.entrySet()) {
        jobs.append(jobs.length() == 0 ? "" : ",")
            .append(
                String.format(
                    "{\"jid\":\"%s\",\"name\":\"tidemark-%s\",\"state\":\"%s\","
                        + "\"start-time\":%d,\"end-time\":-1,\"duration\":%d,"
                        + "\"tasks\":{\"total\":4,\"running\":%d}}",
                    job.getKey(),
                    job.getKey().substring(0, 4),
                    job.getValue(),
                    job.getKey().equals(RUNNING) ? 1_780_000_000_000L : 1_770_000_000_000L,
                    3_725_000L,
                    job.getValue().equals("RUNNING") ? 4 : 0));
      }
      reply(exchange, 200, "{\"jobs\":[" + jobs + "]}");
      return;
    }
    String[] parts = path.split("[/?]");
    String id = parts.length > 2 ? parts[2] : "";
    if (!jobStates.containsKey(id)) {
      reply(exchange, 404, "{\"errors\":[\"Job " + id + " not found\"]}");
      return;
    }
    if (method.equals("GET") && path.equals("/jobs/" + id)) {
      // The running job restarted once; the finished one never did (Flink reports 0, or nothing).
      String restarting = id.equals(RUNNING) ? "\"RESTARTING\":1780000060000" : "\"RESTARTING\":0";
      reply(
          exchange,
          200,
          "{\"jid\":\""
              + id
              + "\",\"state\":\""
              + jobStates.get(id)
              + "\",\"timestamps\":{\"CREATED\":1780000000000,"
              + restarting
              + "}}");
    } else if (method.equals("POST") && path.equals("/jobs/" + id + "/stop")) {
      reply(exchange, 202, "{\"request-id\":\"trigger-1\"}");
    } else if (method.equals("GET") && path.equals("/jobs/" + id + "/savepoints/trigger-1")) {
      if (savepointOutcome.equals("COMPLETED")) {
        jobStates.put(id, "FINISHED");
        reply(
            exchange,
            200,
            "{\"status\":{\"id\":\"COMPLETED\"},"
                + "\"operation\":{\"location\":\"file:/savepoints/savepoint-0123-abc\"}}");
      } else if (savepointOutcome.equals("FAILED_WHILE_STOPPING")) {
        jobStates.put(id, "FAILED");
        reply(
            exchange,
            200,
            "{\"status\":{\"id\":\"COMPLETED\"},\"operation\":{\"failure-cause\":{\"class\":"
                + "\"java.util.concurrent.CompletionException\",\"stack-trace\":"
                + "\"java.util.concurrent.CompletionException: org.apache.flink.runtime.scheduler."
                + "stopwithsavepoint.StopWithSavepointStoppingException: A savepoint has been"
                + " created at: file:/savepoints/savepoint-0123-def, but the corresponding job "
                + id
                + " failed during stopping. The savepoint is consistent, but might have"
                + " uncommitted transactions.\\n\\tat x.y(Z)\"}}}");
      } else {
        reply(
            exchange,
            200,
            "{\"status\":{\"id\":\"COMPLETED\"},\"operation\":{\"failure-cause\":{\"class\":"
                + "\"java.util.concurrent.CompletionException\",\"stack-trace\":"
                + "\"java.util.concurrent.CompletionException: savepoint failed\\n\\tat x.y(Z)\\n"
                + "Caused by: java.io.IOException: No space left on device\\n\\tat a.b(C)\"}}}");
      }
    } else if (method.equals("PATCH") && path.equals("/jobs/" + id + "?mode=cancel")) {
      jobStates.put(id, "CANCELED");
      reply(exchange, 202, "{}");
    } else {
      reply(exchange, 400, "{\"errors\":[\"Not found: " + path + "\"]}");
    }
  }

  private static void reply(HttpExchange exchange, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Test
  public void listsJobsNewestFirst() throws Exception {
    List<FlinkJob> jobs = FlinkRestClient.of(master).jobs();
    assertThat(jobs.size(), is(2));
    assertThat(jobs.get(0).id(), is(RUNNING));
    assertThat(jobs.get(0).fullyRunning(), is(true));
    assertThat(jobs.get(1).ended(), is(true));
    assertThat(jobs.get(0).duration(), is(Duration.ofMillis(3_725_000L)));
  }

  @Test
  public void stopsWithASavepointAndReturnsItsPath() throws Exception {
    String location =
        FlinkRestClient.of("http://" + master + "/")
            .stopWithSavepoint(RUNNING, "file:///savepoints", Duration.ofSeconds(10));
    assertThat(location, is("file:/savepoints/savepoint-0123-abc"));
    assertThat(
        requests,
        org.hamcrest.Matchers.hasItem(
            "POST /jobs/"
                + RUNNING
                + "/stop {\"targetDirectory\":\"file:///savepoints\",\"drain\":false}"));
  }

  @Test
  public void aFailedSavepointIsAnErrorWithFlinksCause() {
    savepointOutcome = "FAILED";
    FlinkRestException failed =
        assertThrows(
            FlinkRestException.class,
            () ->
                FlinkRestClient.of(master)
                    .stopWithSavepoint(RUNNING, null, Duration.ofSeconds(10)));
    assertThat(failed.getMessage(), containsString("savepoint failed"));
    assertThat(failed.getMessage(), containsString("No space left on device"));
  }

  @Test
  public void aSavepointCreatedBeforeTheJobFailedWhileStoppingIsReturned() throws Exception {
    savepointOutcome = "FAILED_WHILE_STOPPING";
    String location =
        FlinkRestClient.of(master).stopWithSavepoint(RUNNING, null, Duration.ofSeconds(10));
    assertThat(location, is("file:/savepoints/savepoint-0123-def"));
  }

  @Test
  public void theLastRestartComesFromTheJobsStateTimestamps() throws Exception {
    FlinkRestClient client = FlinkRestClient.of(master);
    assertThat(
        client.lastRestart(RUNNING),
        is(java.util.Optional.of(java.time.Instant.ofEpochMilli(1_780_000_060_000L))));
    assertThat(client.lastRestart(FINISHED), is(java.util.Optional.empty()));
  }

  @Test
  public void anUnknownJobIsAnErrorNamingTheClusterAndTheList() {
    FlinkRestException unknown =
        assertThrows(
            FlinkRestException.class,
            () -> FlinkRestClient.of(master).cancel(UNKNOWN, Duration.ofSeconds(10)));
    assertThat(unknown.getMessage(), containsString("has no job " + UNKNOWN));
    assertThat(unknown.getMessage(), containsString("job list --flinkMaster=" + master));
  }

  @Test
  public void anEndedJobCannotBeStoppedOrCancelled() {
    FlinkRestException ended =
        assertThrows(
            FlinkRestException.class,
            () -> FlinkRestClient.of(master).cancel(FINISHED, Duration.ofSeconds(10)));
    assertThat(ended.getMessage(), containsString("has already ended (FINISHED)"));
  }

  @Test
  public void anUnreachableMasterIsAnErrorThatSaysSo() throws Exception {
    int closed;
    try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      closed = socket.getLocalPort();
    }
    FlinkRestException unreachable =
        assertThrows(
            FlinkRestException.class, () -> FlinkRestClient.of("127.0.0.1:" + closed).jobs());
    assertThat(unreachable.getMessage(), containsString("cannot reach the Flink cluster"));
    assertThat(unreachable.getMessage(), containsString("--flinkMaster=host:port"));
  }

  @Test
  public void findsTheJobASubmissionCreated() throws Exception {
    FlinkRestClient client = FlinkRestClient.of(master);
    assertThat(
        client.awaitSubmittedJob("tidemark-0123", Set.of(), Duration.ofSeconds(5)), is(RUNNING));
    FlinkRestException none =
        assertThrows(
            FlinkRestException.class,
            () -> client.awaitSubmittedJob("tidemark-0123", Set.of(RUNNING), Duration.ZERO));
    assertThat(none.getMessage(), containsString("lists no new job named 'tidemark-0123'"));
  }

  @Test
  public void malformedAddressesAndIdsAreUsageErrors() {
    assertThrows(IllegalArgumentException.class, () -> FlinkRestClient.of("jobmanager"));
    assertThrows(IllegalArgumentException.class, () -> FlinkRestClient.checkJobId("abc"));
    assertThat(FlinkRestClient.isRemote("[local]"), is(false));
    assertThat(FlinkRestClient.isRemote("[auto]"), is(false));
    assertThat(FlinkRestClient.isRemote("127.0.0.1:8081"), is(true));
  }

  @Test
  public void clusterPathsAreAbsoluteAndLauncherLocalOnesAreRecognised() {
    assertThat(ClusterPaths.isLauncherLocal("file:///tmp/cp"), is(true));
    assertThat(ClusterPaths.isLauncherLocal("/tmp/cp"), is(true));
    assertThat(ClusterPaths.isLauncherLocal("relative dir/cp"), is(true));
    assertThat(ClusterPaths.isLauncherLocal("s3://bucket/cp"), is(false));
    assertThat(ClusterPaths.forCluster("s3://bucket/sp"), is("s3://bucket/sp"));
    assertThat(
        ClusterPaths.forCluster("sp"),
        is(Paths.get("sp").toAbsolutePath().normalize().toUri().toString()));
    assertThat(
        ClusterPaths.toLocalPath("file:/savepoints/savepoint-1"),
        is(Paths.get("/savepoints/savepoint-1")));
  }

  @Test
  public void theJobCommandsExitWithTheDocumentedCodes() {
    CliRun list = CliRun.of("job", "list", "--flinkMaster=" + master);
    assertThat(list.exit, is(ExitCodes.DONE));
    assertThat(list.out, containsString(RUNNING + "  RUNNING"));
    assertThat(list.out, containsString("1h02m05s"));

    CliRun stop =
        CliRun.of("job", "stop", RUNNING, "--savepoint=s3://b/sp", "--flinkMaster=" + master);
    assertThat(stop.exit, is(ExitCodes.DONE));
    assertThat(stop.out, containsString("file:/savepoints/savepoint-0123-abc"));

    CliRun unknown = CliRun.of("job", "cancel", UNKNOWN, "--flinkMaster=" + master);
    assertThat(unknown.exit, is(ExitCodes.RUN_FAILED));
    assertThat(unknown.err, containsString("has no job " + UNKNOWN));

    assertThat(CliRun.of("job", "cancel", "not-a-job", "--flinkMaster=" + master).exit, is(2));
    assertThat(CliRun.of("job", "stop").exit, is(ExitCodes.USAGE_ERROR));
    assertThat(CliRun.of("job", "list", "--flinkMaster=nonsense").exit, is(ExitCodes.USAGE_ERROR));
    assertThat(CliRun.of("job").exit, is(ExitCodes.USAGE_ERROR));
    CliRun help = CliRun.of("job", "stop", "--help");
    assertThat(help.exit, is(ExitCodes.DONE));
    assertThat(help.out, containsString("Exit codes:"));
  }
}
