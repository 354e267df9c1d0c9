package dev.tidemark.act;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.io.kafka.KafkaSinks;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.testkit.EmbeddedKafka;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The real pipeline into a real broker, and the consumer after it: a replay file in which one
 * account's late payments turn {@code allow} into {@code review} and another's late payment only
 * moves the score, run twice into the same topic (a replay of the same capture after a restart),
 * consumed after each run. One case per reviewed decision, opened and closed exactly where the
 * editions say; the second run's records are all redeliveries and change nothing.
 */
@RunWith(JUnit4.class)
public class PipelineReplayIT {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final Instant BASE = Instant.parse("2026-01-01T00:00:00Z");
  private static final String FLIPS = "acct-flips";
  private static final String REFINES = "acct-refines";
  private static final String TOPIC = "replay.decisions";

  private static Instant at(long seconds) {
    return BASE.plusSeconds(seconds);
  }

  private static String event(
      String id, String account, String amount, String merchant, String country, Instant time) {
    return "{\"specversion\":\"1.0\",\"id\":\""
        + id
        + "\",\"source\":\"/act-it\",\"type\":\"payments.transaction.v1\",\"time\":\""
        + time
        + "\",\"data\":{\"accountId\":\""
        + account
        + "\",\"amount\":"
        + amount
        + ",\"currency\":\"GBP\",\"merchantId\":\""
        + merchant
        + "\",\"country\":\""
        + country
        + "\"}}";
  }

  /**
   * Both accounts pay once, on time; the watermark passes the window's end (both on-time panes
   * {@code allow}); then, late but within the allowed lateness, one small payment for one account
   * and, one arrival per second, large payments at many merchants in many countries for the other.
   */
  private static Path writeReplay(Path dir) throws Exception {
    List<String> lines = new ArrayList<>();
    lines.add(event("flips-0", FLIPS, "12.00", "m-0", "GB", at(60)));
    lines.add(event("refines-0", REFINES, "20.00", "m-0", "GB", at(60)));
    lines.add("{\"advanceWatermarkTo\":\"" + at(300) + "\"}");
    lines.add(event("refines-1", REFINES, "25.00", "m-1", "GB", at(180)));
    String[] countries = {"GB", "FR", "DE", "NL", "ES", "IT"};
    for (int i = 1; i <= 12; i++) {
      lines.add("{\"advanceProcessingTime\":\"PT1S\"}");
      lines.add(
          event(
              "flips-" + i,
              FLIPS,
              (400 + 37 * i) + ".00",
              "m-" + i,
              countries[i % 6],
              at(60 + 15 * i)));
    }
    lines.add("{\"advanceWatermarkToInfinity\":true}");
    Path file = dir.resolve("late.ndjson");
    Files.write(file, (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
    return file;
  }

  private static Summary runPipeline(String bootstrapServers, Path replay, Path output) {
    return Launch.run(options(bootstrapServers, replay, output));
  }

  private static TidemarkOptions options(String bootstrapServers, Path replay, Path output) {
    return PipelineOptionsFactory.fromArgs(
            "--runner=DirectRunner",
            "--source=replay",
            "--input=" + replay,
            "--output=" + output,
            "--sink=kafka",
            "--kafkaBootstrapServers=" + bootstrapServers,
            "--kafkaDecisionsTopic=" + TOPIC,
            "--kafkaDeadLettersTopic=replay.dead-letters",
            "--kafkaDuplicatesTopic=replay.duplicates",
            "--kafkaTooLateTopic=replay.too-late",
            "--windowSize=PT5M",
            "--windowPeriod=PT5M",
            "--earlyFiringDelay=none",
            // The replay clock follows the event times: the late burst is not from the future.
            "--maxFutureSkew=PT1H")
        .withValidation()
        .as(TidemarkOptions.class);
  }

  @Test
  public void aReplayOfTheSameCaptureAfterARestartOpensNothingTwice() throws Exception {
    Path state = ActConsumerIT.stateDir("pipeline");
    Path replay = writeReplay(state);
    Path database = state.resolve("db");
    Files.createDirectories(database);
    try (EmbeddedKafka broker = EmbeddedKafka.start();
        LocalPostgres postgres = LocalPostgres.start(database, System.out);
        Tables tables = new Tables(postgres.jdbcUrl())) {
      TidemarkOptions options = options(broker.bootstrapServers(), replay, state);
      EmbeddedKafka.createTopics(
          broker.bootstrapServers(),
          2,
          List.copyOf(KafkaSinks.outputTopics(options).values()),
          Map.of());
      ActSettings settings =
          ActConsumerIT.settings(state, broker.bootstrapServers(), TOPIC, postgres.jdbcUrl());

      Summary first = runPipeline(broker.bootstrapServers(), replay, state.resolve("run-1"));
      assertThat(first.identityHolds(), is(true));
      List<JsonNode> editions = decisions(broker.bootstrapServers());
      assertThat(editions.size(), greaterThan(2));
      for (JsonNode edition : editions) {
        assertThat(
            "the pipeline writes editions with a correction: " + edition,
            edition.has("correction"),
            is(true));
      }
      ActSummary once = new ActConsumer(settings, System.out).run();
      System.out.println("after the first run:\n" + once.render());
      assertThat(once.read(), is((long) editions.size()));
      assertThat(once.applied(), is((long) editions.size()));
      assertThat(once.unsupported() + once.conflicts() + once.stale(), is(0L));

      Map<String, String> expected = expectedCases(editions);
      // The late burst reversed one account's allow into review; the other's stayed allow.
      assertThat(expected.keySet().toString(), expected.size(), is(1));
      assertThat(accountsOf(editions, expected.keySet()), is(List.of(FLIPS)));
      assertThat(tables.cases(), is(expected));
      assertThat(openedAt(tables), is(firstReversalToReview(editions)));
      List<String> sideEffect = tables.sideEffect();

      // The same capture replayed after a restart: the same editions again, every one known.
      Summary second = runPipeline(broker.bootstrapServers(), replay, state.resolve("run-2"));
      assertThat(second.identityHolds(), is(true));
      List<JsonNode> both = decisions(broker.bootstrapServers());
      assertThat(both.size(), is(2 * editions.size()));
      ActSummary again = new ActConsumer(settings, System.out).run();
      System.out.println("after the second run:\n" + again.render());
      tables.rows("SELECT * FROM cases").forEach(System.out::println);
      assertThat(again.read(), is((long) editions.size()));
      assertThat(again.redelivered(), is((long) editions.size()));
      assertThat(again.applied() + again.conflicts() + again.stale(), is(0L));
      assertThat(tables.sideEffect(), is(sideEffect));
      assertThat(tables.cases(), is(expectedCases(both)));
    } finally {
      LocalPostgres.stop(database, System.out);
    }
  }

  /**
   * The cases the editions call for, by the rules a reader of the topic can check: per decision, in
   * version order (duplicates of a version once), the first review opens, a reversal to allow
   * closes at its version, a reversal back to review reopens.
   */
  private static Map<String, String> expectedCases(List<JsonNode> editions) {
    Map<String, TreeMap<Long, JsonNode>> byDecision = new TreeMap<>();
    for (JsonNode edition : editions) {
      byDecision
          .computeIfAbsent(edition.get("decisionId").asText(), id -> new TreeMap<>())
          .putIfAbsent(edition.get("version").asLong(), edition);
    }
    Map<String, String> cases = new TreeMap<>();
    byDecision.forEach(
        (id, versions) -> {
          String status = null;
          Long closedVersion = null;
          int reopened = 0;
          for (JsonNode edition : versions.values()) {
            boolean review = edition.get("decision").asText().equals("review");
            String correction = edition.get("correction").asText();
            if (review && status == null) {
              status = "open";
            } else if (review && status.equals("closed")) {
              assertThat(correction, is("reversed"));
              status = "open";
              closedVersion = null;
              reopened++;
            } else if (!review && "open".equals(status)) {
              assertThat(correction, is("reversed"));
              status = "closed";
              closedVersion = edition.get("version").asLong();
            }
          }
          if (status != null) {
            cases.put(id, status + " " + closedVersion + " " + reopened);
          }
        });
    return cases;
  }

  private static List<String> accountsOf(List<JsonNode> editions, Iterable<String> decisionIds) {
    List<String> accounts = new ArrayList<>();
    for (String id : decisionIds) {
      for (JsonNode edition : editions) {
        if (edition.get("decisionId").asText().equals(id)) {
          accounts.add(edition.get("accountId").asText());
          break;
        }
      }
    }
    return accounts;
  }

  /** decisionId to the version of the first edition that reversed allow into review. */
  private static Map<String, Long> firstReversalToReview(List<JsonNode> editions) {
    Map<String, Long> reversals = new TreeMap<>();
    editions.stream()
        .sorted(Comparator.comparingLong(e -> e.get("version").asLong()))
        .filter(e -> e.get("correction").asText().equals("reversed"))
        .filter(e -> e.get("decision").asText().equals("review"))
        .forEach(
            e -> reversals.putIfAbsent(e.get("decisionId").asText(), e.get("version").asLong()));
    return reversals;
  }

  private static Map<String, Long> openedAt(Tables tables) throws Exception {
    Map<String, Long> opened = new TreeMap<>();
    for (String row : tables.rows("SELECT decision_id, opened_version FROM cases")) {
      String[] fields = row.split(" ");
      opened.put(fields[0], Long.parseLong(fields[1]));
    }
    return opened;
  }

  /** Every committed record of the decisions topic, as JSON. */
  private static List<JsonNode> decisions(String bootstrapServers) throws Exception {
    Properties properties = new Properties();
    properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    properties.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    List<JsonNode> records = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(properties)) {
      List<TopicPartition> partitions = new ArrayList<>();
      consumer
          .partitionsFor(TOPIC)
          .forEach(info -> partitions.add(new TopicPartition(TOPIC, info.partition())));
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (partitions.stream().anyMatch(p -> consumer.position(p) < ends.get(p))) {
        assertThat("reading " + TOPIC, System.nanoTime() < deadline, is(true));
        for (ConsumerRecord<byte[], byte[]> record :
            consumer.poll(java.time.Duration.ofMillis(200))) {
          records.add(MAPPER.readTree(record.value()));
        }
      }
    }
    assertThat(records.isEmpty(), is(false));
    return records;
  }
}
