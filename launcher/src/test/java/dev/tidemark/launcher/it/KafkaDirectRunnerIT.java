package dev.tidemark.launcher.it;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.launcher.KafkaFeed;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.io.kafka.KafkaSinks;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.testkit.EmbeddedKafka;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Kafka in and out on the DirectRunner against a real broker: events produced in both CloudEvents
 * modes (with duplicates, conflicts and malformed records) give the same final decisions, dead
 * letters and duplicates as the same events replayed from the file.
 */
@RunWith(JUnit4.class)
public class KafkaDirectRunnerIT {
  @ClassRule public static final TemporaryFolder TEMP = new TemporaryFolder();

  private static EmbeddedKafka broker;

  @BeforeClass
  public static void start() {
    broker = EmbeddedKafka.start();
  }

  @AfterClass
  public static void stop() {
    broker.close();
  }

  @Test
  public void kafkaRunMatchesTheReplayOfTheSameEvents() throws Exception {
    Path events = TEMP.getRoot().toPath().resolve("events.ndjson");
    // No late or too-late events: then the final state does not depend on watermark timing.
    new EventGenerator(
            GeneratorConfig.builder()
                .seed(4)
                .numEvents(200)
                .numAccounts(10)
                .eventsPerSecond(1)
                .lateFraction(0)
                .tooLateFraction(0)
                .duplicateRate(0.08)
                // 16 malformed lines: every kind the generator has, invalid UTF-8 included.
                .malformedFraction(0.08)
                .build())
        .writeTo(events);

    // A score test this sensitive alarms on 200 events, so the drift topic has records to compare.
    String bundled = SpecLoader.bundledText("payments");
    String sensitive = "drift: {scoreDelta: 0, scoreThreshold: 0.05,";
    Path spec = TEMP.getRoot().toPath().resolve("sensitive-drift.yaml");
    Files.writeString(
        spec,
        bundled.replace("drift: {scoreDelta: 0.02, scoreThreshold: 50,", sensitive),
        StandardCharsets.UTF_8);
    assertThat(Files.readString(spec).contains(sensitive), is(true));

    Path replayOut = TEMP.newFolder("replay").toPath();
    Summary replay =
        Launch.run(
            replayOptions(events, replayOut, "--earlyFiringDelay=none", "--specUri=" + spec));

    TidemarkOptions options =
        PipelineOptionsFactory.fromArgs(
                "--runner=DirectRunner",
                "--streaming=true",
                "--source=kafka",
                "--sink=kafka",
                "--kafkaBootstrapServers=" + broker.bootstrapServers(),
                "--kafkaInputTopic=direct.events",
                "--kafkaDecisionsTopic=direct.decisions",
                "--kafkaDeadLettersTopic=direct.dead-letters",
                "--kafkaDuplicatesTopic=direct.duplicates",
                "--kafkaTooLateTopic=direct.too-late",
                "--kafkaConsumerGroup=direct-test",
                "--earlyFiringDelay=none",
                "--specUri=" + spec,
                "--output=" + TEMP.newFolder("kafka"))
            .withValidation()
            .as(TidemarkOptions.class);
    KafkaClients clients = KafkaClients.from(options);
    EmbeddedKafka.createTopics(
        broker.bootstrapServers(), 2, List.of("direct.events"), Map.of("retention.ms", "-1"));
    EmbeddedKafka.createTopics(
        broker.bootstrapServers(),
        2,
        new ArrayList<>(KafkaSinks.outputTopics(options).values()),
        Map.of());
    Map<String, String> topics = KafkaSinks.topics(options);
    KafkaFeed.Fed fed = KafkaFeed.produce(clients, "direct.events", events, KafkaFeed.Mode.MIXED);
    assertThat(fed.binary, greaterThan(50));
    options.setKafkaMaxRecords((long) fed.records);
    Summary kafka = Launch.run(options);

    assertThat(kafka.identityHolds(), is(true));
    assertThat(kafka.read(), is(replay.read()));
    assertThat(kafka.duplicates(), is(replay.duplicates()));
    assertThat(kafka.deadLetters(), is(replay.deadLetters()));

    Map<String, String> fromKafka = new TreeMap<>();
    for (ConsumerRecord<byte[], byte[]> record :
        KafkaFeed.readAll(clients, topics.get("decisions"))) {
      keepLatest(fromKafka, Json.MAPPER.readTree(record.value()));
      assertThat(
          new String(record.headers().lastHeader("version").value(), StandardCharsets.UTF_8),
          is(Json.MAPPER.readTree(record.value()).get("version").asText()));
    }
    Map<String, String> fromReplay = new TreeMap<>();
    for (String line : lines(replayOut.resolve("decisions"))) {
      keepLatest(fromReplay, Json.MAPPER.readTree(line));
    }
    assertThat(fromReplay.size(), greaterThan(100));
    assertThat(withoutVersions(fromKafka), is(withoutVersions(fromReplay)));
    Map<String, Long> reasons = reasons(KafkaFeed.readAll(clients, topics.get("dead-letters")));
    assertThat(reasons, is(reasonsOf(lines(replayOut.resolve("dead-letters")))));
    // The feed sends a line that is not UTF-8 as it is, for the pipeline to dead-letter.
    assertThat(reasons.get("invalid_utf8"), is(1L));

    // A run without labels writes its drift alarms to their topic too: the replay's alarms.
    List<String> alarms = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> record :
        KafkaFeed.readAll(clients, KafkaSinks.outputTopics(options).get("drift"))) {
      JsonNode alarm = Json.MAPPER.readTree(record.value());
      assertThat(
          new String(record.key(), StandardCharsets.UTF_8),
          is(
              alarm.at("/model/role").asText()
                  + "/"
                  + alarm.at("/model/name").asText()
                  + ":"
                  + alarm.at("/model/version").asText()
                  + "/"
                  + alarm.get("kind").asText()));
      alarms.add(alarm.toString());
    }
    List<String> replayed = new ArrayList<>();
    for (String line : lines(replayOut.resolve("drift"))) {
      replayed.add(Json.MAPPER.readTree(line).toString());
    }
    assertThat(replayed.size(), greaterThan(0));
    assertThat(
        Json.MAPPER.readTree(kafka.toJson()).get("drift").get("alarms").asLong(),
        is((long) replayed.size()));
    alarms.sort(null);
    replayed.sort(null);
    assertThat(alarms, is(replayed));
  }

  /** Keeps, per decisionId, the highest version, without what differs legitimately. */
  private static void keepLatest(Map<String, String> state, JsonNode decision) {
    String id = decision.get("decisionId").asText();
    long version = decision.get("version").asLong();
    String current = state.get(id);
    if (current != null && Long.parseLong(current.substring(0, current.indexOf(' '))) > version) {
      return;
    }
    ObjectNode copy = decision.deepCopy();
    copy.remove("version");
    copy.remove("pane");
    // What an edition corrects depends on how many panes fired before it.
    copy.remove("correction");
    copy.remove("supersedes");
    ObjectNode clocks = (ObjectNode) copy.get("clocks");
    clocks.remove("processingTime");
    clocks.remove("decisionTime");
    // Ingestion clocks differ by construction: the replay clock vs Kafka record timestamps.
    clocks.remove("ingestionTime");
    state.put(id, version + " " + copy);
  }

  private static Map<String, String> withoutVersions(Map<String, String> state) {
    Map<String, String> values = new TreeMap<>();
    state.forEach((id, value) -> values.put(id, value.substring(value.indexOf(' ') + 1)));
    return values;
  }

  private static List<String> lines(Path directory) throws IOException {
    List<String> lines = new ArrayList<>();
    try (var files = Files.list(directory)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        lines.addAll(Files.readAllLines(file, StandardCharsets.UTF_8));
      }
    }
    lines.removeIf(String::isBlank);
    return lines;
  }

  private static Map<String, Long> reasons(List<ConsumerRecord<byte[], byte[]>> records)
      throws IOException {
    List<String> values = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> record : records) {
      values.add(new String(record.value(), StandardCharsets.UTF_8));
    }
    return reasonsOf(values);
  }

  private static Map<String, Long> reasonsOf(List<String> lines) throws IOException {
    Map<String, Long> reasons = new TreeMap<>();
    for (String line : lines) {
      reasons.merge(Json.MAPPER.readTree(line).get("reason").asText(), 1L, Long::sum);
    }
    return reasons;
  }

  /** A replay run on the DirectRunner, as the pipeline's own tests configure it. */
  static TidemarkOptions replayOptions(Path input, Path output, String... extra) {
    List<String> args = new ArrayList<>();
    args.add("--runner=DirectRunner");
    args.add("--source=replay");
    args.add("--input=" + input);
    args.add("--output=" + output);
    args.addAll(List.of(extra));
    return PipelineOptionsFactory.fromArgs(args.toArray(new String[0]))
        .withValidation()
        .as(TidemarkOptions.class);
  }
}
