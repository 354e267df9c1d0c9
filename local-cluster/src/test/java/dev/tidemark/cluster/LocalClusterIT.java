package dev.tidemark.cluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * The local cluster end to end, on free ports in a temporary state directory: {@code up} (over a
 * stale pid file), the JobManager's view of both TaskManagers and their slots, a topic, a produce
 * and a consume on the broker and again after a broker restart, a TaskManager's Prometheus
 * endpoint, a keyed job of parallelism 2 checkpointing with RocksDB into the state directory on
 * both TaskManagers, a SIGKILLed TaskManager noticed and replaced, {@code status}, and {@code down}
 * leaving no process behind.
 */
public class LocalClusterIT {
  private Path dir;
  private LocalCluster cluster;
  private final Set<Long> pids = new HashSet<>();

  @Before
  public void setUp() throws IOException {
    dir = Files.createTempDirectory("tidemark-local-cluster-it");
    ClusterSettings settings =
        ClusterSettings.defaults(dir)
            .withFreePorts()
            .withJvmOptions(ClusterSettings.SHORT_JOBS_JVM_OPTIONS);
    cluster = new LocalCluster(settings, classPath(), System.out);
  }

  @After
  public void tearDown() throws IOException {
    try {
      if (cluster != null) {
        cluster.down();
      }
    } finally {
      // Whatever happened above, no process of this test outlives it.
      LocalCluster.killAll(pids);
      if (dir != null) {
        try (Stream<Path> files = Files.walk(dir)) {
          files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
      }
    }
  }

  @Test
  public void upServesFlinkAndKafkaSurvivesAKilledTaskManagerAndDownStopsEverything()
      throws Exception {
    // A pid file left by a crash, whose pid now belongs to another program (this JVM).
    Files.createDirectories(dir.resolve("run"));
    Files.writeString(
        dir.resolve("run/kafka.pid"), ProcessHandle.current().pid() + "\n", StandardCharsets.UTF_8);

    assertTrue("up starts the cluster", cluster.up(Duration.ofMinutes(3)));
    recordPids();
    assertEquals(cluster.processNames().size(), pids.size());
    // Every process runs with the settings' JVM options (its command line, NUL-separated).
    for (long pid : pids) {
      List<String> arguments =
          List.of(Files.readString(Path.of("/proc", Long.toString(pid), "cmdline")).split("\0"));
      assertTrue(
          pid + " " + arguments, arguments.containsAll(ClusterSettings.SHORT_JOBS_JVM_OPTIONS));
    }
    assertFalse("a second up finds it running", cluster.up(Duration.ofMinutes(1)));
    // A second cluster on the same ports is refused before it starts anything.
    Path other = Files.createTempDirectory("tidemark-local-cluster-it-other");
    try {
      ClusterSettings s = cluster.settings();
      LocalCluster clash =
          new LocalCluster(
              new ClusterSettings(
                  other,
                  s.restPort(),
                  s.rpcPort(),
                  s.kafkaPort(),
                  s.kafkaControllerPort(),
                  s.prometheusPort(),
                  s.taskManagers(),
                  s.slotsPerTaskManager(),
                  s.taskManagerMemory(),
                  s.brokers(),
                  s.highAvailability(),
                  s.extraPortBase(),
                  s.jvmOptions()),
              classPath(),
              System.out);
      IllegalStateException refused =
          assertThrows(IllegalStateException.class, () -> clash.up(Duration.ofSeconds(30)));
      assertTrue(refused.getMessage(), refused.getMessage().contains("is in use"));
      assertFalse(clash.anyRunning());
    } finally {
      Files.deleteIfExists(other);
    }

    LocalCluster.Overview overview = cluster.overview().orElseThrow();
    assertEquals(2, overview.taskManagers());
    assertEquals(4, overview.slotsTotal());
    assertEquals(4, overview.slotsAvailable());
    assertEquals(
        Set.of("taskmanager-0", "taskmanager-1"),
        cluster.registeredTaskManagers().stream()
            .map(LocalCluster.RegisteredTaskManager::id)
            .collect(Collectors.toSet()));
    assertTrue(cluster.registeredTaskManagers().stream().allMatch(tm -> tm.slots() == 2));

    produceAndConsume(cluster.settings().kafkaBootstrapServers());
    // The broker restarts on the same data: the records are there for a new group.
    long brokerPid = cluster.pid(LocalCluster.KAFKA).orElseThrow();
    cluster.restartBroker();
    long restartedBroker = cluster.pid(LocalCluster.KAFKA).orElseThrow();
    pids.add(restartedBroker);
    assertTrue(brokerPid != restartedBroker);
    assertFalse(ProcessHandle.of(brokerPid).map(ProcessHandle::isAlive).orElse(false));
    consume(cluster.settings().kafkaBootstrapServers(), "after-restart");

    String metrics = scrape(cluster.settings().taskManagerPrometheusPort(0), "flink_taskmanager_");
    // The resource id, with Prometheus' label characters ('-' becomes '_').
    assertTrue(metrics, metrics.contains("tm_id=\"taskmanager_0\""));

    checkpointsWithRocksDb(cluster.settings());

    long killed = cluster.killTaskManager(0);
    assertFalse(ProcessHandle.of(killed).map(ProcessHandle::isAlive).orElse(false));
    assertTrue(cluster.pid(LocalCluster.taskManager(0)).isEmpty());
    // The heartbeat timeout (10 s) lets the JobManager notice the loss.
    assertEquals(1, cluster.awaitTaskManagers(1, Duration.ofSeconds(60)).taskManagers());
    pids.add(cluster.startTaskManager(0));
    assertEquals(4, cluster.awaitTaskManagers(2, Duration.ofSeconds(90)).slotsTotal());

    LocalCluster.Status status = cluster.status();
    assertTrue(status.format(), status.allRunning());
    assertTrue(status.brokerAnswers());
    assertTrue(status.format(), status.format().contains("2 TaskManagers, 4 slots"));

    // The command line finds the same cluster from --dir alone.
    assertEquals(ClusterCommand.DONE, runCommand("status", "--dir", dir.toString()).exitCode());
    CommandRun upAgain = runCommand("up", "--dir", dir.toString());
    assertEquals(ClusterCommand.DONE, upAgain.exitCode());
    assertTrue(upAgain.output(), upAgain.output().contains("is up already"));

    List<String> stopped = cluster.down();
    assertEquals(stopped.toString(), cluster.processNames().size(), stopped.size());
    for (long pid : pids) {
      assertFalse(
          "pid " + pid + " survived down",
          ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));
    }
    assertTrue(cluster.status().noneRunning());
    assertEquals(ClusterCommand.FAILED, runCommand("status", "--dir", dir.toString()).exitCode());
  }

  /**
   * A keyed streaming job of parallelism 2 on the cluster's defaults: it checkpoints with RocksDB
   * (incremental) into the state directory, on both TaskManagers (evenly spread slots).
   */
  private void checkpointsWithRocksDb(ClusterSettings settings) throws Exception {
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.createRemoteEnvironment(
            ClusterSettings.HOST,
            settings.restPort(),
            System.getProperty("tidemark.cluster.testJar"));
    env.setParallelism(2);
    env.enableCheckpointing(500);
    env.fromSequence(0, Long.MAX_VALUE)
        .map(new ThrottleFn())
        .keyBy(new ModuloKey())
        .map(new CountPerKeyFn())
        .sinkTo(new DiscardingSink<>());
    JobClient job = env.executeAsync("local-cluster-it");
    try {
      String checkpoints = "/jobs/" + job.getJobID() + "/checkpoints";
      JsonNode counts =
          awaitRest(
              settings, checkpoints, node -> node.path("counts").path("completed").asInt() >= 2);
      assertTrue(
          counts.toString(),
          counts
              .path("latest")
              .path("completed")
              .path("external_path")
              .asText()
              .startsWith("file:" + settings.dir().resolve("checkpoints")));
      JsonNode config =
          awaitRest(settings, checkpoints + "/config", node -> node.has("state_backend"));
      assertEquals(
          config.toString(), "EmbeddedRocksDBStateBackend", config.path("state_backend").asText());
      Set<String> used = new HashSet<>();
      for (JsonNode vertex : restGet(settings, "/jobs/" + job.getJobID()).path("vertices")) {
        JsonNode managers =
            restGet(
                settings,
                "/jobs/"
                    + job.getJobID()
                    + "/vertices/"
                    + vertex.path("id").asText()
                    + "/taskmanagers");
        for (JsonNode tm : managers.path("taskmanagers")) {
          used.add(tm.path("taskmanager-id").asText());
        }
      }
      assertEquals(Set.of("taskmanager-0", "taskmanager-1"), used);
    } finally {
      job.cancel().get(60, TimeUnit.SECONDS);
    }
    awaitRest(settings, "/overview", node -> node.path("jobs-running").asInt() == 0);
  }

  /** Keys a number by its remainder modulo 16. */
  static final class ModuloKey implements KeySelector<Long, Long> {
    @Override
    public Long getKey(Long value) {
      return value % 16;
    }
  }

  /**
   * Passes each element on after a millisecond (about 1,000 a second a subtask). Chained to the
   * source, so that no buffers fill up in front of a checkpoint barrier.
   */
  static final class ThrottleFn implements MapFunction<Long, Long> {
    @Override
    public Long map(Long value) throws InterruptedException {
      Thread.sleep(1);
      return value;
    }
  }

  /** Counts the elements of each key in keyed state. */
  static final class CountPerKeyFn extends RichMapFunction<Long, Long> {
    private transient ValueState<Long> count;

    @Override
    public void open(OpenContext context) {
      count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Long.class));
    }

    @Override
    public Long map(Long value) throws Exception {
      long next = (count.value() == null ? 0 : count.value()) + 1;
      count.update(next);
      return next;
    }
  }

  private static JsonNode restGet(ClusterSettings settings, String path) throws Exception {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(URI.create(settings.restAddress() + path))
                .timeout(Duration.ofSeconds(5))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    return new ObjectMapper().readTree(response.body());
  }

  private static JsonNode awaitRest(
      ClusterSettings settings, String path, java.util.function.Predicate<JsonNode> done)
      throws Exception {
    JsonNode last = null;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      last = restGet(settings, path);
      if (done.test(last)) {
        return last;
      }
      Thread.sleep(250);
    }
    fail("GET " + path + " did not reach the expected state: " + last);
    return last;
  }

  private void recordPids() {
    for (String name : cluster.processNames()) {
      cluster.pid(name).ifPresent(pids::add);
    }
  }

  private static void produceAndConsume(String bootstrap) throws Exception {
    String topic = "local-cluster-it";
    Properties admin = new Properties();
    admin.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    try (Admin client = Admin.create(admin)) {
      client
          .createTopics(List.of(new NewTopic(topic, 2, (short) 1)))
          .all()
          .get(30, TimeUnit.SECONDS);
    }
    Properties producer = new Properties();
    producer.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    producer.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    producer.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    producer.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<String, String> client = new KafkaProducer<>(producer)) {
      for (int i = 0; i < 10; i++) {
        client.send(new ProducerRecord<>(topic, "k" + i, "v" + i)).get(30, TimeUnit.SECONDS);
      }
    }
    consume(bootstrap, "local-cluster-it");
  }

  /** Reads the test topic from the start with a group of its own: the 10 records. */
  private static void consume(String bootstrap, String group) {
    String topic = "local-cluster-it";
    Properties consumer = new Properties();
    consumer.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    consumer.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    consumer.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    consumer.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    consumer.put(
        ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    Map<String, String> read = new java.util.HashMap<>();
    try (KafkaConsumer<String, String> client = new KafkaConsumer<>(consumer)) {
      client.subscribe(List.of(topic));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (read.size() < 10 && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> record : client.poll(Duration.ofMillis(500))) {
          read.put(record.key(), record.value());
        }
      }
    }
    assertEquals(10, read.size());
    assertEquals("v7", read.get("k7"));
  }

  /**
   * GETs a Prometheus endpoint until its body contains {@code expected} (metrics register late).
   */
  private static String scrape(int port, String expected) throws Exception {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
            .timeout(Duration.ofSeconds(5))
            .build();
    String body = "";
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      try {
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        body = response.body();
        if (response.statusCode() == 200 && body.contains(expected)) {
          return body;
        }
      } catch (IOException e) {
        body = e.toString();
      }
      Thread.sleep(500);
    }
    fail("no " + expected + " at 127.0.0.1:" + port + "/metrics: " + body);
    return body;
  }

  private record CommandRun(int exitCode, String output) {}

  private static CommandRun runCommand(String... args) {
    PrintStream out = System.out;
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    System.setOut(new PrintStream(buffer, true, StandardCharsets.UTF_8));
    int exitCode;
    try {
      exitCode = ClusterCommand.execute(args);
    } finally {
      System.setOut(out);
    }
    String output = buffer.toString(StandardCharsets.UTF_8);
    out.print(output);
    return new CommandRun(exitCode, output);
  }

  /** This module's jar and its runtime class path, as the launcher script passes them. */
  private static String classPath() throws IOException {
    String jar = System.getProperty("tidemark.cluster.jar");
    String file = System.getProperty("tidemark.cluster.classpath.file");
    if (jar == null || file == null) {
      throw new IllegalStateException(
          "run under Maven (failsafe sets tidemark.cluster.jar and tidemark.cluster.classpath.file)");
    }
    List<String> entries = new ArrayList<>();
    entries.add(jar);
    entries.add(Files.readString(Path.of(file), StandardCharsets.UTF_8).trim());
    return String.join(java.io.File.pathSeparator, entries);
  }
}
