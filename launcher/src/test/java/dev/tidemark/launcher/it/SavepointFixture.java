package dev.tidemark.launcher.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.launcher.KafkaFeed;
import dev.tidemark.launcher.LiveRun;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.io.kafka.KafkaSinks;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.OptionChecks;
import dev.tidemark.testkit.EmbeddedKafka;
import dev.tidemark.testkit.PortForward;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.beam.runners.flink.EmbeddedFlinkJobsShim;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.util.ReleaseInfo;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.joda.time.Duration;

/**
 * Makes the savepoint fixture of a release: runs the real streaming pipeline (Kafka source, Kafka
 * sink, Flink MiniCluster, heap state) on a small generated input against an embedded broker, stops
 * it with a savepoint while windows are open and dedup state is live, and writes into {@code
 * launcher/src/test/resources/savepoints/<release>/}: the savepoint ({@code savepoint/}), the input
 * ({@code input.ndjson}) and {@code manifest.json} (versions, topics, pipeline arguments, offsets,
 * and what the state holds). {@code SavepointRestoreIT} restores every fixture there into the
 * current build.
 *
 * <p>A fixture is made once per release and then kept as it is; regenerating one replaces what
 * later builds are proven against. To make the fixture of a new release (set {@link #RELEASE}
 * first), from the repository root:
 *
 * <pre>{@code
 * mvn -B -o -pl launcher -am test-compile dependency:build-classpath \
 *     -Dmdep.outputFile=target/test-classpath.txt -Dmdep.includeScope=test
 * java -cp "launcher/target/test-classes:launcher/target/classes:$(cat launcher/target/test-classpath.txt)" \
 *     dev.tidemark.launcher.it.SavepointFixture launcher/src/test/resources/savepoints/0.2.0
 * }</pre>
 *
 * <p>It needs the loopback port {@link #BOOTSTRAP_PORT} free: Beam's Flink source restores the
 * Kafka source, bootstrap address included, from the savepoint, so the fixture is made, and
 * restored, through a {@link PortForward} at that fixed address.
 */
public final class SavepointFixture {
  /** The release whose state the fixture holds. */
  static final String RELEASE = "0.2.0";

  /** The fixed loopback port the fixture's Kafka source bootstraps through. */
  static final int BOOTSTRAP_PORT = 39092;

  static final String MANIFEST = "manifest.json";
  static final String INPUT = "input.ndjson";
  static final String SAVEPOINT = "savepoint";

  /**
   * Windows of 5 minutes every 30 seconds, an early pane on every element (so each window's
   * features before the savepoint are on the decisions topic), the idempotent sink (the
   * transactional sink's state is bound to its broker: its sink group's committed sequence lives
   * there, so it cannot be restored onto a new broker).
   */
  private static final List<String> PIPELINE_ARGS =
      List.of(
          "--runner=FlinkRunner",
          "--flinkMaster=[local]",
          "--streaming=true",
          "--parallelism=2",
          "--checkpointingInterval=1000",
          "--numberOfExecutionRetries=0",
          "--source=kafka",
          "--sink=kafka",
          "--kafkaInputTopic=fixture.events",
          "--kafkaDecisionsTopic=fixture.decisions",
          "--kafkaDeadLettersTopic=fixture.dead-letters",
          "--kafkaDuplicatesTopic=fixture.duplicates",
          "--kafkaTooLateTopic=fixture.too-late",
          "--kafkaConsumerGroup=fixture-source",
          "--kafkaSinkMode=idempotent",
          "--gateShards=1",
          "--windowSize=PT5M",
          "--windowPeriod=PT30S",
          "--allowedLateness=PT1H",
          "--earlyFiringDelay=PT0S",
          "--windowAggregation=SLICES",
          "--dedupHorizon=PT24H");

  /**
   * 300 events of 6 accounts, one a second, with duplicates and conflicts; no malformed lines,
   * whose records have no key and would land on either partition, and no late ones.
   */
  static GeneratorConfig generatorConfig() {
    return GeneratorConfig.builder()
        .seed(20261203)
        .numEvents(300)
        .numAccounts(6)
        .eventsPerSecond(1)
        .lateFraction(0)
        .tooLateFraction(0)
        .duplicateRate(0.05)
        .malformedFraction(0)
        .build();
  }

  private SavepointFixture() {}

  public static void main(String[] args) throws Exception {
    Path target =
        Paths.get(args.length > 0 ? args[0] : "launcher/src/test/resources/savepoints/" + RELEASE);
    make(target);
    System.out.println("savepoint fixture of " + RELEASE + " written to " + target);
  }

  /** The pipeline options of a fixture run or restore: {@code args} and the connection. */
  static TidemarkOptions options(List<String> args, String bootstrapServers, Path output) {
    List<String> all = new ArrayList<>(args);
    all.add("--kafkaBootstrapServers=" + bootstrapServers);
    all.add("--output=" + output);
    TidemarkOptions options =
        PipelineOptionsFactory.fromArgs(all.toArray(new String[0]))
            .withValidation()
            .as(TidemarkOptions.class);
    OptionChecks.check(options);
    return options;
  }

  /**
   * Creates the input topic (kept forever) and every topic the run writes, two partitions each;
   * returns the four outputs' topics by output name.
   */
  static Map<String, String> createTopics(String bootstrapServers, TidemarkOptions options) {
    EmbeddedKafka.createTopics(
        bootstrapServers, 2, List.of(options.getKafkaInputTopic()), Map.of("retention.ms", "-1"));
    EmbeddedKafka.createTopics(
        bootstrapServers, 2, new ArrayList<>(KafkaSinks.outputTopics(options).values()), Map.of());
    return KafkaSinks.topics(options);
  }

  /** The end offset of each partition of {@code topic}, by partition number. */
  static Map<Integer, Long> endOffsets(KafkaClients clients, String topic) {
    Map<String, Object> config = clients.merged(new LinkedHashMap<>());
    config.put("key.deserializer", ByteArrayDeserializer.class);
    config.put("value.deserializer", ByteArrayDeserializer.class);
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config)) {
      Map<Integer, Long> offsets = new TreeMap<>();
      List<TopicPartition> partitions = KafkaFeed.partitions(consumer, topic);
      consumer.endOffsets(partitions).forEach((tp, end) -> offsets.put(tp.partition(), end));
      return offsets;
    }
  }

  /**
   * Waits until the consumer group has committed {@code offsets} (the source commits what it read
   * when a checkpoint completes), checking the job before every poll.
   */
  static void awaitConsumed(
      String bootstrapServers, String group, Map<Integer, Long> offsets, Runnable checkJob)
      throws Exception {
    java.util.Properties properties = new java.util.Properties();
    properties.put("bootstrap.servers", bootstrapServers);
    long deadline = System.nanoTime() + 180_000_000_000L;
    try (org.apache.kafka.clients.admin.Admin admin =
        org.apache.kafka.clients.admin.Admin.create(properties)) {
      while (true) {
        checkJob.run();
        Map<Integer, Long> committed = new TreeMap<>();
        admin
            .listConsumerGroupOffsets(group)
            .partitionsToOffsetAndMetadata()
            .get()
            .forEach(
                (partition, offset) -> {
                  if (offset != null) {
                    committed.put(partition.partition(), offset.offset());
                  }
                });
        if (committed.equals(offsets)) {
          return;
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "the source committed " + committed + " within 3 minutes, not " + offsets);
        }
        Thread.sleep(500);
      }
    }
  }

  static void make(Path target) throws Exception {
    Path work = Files.createTempDirectory("tidemark-savepoint-fixture-");
    try (EmbeddedKafka broker = EmbeddedKafka.start();
        PortForward forward = PortForward.open(BOOTSTRAP_PORT, broker.bootstrapServers())) {
      Path input = work.resolve(INPUT);
      new EventGenerator(generatorConfig()).writeTo(input);
      checkEveryEventHasAKey(input);
      TidemarkOptions options = options(PIPELINE_ARGS, forward.address(), work.resolve("out"));
      KafkaClients clients = KafkaClients.from(options);
      Map<String, String> topics = createTopics(forward.address(), options);
      KafkaFeed.Fed fed =
          KafkaFeed.produce(clients, options.getKafkaInputTopic(), input, KafkaFeed.Mode.MIXED);
      EmbeddedFlinkJobsShim.Job job = EmbeddedFlinkJobsShim.start(Launch.build(options));
      String savepoint;
      try {
        awaitConsumed(
            forward.address(),
            options.getKafkaConsumerGroup(),
            endOffsets(clients, options.getKafkaInputTopic()),
            job::checkRunning);
        LiveRun.awaitQuiet(
            clients,
            topics,
            0,
            Duration.standardMinutes(3),
            LiveRun.quietPeriod(options),
            job::checkRunning);
      } catch (Exception e) {
        job.cancel();
        throw e;
      }
      savepoint = job.stopWithSavepoint(work.resolve("savepoints"), Duration.standardMinutes(1));
      Map<String, List<ConsumerRecord<byte[], byte[]>>> outputs = new LinkedHashMap<>();
      topics.forEach((name, topic) -> outputs.put(name, KafkaFeed.readAll(clients, topic)));

      deleteRecursively(target);
      Files.createDirectories(target);
      copyDirectory(Paths.get(java.net.URI.create(savepoint)), target.resolve(SAVEPOINT));
      Files.copy(input, target.resolve(INPUT));
      ObjectNode manifest =
          manifest(
              options,
              topics,
              fed,
              endOffsets(clients, options.getKafkaInputTopic()),
              input,
              outputs);
      Files.writeString(
          target.resolve(MANIFEST),
          Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(manifest) + "\n",
          StandardCharsets.UTF_8);
    } finally {
      deleteRecursively(work);
    }
  }

  private static ObjectNode manifest(
      TidemarkOptions options,
      Map<String, String> topics,
      KafkaFeed.Fed fed,
      Map<Integer, Long> offsets,
      Path input,
      Map<String, List<ConsumerRecord<byte[], byte[]>>> outputs)
      throws IOException {
    ObjectNode manifest = Json.MAPPER.createObjectNode();
    manifest.put("release", RELEASE);
    manifest.put("beamVersion", ReleaseInfo.getReleaseInfo().getVersion());
    manifest.put("flinkVersion", EnvironmentInformation.getVersion());
    manifest.put("madeBy", SavepointFixture.class.getName() + " (its javadoc: how to regenerate)");
    manifest.put(
        "savepoint",
        SAVEPOINT
            + "/: Flink's canonical savepoint format, taken on the MiniCluster with heap"
            + " (hashmap) state; a canonical savepoint restores into any state backend");
    manifest.put(
        "bootstrapServers",
        options.getKafkaBootstrapServers()
            + ": Beam's Flink source restores the Kafka source with this address from the"
            + " savepoint; restore with a broker reachable there");
    ObjectNode topicNames = manifest.putObject("topics");
    topicNames.put("input", options.getKafkaInputTopic());
    topics.forEach(topicNames::put);
    manifest.put("partitions", 2);
    manifest.put("consumerGroup", options.getKafkaConsumerGroup());
    ArrayNode args = manifest.putArray("pipelineArgs");
    PIPELINE_ARGS.forEach(args::add);
    ObjectNode inputNode = manifest.putObject("input");
    inputNode.put("file", INPUT);
    inputNode.put("produceMode", KafkaFeed.Mode.MIXED.name());
    inputNode.put("records", fed.records);
    inputNode.put("generator", generatorConfig().toString());
    ObjectNode consumed = manifest.putObject("offsetsConsumed");
    offsets.forEach((partition, offset) -> consumed.put(Integer.toString(partition), offset));
    ObjectNode counts = manifest.putObject("outputsBeforeSavepoint");
    outputs.forEach((name, records) -> counts.put(name, records.size()));

    ObjectNode state = manifest.putObject("state");
    state.put(
        "holds",
        "every record of the input read (the source's offsets and watermarks); dedup state"
            + " for every identity read (none expired: the watermark is minutes past the first"
            + " events, the horizon 24 hours); the too-late gate's bound and probes; and the"
            + " open windows below, whose latest pane before the savepoint was early, with"
            + " their accumulated features and pane indexes");
    state.set("dedupProbe", dedupProbe(input));
    ArrayNode open = state.putArray("openWindows");
    for (JsonNode decision : latestDecisions(outputs.get("decisions")).values()) {
      if ("EARLY".equals(decision.path("pane").path("timing").asText())) {
        ObjectNode window = open.addObject();
        window.put("decisionId", decision.get("decisionId").asText());
        window.put("accountId", decision.get("accountId").asText());
        window.put("windowStart", decision.get("windowStart").asText());
        window.put("windowEnd", decision.get("windowEnd").asText());
        window.put("version", decision.get("version").asLong());
        window.put("txnCount", decision.path("features").get("txnCount").asLong());
        window.set("amountSum", decision.path("features").get("amountSum"));
      }
    }
    if (open.isEmpty()) {
      throw new IllegalStateException("no window was open at the savepoint");
    }
    return manifest;
  }

  /** The latest version of each decision on the topic, by decision id. */
  static Map<String, JsonNode> latestDecisions(List<ConsumerRecord<byte[], byte[]>> records)
      throws IOException {
    Map<String, JsonNode> latest = new TreeMap<>();
    for (ConsumerRecord<byte[], byte[]> record : records) {
      JsonNode decision = Json.MAPPER.readTree(record.value());
      JsonNode seen = latest.get(decision.get("decisionId").asText());
      if (seen == null || decision.get("version").asLong() > seen.get("version").asLong()) {
        latest.put(decision.get("decisionId").asText(), decision);
      }
    }
    return latest;
  }

  /**
   * An event of the input whose identity occurs once in it: a copy of it sent after a restore is a
   * duplicate only if the dedup state came back.
   */
  private static ObjectNode dedupProbe(Path input) throws IOException {
    List<JsonNode> events = new ArrayList<>();
    Map<String, Integer> copies = new TreeMap<>();
    for (String line : Files.readAllLines(input, StandardCharsets.UTF_8)) {
      JsonNode node = Json.MAPPER.readTree(line);
      if (node.has("specversion")) {
        events.add(node);
        copies.merge(node.get("source").asText() + " " + node.get("id").asText(), 1, Integer::sum);
      }
    }
    for (JsonNode event : events) {
      if (copies.get(event.get("source").asText() + " " + event.get("id").asText()) == 1) {
        ObjectNode probe = Json.MAPPER.createObjectNode();
        probe.put("source", event.get("source").asText());
        probe.put("id", event.get("id").asText());
        probe.put("time", event.get("time").asText());
        return probe;
      }
    }
    throw new IllegalStateException("every event of the input has copies");
  }

  /**
   * Every event must have a key ({@code data.accountId}): keyed records land on the same partition
   * whenever they are produced, so a restore's input has the fixture's offsets.
   */
  private static void checkEveryEventHasAKey(Path input) throws IOException {
    Set<String> missing = new HashSet<>();
    for (String line : Files.readAllLines(input, StandardCharsets.UTF_8)) {
      JsonNode node = Json.MAPPER.readTree(line);
      if (!node.has("advanceProcessingTime") && !node.path("data").path("accountId").isTextual()) {
        missing.add(line);
      }
    }
    if (!missing.isEmpty()) {
      throw new IllegalStateException("events without data.accountId: " + missing);
    }
  }

  static void copyDirectory(Path from, Path to) throws IOException {
    try (Stream<Path> paths = Files.walk(from)) {
      for (Path path : (Iterable<Path>) paths::iterator) {
        Path copy = to.resolve(from.relativize(path).toString());
        if (Files.isDirectory(path)) {
          Files.createDirectories(copy);
        } else {
          Files.copy(path, copy, StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
  }

  static void deleteRecursively(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path path : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(path);
      }
    }
  }
}
