package dev.tidemark.launcher.it;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

import dev.tidemark.launcher.CliRun;
import dev.tidemark.launcher.KafkaFeed;
import dev.tidemark.launcher.LiveRun;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.flink.ClusterPaths;
import dev.tidemark.pipelines.flink.FlinkJob;
import dev.tidemark.pipelines.flink.FlinkRestClient;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.launch.ExitCodes;
import dev.tidemark.testkit.EmbeddedKafka;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Submission like production, against a Flink cluster reached only through its REST port: a
 * MiniCluster in this JVM stands in for the cluster (REST on a free loopback port, checkpoints and
 * savepoints in directories it owns, as a cluster's configuration sets them), with a Kafka broker
 * in this JVM. {@code ./tidemark run --profile=flink-cluster} submits the Flink job jar through
 * Beam's remote path and returns with the job id; {@code job list} shows it running; {@code job
 * stop --savepoint} stops it with a savepoint; {@code run --fromSavepoint} resumes it as a new job
 * restored from that savepoint; {@code job cancel} ends it.
 */
@RunWith(JUnit4.class)
public class FlinkClusterSubmissionIT {
  @ClassRule public static final TemporaryFolder TEMP = new TemporaryFolder();

  private static final Pattern SUBMITTED = Pattern.compile("Submitted Flink job ([0-9a-f]{32})");

  private static EmbeddedKafka broker;
  private static MiniCluster cluster;
  private static String master;

  @BeforeClass
  public static void startBrokerAndCluster() throws Exception {
    broker = EmbeddedKafka.start();
    Configuration configuration = new Configuration();
    // A cluster's class path has Flink only, and the job's classes come from the uploaded jar. This
    // JVM's class path also has every class of the job and of the broker (jackson-module-scala):
    // child-first loading would mix two copies of Jackson and Beam, and ServiceLoader fails ("
    // DefaultScalaModule not a subtype"). So the stand-in resolves parent-first.
    configuration.set(CoreOptions.CLASSLOADER_RESOLVE_ORDER, "parent-first");
    configuration.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
    configuration.set(RestOptions.ADDRESS, "127.0.0.1");
    configuration.set(RestOptions.BIND_PORT, "0");
    configuration.set(
        CheckpointingOptions.CHECKPOINTS_DIRECTORY,
        TEMP.newFolder("checkpoints").toURI().toString());
    configuration.set(
        CheckpointingOptions.SAVEPOINT_DIRECTORY,
        TEMP.newFolder("default-savepoints").toURI().toString());
    cluster =
        new MiniCluster(
            new MiniClusterConfiguration.Builder()
                .setConfiguration(configuration)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(2)
                .build());
    cluster.start();
    master = "127.0.0.1:" + cluster.getRestAddress().get(1, TimeUnit.MINUTES).getPort();
  }

  @AfterClass
  public static void stopClusterAndBroker() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
    if (broker != null) {
      broker.close();
    }
  }

  @Test
  public void submitListStopWithASavepointResumeAndCancel() throws Exception {
    Path events = TEMP.getRoot().toPath().resolve("events.ndjson");
    new EventGenerator(
            GeneratorConfig.builder()
                .seed(20261203)
                .numEvents(160)
                .numAccounts(8)
                .eventsPerSecond(1)
                .lateFraction(0)
                .tooLateFraction(0)
                .build())
        .writeTo(events);
    List<String> lines = Files.readAllLines(events, StandardCharsets.UTF_8);
    Path firstHalf = TEMP.getRoot().toPath().resolve("first-half.ndjson");
    Path secondHalf = TEMP.getRoot().toPath().resolve("second-half.ndjson");
    Files.write(firstHalf, lines.subList(0, lines.size() / 2));
    Files.write(secondHalf, lines.subList(lines.size() / 2, lines.size()));

    List<String> kafka =
        List.of(
            "--kafkaBootstrapServers=" + broker.bootstrapServers(),
            "--kafkaInputTopic=cluster.events",
            "--kafkaDecisionsTopic=cluster.decisions",
            "--kafkaDeadLettersTopic=cluster.dead-letters",
            "--kafkaDuplicatesTopic=cluster.duplicates",
            "--kafkaTooLateTopic=cluster.too-late",
            "--kafkaConsumerGroup=cluster-source",
            "--kafkaSinkGroupId=cluster-sink");
    TidemarkOptions options =
        PipelineOptionsFactory.fromArgs(kafka.toArray(new String[0])).as(TidemarkOptions.class);
    KafkaClients clients = KafkaClients.from(options);
    Map<String, String> topics = LiveRun.createTopics(options, 2);
    KafkaFeed.produce(clients, options.getKafkaInputTopic(), firstHalf, KafkaFeed.Mode.MIXED);

    List<String> run = new ArrayList<>(List.of("run", "--profile=flink-cluster"));
    run.addAll(
        List.of(
            "--flinkMaster=" + master,
            "--parallelism=1",
            "--checkpointingInterval=1000",
            "--minPauseBetweenCheckpoints=200",
            "--executionRetryDelay=1000",
            "--earlyFiringDelay=PT0S",
            "--output=" + TEMP.getRoot().toPath().resolve("out")));
    run.addAll(kafka);

    // run returns once the cluster accepted the job, with its id and web UI page.
    CliRun submitted = CliRun.of(run.toArray(new String[0]));
    assertThat(submitted.err, submitted.exit, is(ExitCodes.DONE));
    String first = jobId(submitted.out);
    assertThat(
        submitted.out,
        containsString("Web UI: http://" + master + "/#/job/running/" + first + "/overview"));
    FlinkRestClient client = FlinkRestClient.of(master);
    await("job " + first + " runs every task", () -> job(client, first).fullyRunning());
    CliRun listed = CliRun.of("job", "list", "--flinkMaster=" + master);
    assertThat(listed.exit, is(ExitCodes.DONE));
    assertThat(listed.out, containsString(first + "  RUNNING"));

    // The job processes on the cluster: decisions are committed (at checkpoints).
    await(
        "decisions committed by job " + first,
        () -> KafkaFeed.readAll(clients, topics.get("decisions")).size() > 0);
    int decisionsBeforeStop = KafkaFeed.readAll(clients, topics.get("decisions")).size();

    // job stop --savepoint prints a savepoint that exists.
    Path savepoints = TEMP.newFolder("savepoints").toPath();
    CliRun stopped =
        CliRun.of(
            "job", "stop", first, "--savepoint", savepoints.toString(), "--flinkMaster=" + master);
    assertThat(stopped.err, stopped.exit, is(ExitCodes.DONE));
    String[] stopLines = stopped.out.strip().split("\\R");
    String savepoint = stopLines[stopLines.length - 1].trim();
    Path savepointDir = ClusterPaths.toLocalPath(savepoint);
    assertThat(savepoint, savepointDir != null && Files.isDirectory(savepointDir), is(true));
    assertThat(savepointDir.startsWith(savepoints), is(true));
    assertThat(Files.exists(savepointDir.resolve("_metadata")), is(true));
    await("job " + first + " finished", () -> "FINISHED".equals(job(client, first).state()));

    // run --fromSavepoint resumes: a new job, restored from that savepoint, processing more input.
    KafkaFeed.produce(clients, options.getKafkaInputTopic(), secondHalf, KafkaFeed.Mode.MIXED);
    List<String> resume = new ArrayList<>(run);
    resume.add("--fromSavepoint=" + savepoint);
    CliRun resumed = CliRun.of(resume.toArray(new String[0]));
    assertThat(resumed.err, resumed.exit, is(ExitCodes.DONE));
    String second = jobId(resumed.out);
    assertThat(second, is(not(first)));
    await("job " + second + " runs every task", () -> job(client, second).fullyRunning());
    await(
        "job " + second + " restored from " + savepoint,
        () ->
            client
                .get("/jobs/" + second + "/checkpoints")
                .path("latest")
                .path("restored")
                .path("external_path")
                .asText("")
                .contains(savepointDir.getFileName().toString()));
    assertThat(
        CliRun.of("job", "list", "--flinkMaster=" + master).out,
        containsString(second + "  RUNNING"));
    await(
        "more decisions committed by job " + second,
        () -> KafkaFeed.readAll(clients, topics.get("decisions")).size() > decisionsBeforeStop);

    // job cancel ends it; a second cancel, or an unknown id, is a failed run (exit 3).
    CliRun cancelled = CliRun.of("job", "cancel", second, "--flinkMaster=" + master);
    assertThat(cancelled.err, cancelled.exit, is(ExitCodes.DONE));
    assertThat(cancelled.out, containsString("CANCELED"));
    assertThat(job(client, second).state(), is("CANCELED"));
    CliRun again = CliRun.of("job", "cancel", second, "--flinkMaster=" + master);
    assertThat(again.exit, is(ExitCodes.RUN_FAILED));
    assertThat(again.err, containsString("has already ended (CANCELED)"));
    CliRun unknown =
        CliRun.of("job", "stop", "00000000000000000000000000000000", "--flinkMaster=" + master);
    assertThat(unknown.exit, is(ExitCodes.RUN_FAILED));
    assertThat(unknown.err, containsString("has no job"));
    assertThat(client.jobs().stream().filter(j -> !j.ended()).count(), is(0L));
    assertThat(decisionsBeforeStop, greaterThan(0));
  }

  private static FlinkJob job(FlinkRestClient client, String id) {
    try {
      return client.job(id);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static String jobId(String output) {
    Matcher matcher = SUBMITTED.matcher(output);
    assertThat(output, matcher.find(), is(true));
    return matcher.group(1);
  }

  private static void await(String what, Check check) throws Exception {
    long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
    while (!check.holds()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for: " + what);
      }
      Thread.sleep(500);
    }
  }

  /** A condition that may call the cluster or the broker. */
  private interface Check {
    boolean holds() throws Exception;
  }
}
