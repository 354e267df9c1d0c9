package dev.tidemark.launcher.it.kafka;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.launcher.Tidemark;
import dev.tidemark.pipelines.io.ReplayFile;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.io.kafka.KafkaCloudEvents;
import dev.tidemark.testkit.EmbeddedKafka;
import dev.tidemark.tools.capture.KafkaCapture;
import dev.tidemark.transforms.util.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.joda.time.Duration;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * {@code tidemark capture} against a real broker: a two-partition topic with structured, binary,
 * broken and aborted records, captured whole, by time, by offsets, and with bad options.
 */
@RunWith(JUnit4.class)
public class KafkaCaptureIT {
  private static final String TOPIC = "capture.events";

  /** Record timestamps of the fixture (ingestion times on Kafka). */
  private static final Instant T0 = Instant.parse("2026-03-01T10:00:00Z");

  private static final Instant T_100MS = T0.plusMillis(100);
  private static final Instant T_250MS = T0.plusMillis(250);
  private static final Instant T_300MS = T0.plusMillis(300);
  private static final Instant T_5375MS = T0.plusMillis(5375);
  private static final Instant T_6S = T0.plusSeconds(6);
  private static final Instant T_1H2M3500MS = T0.plusSeconds(3723).plusMillis(500);

  /** Values of the fixture. */
  private static final String E1 = event("e1", "2026-03-01T10:00:00Z", "12.10");

  private static final String E4_PRETTY =
      "{\n  \"specversion\" : \"1.0\",\n  \"id\" : \"e4\",\n  \"source\" : \"/test\",\n"
          + "  \"type\" : \"payments.transaction.v1\",\n  \"time\" : \"2026-03-01T10:00:00.100Z\",\n"
          + "  \"data\" : {\"accountId\" : \"acct-1\", \"amount\" : 12.10, \"currency\" : \"GBP\"}\n}";
  private static final String E4_COMPACT =
      "{\"specversion\":\"1.0\",\"id\":\"e4\",\"source\":\"/test\","
          + "\"type\":\"payments.transaction.v1\",\"time\":\"2026-03-01T10:00:00.100Z\","
          + "\"data\":{\"accountId\":\"acct-1\",\"amount\":12.10,\"currency\":\"GBP\"}}";
  private static final String E5 = event("e5", "2026-03-01T11:02:03.500Z", "7.00");
  private static final String MALFORMED = "not json\nat all";
  private static final String BAD_SPECVERSION_DATA = "{\"accountId\":\"acct-9\"}";
  private static final String DIRECTIVE_SHAPED = "{\"advanceProcessingTime\":\"PT1H\"}";

  private static EmbeddedKafka broker;

  /** Offsets of the fixture records, by name. */
  private static final Map<String, Long> OFFSETS = new HashMap<>();

  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  static String event(String id, String time, String amount) {
    return "{\"specversion\":\"1.0\",\"id\":\""
        + id
        + "\",\"source\":\"/test\",\"type\":\"payments.transaction.v1\",\"time\":\""
        + time
        + "\",\"data\":{\"accountId\":\"acct-1\",\"amount\":"
        + amount
        + ",\"currency\":\"GBP\"}}";
  }

  @BeforeClass
  public static void produceFixture() throws Exception {
    broker = EmbeddedKafka.start();
    broker.createTopics(2, List.of(TOPIC, "capture.empty"));
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerConfig(null))) {
      send(producer, "e1", structured(0, T0, E1));
      send(producer, "e2", binary(1, T0, "e2", "1.0", "2026-03-01T10:00:00Z", "3.50"));
      send(producer, "e3", binary(0, T_250MS, "e3", "1.0", "2026-03-01T10:00:00.250Z", "4.00"));
    }
    // An aborted transaction on partition 1: a read_committed capture never sees it.
    try (KafkaProducer<byte[], byte[]> transactional =
        new KafkaProducer<>(producerConfig("capture-test"))) {
      transactional.initTransactions();
      transactional.beginTransaction();
      send(transactional, "aborted", structured(1, T_300MS, event("x", "2026-03-01T10:00Z", "1")));
      transactional.abortTransaction();
    }
    // The broker writes the abort marker after abortTransaction returns: wait for it (the record's
    // offset + 2), or it could land after the next records and move partition 1's end offset.
    awaitEndOffset(new TopicPartition(TOPIC, 1), OFFSETS.get("aborted") + 2);
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerConfig(null))) {
      send(producer, "e4", structured(1, T_100MS, E4_PRETTY));
      send(producer, "malformed", structured(0, T_5375MS, MALFORMED));
      send(producer, "badSpecversion", binary(1, T_6S, "e6", "9.9", "2026-03-01T10:00:06Z", null));
      send(producer, "directiveShaped", structured(1, T_6S, DIRECTIVE_SHAPED));
      send(producer, "e5", structured(0, T_1H2M3500MS, E5));
    }
  }

  @AfterClass
  public static void stopBroker() {
    if (broker != null) {
      broker.close();
    }
  }

  private static Map<String, Object> producerConfig(String transactionalId) {
    Map<String, Object> config = new HashMap<>();
    config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    if (transactionalId != null) {
      config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    }
    return config;
  }

  private static void awaitEndOffset(TopicPartition partition, long offset) throws Exception {
    Map<String, Object> config = new HashMap<>();
    config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config)) {
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (consumer.endOffsets(List.of(partition)).get(partition) < offset) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(partition + " did not reach offset " + offset);
        }
        Thread.sleep(20);
      }
    }
  }

  private static void send(
      KafkaProducer<byte[], byte[]> producer, String name, ProducerRecord<byte[], byte[]> record)
      throws Exception {
    RecordMetadata sent = producer.send(record).get();
    OFFSETS.put(name, sent.offset());
  }

  private static ProducerRecord<byte[], byte[]> structured(
      int partition, Instant timestamp, String value) {
    ProducerRecord<byte[], byte[]> record =
        new ProducerRecord<>(
            TOPIC,
            partition,
            timestamp.toEpochMilli(),
            null,
            value.getBytes(StandardCharsets.UTF_8));
    record.headers().add("content-type", bytes(KafkaCloudEvents.STRUCTURED_CONTENT_TYPE));
    return record;
  }

  /** A binary-mode record as a producer outside Tidemark writes it: ce_* headers, data as value. */
  private static ProducerRecord<byte[], byte[]> binary(
      int partition, Instant timestamp, String id, String specversion, String time, String amount) {
    String data =
        amount == null
            ? BAD_SPECVERSION_DATA
            : "{\"accountId\":\"acct-2\",\"amount\":" + amount + ",\"currency\":\"EUR\"}";
    ProducerRecord<byte[], byte[]> record =
        new ProducerRecord<>(TOPIC, partition, timestamp.toEpochMilli(), null, bytes(data));
    record.headers().add("ce_specversion", bytes(specversion));
    record.headers().add("ce_id", bytes(id));
    record.headers().add("ce_source", bytes("/test/binary"));
    record.headers().add("ce_type", bytes("payments.transaction.v1"));
    record.headers().add("ce_time", bytes(time));
    record.headers().add("content-type", bytes("application/json"));
    return record;
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private KafkaCapture capture() {
    return KafkaCapture.of(KafkaClients.plaintext(broker.bootstrapServers()), TOPIC);
  }

  private static List<String> lines(Path file) throws IOException {
    return Files.readAllLines(file, StandardCharsets.UTF_8);
  }

  private static String advance(String duration) {
    return "{\"advanceProcessingTime\":\"" + duration + "\"}";
  }

  /** A binary record's line: the structured form of the same event. */
  private static void assertConvertedBinary(String line, String id, String time, String amount)
      throws IOException {
    JsonNode node = Json.MAPPER.readTree(line);
    assertThat(line, node.get("specversion").asText(), is("1.0"));
    assertThat(line, node.get("id").asText(), is(id));
    assertThat(line, node.get("source").asText(), is("/test/binary"));
    assertThat(line, node.get("type").asText(), is("payments.transaction.v1"));
    assertThat(line, Instant.parse(node.get("time").asText()), is(Instant.parse(time)));
    assertThat(
        line,
        node.get("data"),
        is(
            Json.MAPPER.readTree(
                "{\"accountId\":\"acct-2\",\"amount\":" + amount + ",\"currency\":\"EUR\"}")));
  }

  @Test
  public void capturesTheWholeTopicInTimestampOrderWithTheGapsAsDirectives() throws Exception {
    Path file = folder.getRoot().toPath().resolve("incident/whole.ndjson");

    KafkaCapture.Report report = capture().writeTo(file);

    List<String> lines = lines(file);
    assertThat(String.join("\n", lines), lines.size(), is(13));
    assertThat(lines.get(0), is(E1));
    assertConvertedBinary(lines.get(1), "e2", "2026-03-01T10:00:00Z", "3.50");
    assertThat(lines.get(2), is(advance("PT0.1S")));
    assertThat(lines.get(3), is(E4_COMPACT));
    assertThat(lines.get(4), is(advance("PT0.15S")));
    assertConvertedBinary(lines.get(5), "e3", "2026-03-01T10:00:00.250Z", "4.00");
    assertThat(lines.get(6), is(advance("PT5.125S")));
    assertThat(lines.get(7), is("not json at all"));
    assertThat(lines.get(8), is(advance("PT0.625S")));
    // Same timestamp: partition 1 in offset order, no directive between.
    assertThat(lines.get(9), is(BAD_SPECVERSION_DATA));
    assertThat(lines.get(10), is("[" + DIRECTIVE_SHAPED + "]"));
    assertThat(lines.get(11), is(advance("PT1H1M57.5S")));
    assertThat(lines.get(12), is(E5));

    assertThat(report.records(), is(8));
    assertThat(report.recordsByPartition(), is(Map.of(0, 4, 1, 4)));
    assertThat(report.startOffset(1), is(0L));
    assertThat(report.stopOffset(1), is(OFFSETS.get("directiveShaped") + 1));
    assertThat(report.lines(), is(13));
    assertThat(report.directives(), is(5));
    assertThat(report.binaryConverted(), is(2));
    assertThat(report.rejected(), is(1));
    assertThat(report.reserialized(), is(1));
    assertThat(report.altered(), is(2));
    assertThat(report.toString(), containsString("captured 8 records of " + TOPIC));
    assertThat(report.toString(), containsString("p0 4 [0,4), p1 4 [0,"));

    ReplayFile replay = ReplayFile.read(file, Duration.standardSeconds(30));
    assertThat(replay.lines(), is(13));
    assertThat(replay.records(), is(8));
    assertThat(replay.directives(), is(5));
    assertThat(replay.rejected(), is(0));
  }

  @Test
  public void capturesARangeOfRecordTimestampsWithTheEndExclusive() throws Exception {
    Path file = folder.getRoot().toPath().resolve("by-time.ndjson");

    KafkaCapture.Report report = capture().withFromTime(T_100MS).withToTime(T_6S).writeTo(file);

    List<String> lines = lines(file);
    assertThat(String.join("\n", lines), lines.size(), is(5));
    assertThat(lines.get(0), is(E4_COMPACT));
    assertThat(lines.get(1), is(advance("PT0.15S")));
    assertConvertedBinary(lines.get(2), "e3", "2026-03-01T10:00:00.250Z", "4.00");
    assertThat(lines.get(3), is(advance("PT5.125S")));
    assertThat(lines.get(4), is("not json at all"));
    assertThat(report.recordsByPartition(), is(Map.of(0, 2, 1, 1)));
    assertThat(report.startOffset(0), is(OFFSETS.get("e3")));
    assertThat(report.stopOffset(0), is(OFFSETS.get("e5")));
    // Partition 1's abort marker carries the broker's clock (after --to): it must not end the
    // range.
    assertThat(report.startOffset(1), is(OFFSETS.get("e4")));
    assertThat(report.stopOffset(1), is(OFFSETS.get("badSpecversion")));
    assertThat(ReplayFile.read(file, Duration.standardSeconds(30)).records(), is(3));
  }

  @Test
  public void capturesOffsetRangesOfTheNamedPartitionsThroughTheCommandLine() throws Exception {
    Path file = folder.getRoot().toPath().resolve("by-offsets.ndjson");
    ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    PrintStream originalOut = System.out;
    int exit;
    try {
      System.setOut(new PrintStream(stdout, true, StandardCharsets.UTF_8));
      exit =
          Tidemark.execute(
              "capture",
              "--output=" + file,
              "--fromOffsets=0:" + OFFSETS.get("malformed") + ",1:" + OFFSETS.get("e4"),
              "--toOffsets=0:" + OFFSETS.get("e5"),
              "--kafkaBootstrapServers=" + broker.bootstrapServers(),
              "--kafkaInputTopic=" + TOPIC);
    } finally {
      System.setOut(originalOut);
    }

    assertThat(exit, is(0));
    assertThat(
        lines(file),
        is(
            List.of(
                E4_COMPACT,
                advance("PT5.275S"),
                "not json at all",
                advance("PT0.625S"),
                BAD_SPECVERSION_DATA,
                "[" + DIRECTIVE_SHAPED + "]")));
    String report = stdout.toString(StandardCharsets.UTF_8);
    assertThat(report, containsString("captured 4 records of " + TOPIC));
    assertThat(report, containsString("p0 1 ["));
    assertThat(report, containsString("p1 3 ["));
    assertThat(report, containsString("6 lines, 2 directives"));

    // One partition only, from an offset to its end.
    KafkaCapture.Report single =
        capture()
            .withFromOffsets(Map.of(1, OFFSETS.get("badSpecversion")))
            .writeTo(folder.getRoot().toPath().resolve("p1.ndjson"));
    assertThat(single.recordsByPartition(), is(Map.of(1, 2)));
  }

  @Test
  public void anEmptyTopicGivesAnEmptyFile() throws Exception {
    Path file = folder.getRoot().toPath().resolve("empty.ndjson");
    KafkaCapture.Report report =
        KafkaCapture.of(KafkaClients.plaintext(broker.bootstrapServers()), "capture.empty")
            .writeTo(file);
    assertThat(Files.size(file), is(0L));
    assertThat(report.records(), is(0));
    assertThat(report.toString(), containsString("record times none"));
  }

  @Test
  public void badOptionsExitWithTwoAndSayWhatIsWrong() throws Exception {
    String servers = "--kafkaBootstrapServers=" + broker.bootstrapServers();
    String output = "--output=" + folder.getRoot().toPath().resolve("bad.ndjson");
    String topic = "--kafkaInputTopic=" + TOPIC;
    List<String[]> cases = new ArrayList<>();
    List<String> expected = new ArrayList<>();
    cases.add(new String[] {"capture", output, servers, "--kafkaInputTopic=no.such.topic"});
    expected.add("topic 'no.such.topic' does not exist");
    cases.add(new String[] {"capture", output, servers, topic, "--from=yesterday"});
    expected.add("--from=yesterday: not an RFC 3339 timestamp");
    cases.add(new String[] {"capture", output, servers, topic, "--fromOffsets=0-100"});
    expected.add("--fromOffsets=0-100: '0-100' is malformed; expected PARTITION:OFFSET");
    cases.add(new String[] {"capture", output, servers, topic, "--toOffsets=7:1"});
    expected.add("partition 7 of --fromOffsets/--toOffsets does not exist");
    cases.add(new String[] {"capture", output, servers, topic, "--toOffsets=0:999"});
    expected.add("--toOffsets: offset 999 of partition 0 is outside the partition");
    cases.add(
        new String[] {
          "capture", output, servers, topic, "--from=2026-03-01T10:00:06Z", "--to=2026-03-01T10:00Z"
        });
    expected.add("must be before --to=");
    cases.add(
        new String[] {
          "capture", output, servers, topic, "--from=2026-03-01T10:00Z", "--fromOffsets=0:1"
        });
    expected.add("use either --from or --fromOffsets, not both");
    cases.add(new String[] {"capture", output, servers, topic, "--kafkaNoSuchOption=1"});
    expected.add("kafkaNoSuchOption");

    PrintStream originalErr = System.err;
    try {
      for (int i = 0; i < cases.size(); i++) {
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        System.setErr(new PrintStream(stderr, true, StandardCharsets.UTF_8));
        int exit = Tidemark.execute(cases.get(i));
        System.err.flush();
        String message = stderr.toString(StandardCharsets.UTF_8);
        assertThat(String.join(" ", cases.get(i)), exit, is(2));
        assertThat(message, containsString(expected.get(i)));
      }
    } finally {
      System.setErr(originalErr);
    }
    assertThat(Files.exists(folder.getRoot().toPath().resolve("bad.ndjson")), is(false));
  }

  @Test
  public void compactJsonKeepsTheTextOfNumbersAndRefusesWhatIsNotOneJsonValue() {
    assertThat(
        new String(
            KafkaCapture.compactJson(bytes("{ \"a\" : 1.50e3,\n \"b\": [ 12.10, \"x\\ny\" ] }")),
            StandardCharsets.UTF_8),
        is("{\"a\":1.50e3,\"b\":[12.10,\"x\\ny\"]}"));
    assertThat(KafkaCapture.compactJson(bytes("{\"a\":1}\n{\"b\":2}")) == null, is(true));
    assertThat(KafkaCapture.compactJson(bytes("{\"a\":\"raw\nbreak\"}")) == null, is(true));
    assertThat(KafkaCapture.compactJson(bytes("\n")) == null, is(true));
  }
}
