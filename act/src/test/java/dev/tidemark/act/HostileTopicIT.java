package dev.tidemark.act;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import dev.tidemark.testkit.EmbeddedKafka;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * A decisions topic no pipeline would write, on a real broker and a real PostgreSQL: NUL
 * characters, invalid UTF-8, oversized values, wrong types, missing fields and huge numbers. The
 * consumer never wedges: every record ends in exactly one place (applied, redelivered, a conflict
 * or a rejection with its reason), and the records after the hostile ones are applied.
 */
@RunWith(JUnit4.class)
public class HostileTopicIT {
  private static EmbeddedKafka broker;

  @BeforeClass
  public static void start() {
    broker = EmbeddedKafka.start();
  }

  @AfterClass
  public static void stop() {
    broker.close();
  }

  /** One record of the topic and where it must end. */
  private record Hostile(byte[] key, byte[] value, String outcome) {
    Hostile(String key, String value, String outcome) {
      this(bytes(key), value == null ? null : bytes(value), outcome);
    }
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static String edition(String id, long version, double score, String decision) {
    return Editions.json(id, "acct-h", version, score, decision, "none", -1, 0, null, NOW);
  }

  private static final Instant NOW = Instant.parse("2026-01-01T01:00:00Z");

  private static List<Hostile> topic() {
    List<Hostile> records = new ArrayList<>();
    records.add(new Hostile("h1", edition("h1", 0, 0.9, "review"), "applied"));
    records.add(new Hostile("h1", edition("h1", 0, 0.9, "review"), "redelivered"));
    records.add(new Hostile("h1", edition("h1", 0, 0.3, "allow"), "conflict"));
    // NUL characters: in the decisionId (and the key), and in the accountId.
    records.add(
        new Hostile(
            "h\u00002",
            edition("h2", 0, 0.9, "review").replace("\"h2\"", "\"h\\u00002\""),
            EditionReader.NOT_A_DECISION));
    records.add(
        new Hostile(
            "h3",
            edition("h3", 0, 0.9, "review").replace("acct-h", "acct\\u0000h"),
            EditionReader.NOT_A_DECISION));
    // Invalid UTF-8 in the value, and in the key of a valid value.
    byte[] broken = bytes(edition("h4", 0, 0.9, "review").replace("acct-h", "acct-XX"));
    int at = new String(broken, StandardCharsets.ISO_8859_1).indexOf("XX");
    broken[at] = (byte) 0xC3;
    broken[at + 1] = (byte) 0x28;
    records.add(new Hostile(bytes("h4"), broken, EditionReader.INVALID_JSON));
    records.add(
        new Hostile(
            new byte[] {'h', '5', (byte) 0xFF},
            bytes(edition("h5", 0, 0.9, "review")),
            EditionReader.KEY_MISMATCH));
    // Oversized: a decisionId no index row can hold, and a 600 KB value that is no decision.
    String longId = randomText(new Random(5), 20_000);
    records.add(new Hostile(longId, edition(longId, 0, 0.9, "review"), CaseStore.UNSTORABLE));
    records.add(
        new Hostile(
            "h6",
            "{\"decisionId\":\"h6\",\"padding\":\"" + randomText(new Random(6), 600_000) + "\"}",
            EditionReader.NOT_A_DECISION));
    // Wrong types and missing fields.
    records.add(
        new Hostile(
            "h7",
            edition("h7", 0, 0.9, "review").replace("\"version\":0", "\"version\":\"0\""),
            EditionReader.NOT_A_DECISION));
    records.add(
        new Hostile(
            "h7",
            edition("h7", 0, 0.9, "review").replace("\"score\":0.9", "\"score\":[0.9]"),
            EditionReader.NOT_A_DECISION));
    records.add(
        new Hostile(
            "h7",
            edition("h7", 0, 0.9, "review").replaceFirst(",\"windowEnd\":\"[^\"]*\"", ""),
            EditionReader.NOT_A_DECISION));
    records.add(new Hostile("h7", "[1,2,3]", EditionReader.INVALID_JSON));
    records.add(new Hostile("h7", null, EditionReader.NOT_A_DECISION));
    // Huge numbers: a version past a long, a score past a double, a window past PostgreSQL's
    // timestamps; and the largest version a long holds, which is a version like any other.
    records.add(
        new Hostile(
            "h8",
            edition("h8", 0, 0.9, "review")
                .replace("\"version\":0", "\"version\":99999999999999999999999"),
            EditionReader.NOT_A_DECISION));
    records.add(
        new Hostile(
            "h8",
            edition("h8", 0, 0.9, "review").replace("\"score\":0.9", "\"score\":1e999"),
            EditionReader.NOT_A_DECISION));
    records.add(
        new Hostile(
            "h8",
            edition("h8", 0, 0.9, "review")
                .replace(
                    "\"windowStart\":\"" + Editions.WINDOW_START + "\"",
                    "\"windowStart\":\"+999999-01-01T00:00:00Z\""),
            CaseStore.UNSTORABLE));
    records.add(new Hostile("h9", edition("h9", Long.MAX_VALUE, 0.9, "review"), "applied"));
    // After all of it, consumption goes on.
    records.add(new Hostile("h10", edition("h10", 0, 0.8, "review"), "applied"));
    return records;
  }

  private static String randomText(Random random, int length) {
    String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    StringBuilder text = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      text.append(alphabet.charAt(random.nextInt(alphabet.length())));
    }
    return text.toString();
  }

  private static void produce(String topic, List<Hostile> records) {
    Properties properties = new Properties();
    properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    properties.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 1024 * 1024);
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(properties)) {
      for (Hostile record : records) {
        producer.send(new ProducerRecord<>(topic, record.key(), record.value()));
      }
      producer.flush();
    }
  }

  @Test
  public void everyRecordOfAHostileTopicIsAccountedForAndNoneWedgesTheConsumer() throws Exception {
    String topic = "act.hostile";
    Path state = ActConsumerIT.stateDir("hostile");
    List<Hostile> records = topic();
    EmbeddedKafka.createTopics(broker.bootstrapServers(), 1, List.of(topic), Map.of());
    produce(topic, records);
    Path database = state.resolve("db");
    Files.createDirectories(database);
    try (LocalPostgres postgres = LocalPostgres.start(database, System.out);
        Tables tables = new Tables(postgres.jdbcUrl())) {
      ActSettings settings =
          ActConsumerIT.settings(state, broker.bootstrapServers(), topic, postgres.jdbcUrl());
      ActSummary summary = new ActConsumer(settings, System.out).run();

      // Where each offset ended: one table each, or a redelivery.
      Map<Long, String> where = new TreeMap<>();
      for (String offset : tables.rows("SELECT kafka_offset FROM inbox")) {
        assertThat(where.put(Long.parseLong(offset), "applied"), is((String) null));
      }
      for (String offset : tables.rows("SELECT kafka_offset FROM conflicts")) {
        assertThat(where.put(Long.parseLong(offset), "conflict"), is((String) null));
      }
      for (String row : tables.rows("SELECT kafka_offset, reason FROM rejected")) {
        String[] fields = row.split(" ");
        assertThat(row, where.put(Long.parseLong(fields[0]), fields[1]), is((String) null));
      }
      Map<Long, String> expected = new TreeMap<>();
      for (int offset = 0; offset < records.size(); offset++) {
        String outcome = records.get(offset).outcome();
        if (!outcome.equals("redelivered")) {
          expected.put((long) offset, outcome);
        }
      }
      assertThat(where, is(expected));
      assertThat(summary.read(), is((long) records.size()));
      assertThat(
          summary.applied()
              + summary.redelivered()
              + summary.conflicts()
              + summary.stale()
              + summary.unsupported()
              + summary.unstorable(),
          is(summary.read()));
      assertThat(summary.redelivered(), is(1L));
      assertThat(summary.unstorable(), is(2L));
      assertThat(summary.offsets(), is(Map.of(0, (long) records.size())));
      assertThat(
          tables.rows("SELECT decision_id, status FROM cases ORDER BY 1"),
          is(List.of("h1 open", "h10 open", "h9 open")));
      // The rejected rows keep what PostgreSQL can hold of each record, and say why.
      assertThat(
          tables.count(
              "SELECT count(*) FROM rejected WHERE reason = 'unstorable'"
                  + " AND detail LIKE 'PostgreSQL cannot store it (SQLState %'"),
          is(2L));

      // Read again from the start: every record is a redelivery and nothing changes.
      List<String> after = tables.sideEffect();
      ActSummary again = new ActConsumer(settings.withReplay(true), System.out).run();
      assertThat(again.read(), is((long) records.size()));
      assertThat(again.redelivered(), is((long) records.size()));
      assertThat(tables.sideEffect(), is(after));
    } finally {
      LocalPostgres.stop(database, System.out);
    }
  }
}
