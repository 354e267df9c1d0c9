package dev.tidemark.pipelines.io.kafka;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.hasEntry;
import static org.hamcrest.Matchers.hasKey;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.Assert.assertThrows;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tidemark.pipelines.Outputs;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.testkit.EmbeddedKafka;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Decision.ModelRef;
import dev.tidemark.transforms.values.DuplicateRecord;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.PaymentFeatures;
import dev.tidemark.transforms.values.TooLateRecord;
import io.cloudevents.CloudEvent;
import io.cloudevents.SpecVersion;
import io.cloudevents.kafka.CloudEventDeserializer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.io.kafka.KafkaIO;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PDone;
import org.apache.beam.sdk.values.TimestampedValue;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.joda.time.Instant;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Both Kafka sinks against a real broker: their producer settings, every record of a bundle landing
 * once with its headers, and the decisions topic in each output format.
 */
@RunWith(JUnit4.class)
public class KafkaSinksIT {
  private static final int RECORDS = 2_000;
  private static final ObjectMapper MAPPER = new ObjectMapper();

  @Test
  public void theIdempotentSinkLingersWithinABundleAndLandsEveryRecordOnce() throws Exception {
    String topic = "sink.idempotent";
    try (EmbeddedKafka broker = EmbeddedKafka.start()) {
      TidemarkOptions options = options(broker.bootstrapServers(), "--kafkaSinkMode=idempotent");
      KafkaClients clients = KafkaClients.from(options);
      KafkaIO.Write<String, HeaderedValue> write = KafkaSinks.idempotentWrite(topic, clients);
      Map<String, Object> producer = write.getWriteRecordsTransform().getProducerConfig();
      assertThat(producer, hasEntry(ProducerConfig.ACKS_CONFIG, (Object) "all"));
      assertThat(producer, hasEntry(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, (Object) true));
      assertThat(
          producer,
          hasEntry(ProducerConfig.LINGER_MS_CONFIG, (Object) KafkaSinks.IDEMPOTENT_LINGER_MS));
      assertThat(producer, not(hasKey(ProducerConfig.TRANSACTIONAL_ID_CONFIG)));

      EmbeddedKafka.createTopics(broker.bootstrapServers(), 2, List.of(topic), Map.of());
      writeRecords(options, write).waitUntilFinish();

      assertThat(
          landedOnce(EmbeddedKafka.readCommitted(clients.bootstrapServers(), topic)),
          is(expected()));
    }
  }

  @Test
  public void theTransactionalSinkCommitsABundleInOneTransactionAndRefusesAStrangersGroup()
      throws Exception {
    String topic = "sink.transactional";
    try (EmbeddedKafka broker = EmbeddedKafka.start()) {
      TidemarkOptions options =
          options(
              broker.bootstrapServers(),
              "--kafkaSinkMode=transactional",
              "--kafkaSinkShards=2",
              "--kafkaSinkGroupId=sink-test");
      KafkaClients clients = KafkaClients.from(options);
      TransactionalKafkaWrite write =
          KafkaSinks.transactionalWrite(topic, "decisions", options, clients);
      assertThat(
          write.producerConfig(),
          hasEntry(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, (Object) true));
      assertThat(write.producerConfig(), not(hasKey(ProducerConfig.LINGER_MS_CONFIG)));
      EmbeddedKafka.createTopics(broker.bootstrapServers(), 2, List.of(topic), Map.of());

      PipelineResult.State state = writeRecords(options, write).waitUntilFinish();
      assertThat(state, is(PipelineResult.State.DONE));
      assertThat(landedOnce(readCommitted(clients, topic, RECORDS)), is(expected()));
      // Each shard committed its next sequence number with its last transaction; together they
      // number every record once.
      long numbered = 0;
      try (Admin admin = Admin.create(clients.merged(new HashMap<>()))) {
        Map<TopicPartition, OffsetAndMetadata> positions =
            admin
                .listConsumerGroupOffsets("sink-test.decisions")
                .partitionsToOffsetAndMetadata()
                .get();
        assertThat(positions.keySet().size(), is(2));
        for (OffsetAndMetadata position : positions.values()) {
          String[] fields = position.metadata().split(" ");
          assertThat(fields[0], is("tidemark/2"));
          assertThat("the chain of the last record", fields[3].length(), is(64));
          numbered += Long.parseLong(fields[2]);
        }
      }
      assertThat(numbered, is((long) RECORDS));

      // A second job without the first one's state, on the same sink group, would restart the
      // numbering: the writer refuses it rather than skip its records as already written.
      Exception refused =
          assertThrows(Exception.class, () -> writeRecords(options, write).waitUntilFinish());
      assertThat(stackText(refused), containsString("--kafkaSinkGroupId"));
      assertThat(readCommitted(clients, topic, RECORDS).size(), is(RECORDS));
    }
  }

  /**
   * A restore on Flink can hand the writer a shard's records out of sequence order. Records ahead
   * of their turn wait in state, each at the cost of one append, and go out once the records before
   * them have: the topic holds every record once, in sequence order.
   */
  @Test
  public void theTransactionalWriterHoldsRecordsAheadOfTheirTurn() throws Exception {
    String topic = "sink.out-of-order";
    int records = 400;
    try (EmbeddedKafka broker = EmbeddedKafka.start()) {
      TidemarkOptions options = options(broker.bootstrapServers());
      KafkaClients clients = KafkaClients.from(options);
      EmbeddedKafka.createTopics(broker.bootstrapServers(), 1, List.of(topic), Map.of());
      // The second half arrives first, in two steps, then the first half.
      List<TransactionalKafkaWrite.Sequenced> numbered = sequenced("lineage-1", records);
      int[][] steps = {{300, 400}, {200, 300}, {0, 200}};
      List<List<TransactionalKafkaWrite.Sequenced>> batches = new ArrayList<>();
      for (int[] step : steps) {
        batches.add(numbered.subList(step[0], step[1]));
      }
      assertThat(
          writeSequenced(options, clients, topic, "out-of-order", batches).waitUntilFinish(),
          is(PipelineResult.State.DONE));

      List<String> keys = new ArrayList<>();
      for (ConsumerRecord<byte[], byte[]> record : readCommitted(clients, topic, records)) {
        keys.add(new String(record.key(), StandardCharsets.UTF_8));
      }
      List<String> inOrder = new ArrayList<>();
      for (int i = 0; i < records; i++) {
        inOrder.add("d" + i);
      }
      assertThat(keys, is(inOrder));
    }
  }

  /**
   * A restore replays records the previous attempt committed, and the writer skips them. It skips
   * only the records committed under those numbers: a replay whose numbering moved (a step that
   * re-emitted records after a restore, as happens without finished bundles) fails with the fix
   * instead of skipping one record in place of another.
   */
  @Test
  public void theTransactionalWriterSkipsOnlyTheRecordsItCommitted() throws Exception {
    String topic = "sink.restore";
    try (EmbeddedKafka broker = EmbeddedKafka.start()) {
      TidemarkOptions options = options(broker.bootstrapServers());
      KafkaClients clients = KafkaClients.from(options);
      EmbeddedKafka.createTopics(broker.bootstrapServers(), 1, List.of(topic), Map.of());
      List<TransactionalKafkaWrite.Sequenced> first = sequenced("lineage-r", 20);
      assertThat(
          writeSequenced(options, clients, topic, "restore", List.of(first.subList(0, 10)))
              .waitUntilFinish(),
          is(PipelineResult.State.DONE));

      // The same lineage from an older point: records 5 to 9 again, then 10 to 19.
      assertThat(
          writeSequenced(options, clients, topic, "restore", List.of(first.subList(5, 20)))
              .waitUntilFinish(),
          is(PipelineResult.State.DONE));
      List<String> keys = new ArrayList<>();
      for (ConsumerRecord<byte[], byte[]> record : readCommitted(clients, topic, 20)) {
        keys.add(new String(record.key(), StandardCharsets.UTF_8));
      }
      List<String> inOrder = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        inOrder.add("d" + i);
      }
      assertThat(keys, is(inOrder));

      // Numbers 15 to 24, but each one record further on (d16 under 15): record 19 is not the one
      // committed under 19.
      List<TransactionalKafkaWrite.Sequenced> shifted = new ArrayList<>();
      String chain = first.get(14).chain;
      for (int i = 15; i < 25; i++) {
        HeaderedValue value = sinkValue(i + 1);
        chain = TransactionalKafkaWrite.Sequenced.chain(chain, "d" + (i + 1), value);
        shifted.add(
            new TransactionalKafkaWrite.Sequenced("lineage-r", i, "d" + (i + 1), value, chain));
      }
      Exception refused =
          assertThrows(
              Exception.class,
              () ->
                  writeSequenced(options, clients, topic, "restore", List.of(shifted))
                      .waitUntilFinish());
      assertThat(stackText(refused), containsString("not the record committed under that number"));
      assertThat(stackText(refused), containsString("--finishBundleBeforeCheckpointing=true"));
      assertThat(readCommitted(clients, topic, 20).size(), is(20));
    }
  }

  /** A sink record's value as these tests write it. */
  private static HeaderedValue sinkValue(int i) {
    return new HeaderedValue(value(i).getBytes(StandardCharsets.UTF_8), Map.of("version", "1"));
  }

  /** Records 0 to {@code count - 1} of one shard, record {@code i} keyed {@code d<i>}. */
  private static List<TransactionalKafkaWrite.Sequenced> sequenced(String lineage, int count) {
    List<TransactionalKafkaWrite.Sequenced> records = new ArrayList<>();
    String chain = null;
    for (int i = 0; i < count; i++) {
      HeaderedValue value = sinkValue(i);
      chain = TransactionalKafkaWrite.Sequenced.chain(chain, "d" + i, value);
      records.add(new TransactionalKafkaWrite.Sequenced(lineage, i, "d" + i, value, chain));
    }
    return records;
  }

  /** Runs the writer alone on {@code batches} of shard 0's records, one arrival each. */
  private static PipelineResult writeSequenced(
      TidemarkOptions options,
      KafkaClients clients,
      String topic,
      String group,
      List<List<TransactionalKafkaWrite.Sequenced>> batches) {
    List<TestStream.Event<KV<Integer, TransactionalKafkaWrite.Sequenced>>> events =
        new ArrayList<>();
    for (List<TransactionalKafkaWrite.Sequenced> records : batches) {
      List<TimestampedValue<KV<Integer, TransactionalKafkaWrite.Sequenced>>> batch =
          new ArrayList<>();
      for (TransactionalKafkaWrite.Sequenced record : records) {
        batch.add(TimestampedValue.of(KV.of(0, record), new Instant(0)));
      }
      events.add(TestStream.ElementEvent.add(batch));
    }
    events.add(TestStream.WatermarkEvent.advanceTo(BoundedWindow.TIMESTAMP_MAX_VALUE));
    TestStream<KV<Integer, TransactionalKafkaWrite.Sequenced>> stream =
        TestStream.fromRawEvents(
            KvCoder.of(VarIntCoder.of(), TransactionalKafkaWrite.Sequenced.Coder.of()), events);
    Pipeline pipeline = Pipeline.create(options);
    pipeline
        .apply(stream)
        .apply(
            ParDo.of(
                new TransactionalKafkaWrite.Writer(topic, group, clients, new HashMap<>(), false)));
    return pipeline.run();
  }

  /**
   * Each --outputFormat in each sink mode, through {@link KafkaSinks#write} to a real broker: the
   * decisions topic holds, keyed by decisionId with the version, paneTiming and correction headers,
   * the decision JSON (json, the default) or a decision event that the SDK's Kafka deserializer
   * reads back with the decision JSON as its data.
   */
  @Test
  public void everyOutputFormatReachesTheDecisionsTopicInBothSinkModes() throws Exception {
    Instant start = Instant.parse("2026-03-01T10:00:00Z");
    Instant end = Instant.parse("2026-03-01T10:05:00Z");
    Features features =
        PaymentFeatures.of(3, 12_345, 9_000, 2, 1, end.minus(1_000), end.minus(500));
    ModelRef model = new ModelRef("default", "1", "onnx");
    List<Decision> decisions = new ArrayList<>();
    for (int pane = 0; pane < 2; pane++) {
      for (String account : List.of("acct-1", "acct-2")) {
        Instant decided = end.plus(1_000L + pane * 60_000L);
        decisions.add(
            Decision.unscored(
                    account,
                    start,
                    end,
                    pane == 0 ? "ON_TIME" : "LATE",
                    pane,
                    pane == 0,
                    false,
                    features,
                    decided)
                .withScore(0.5 + pane / 4.0, pane == 0 ? "allow" : "review", model, decided)
                .withCorrection(
                    pane == 0 ? null : new Decision.Supersedes(pane - 1, 0.5, "allow")));
      }
    }
    Map<String, Decision> byId = new TreeMap<>();
    for (Decision decision : decisions) {
      byId.put(decision.decisionId() + "/" + decision.version(), decision);
    }
    try (EmbeddedKafka broker = EmbeddedKafka.start()) {
      for (String mode : List.of("idempotent", "transactional")) {
        for (String format : List.of("json", "cloudevents-structured", "cloudevents-binary")) {
          String prefix = mode + "." + format + ".";
          List<String> args =
              new ArrayList<>(
                  List.of(
                      "--sink=kafka",
                      "--kafkaSinkMode=" + mode,
                      "--kafkaDecisionsTopic=" + prefix + "decisions",
                      "--kafkaDeadLettersTopic=" + prefix + "dead-letters",
                      "--kafkaDuplicatesTopic=" + prefix + "duplicates",
                      "--kafkaTooLateTopic=" + prefix + "too-late"));
          if (!format.equals("json")) {
            args.add("--outputFormat=" + format);
          }
          TidemarkOptions options = options(broker.bootstrapServers(), args.toArray(new String[0]));
          KafkaClients clients = KafkaClients.from(options);
          EmbeddedKafka.createTopics(
              broker.bootstrapServers(),
              2,
              List.copyOf(KafkaSinks.topics(options).values()),
              Map.of());
          Pipeline pipeline = Pipeline.create(options);
          KafkaSinks.write(
              new Outputs(
                  pipeline.apply("Decisions", Create.of(decisions)),
                  pipeline.apply("DeadLetters", Create.empty(DeadLetter.DeadLetterCoder.of())),
                  pipeline.apply(
                      "Duplicates", Create.empty(DuplicateRecord.DuplicateRecordCoder.of())),
                  pipeline.apply("TooLate", Create.empty(TooLateRecord.TooLateRecordCoder.of()))),
              options,
              clients);
          assertThat(pipeline.run().waitUntilFinish(), is(PipelineResult.State.DONE));

          String topic = options.getKafkaDecisionsTopic();
          List<ConsumerRecord<byte[], byte[]>> records =
              readCommitted(clients, topic, decisions.size());
          assertThat(prefix + "records", records.size(), is(decisions.size()));
          Map<String, Decision> landed = new TreeMap<>();
          for (ConsumerRecord<byte[], byte[]> record : records) {
            String key = new String(record.key(), StandardCharsets.UTF_8);
            String version = header(record, "version");
            Decision decision = byId.get(key + "/" + version);
            assertThat(prefix + key + "/" + version, decision, is(notNullValue()));
            landed.put(key + "/" + version, decision);
            assertThat(header(record, "paneTiming"), is(decision.paneTiming()));
            assertThat(header(record, "correction"), is(decision.correction().jsonName()));
            byte[] json = decision.toJson().getBytes(StandardCharsets.UTF_8);
            if (format.equals("json")) {
              assertThat(record.value(), is(json));
              assertThat(record.headers().lastHeader("content-type"), is(nullValue()));
              assertThat(record.headers().lastHeader("ce_id"), is(nullValue()));
              continue;
            }
            assertThat(
                header(record, "content-type"),
                startsWith(
                    format.equals("cloudevents-binary")
                        ? "application/json"
                        : "application/cloudevents+json"));
            CloudEvent event;
            try (CloudEventDeserializer deserializer = new CloudEventDeserializer()) {
              event = deserializer.deserialize(topic, record.headers(), record.value());
            }
            assertThat(event.getSpecVersion(), is(SpecVersion.V1));
            assertThat(event.getId(), is(key + "/" + version));
            assertThat(event.getType(), is("dev.tidemark.decision.v1"));
            assertThat(event.getSource(), is(URI.create("/tidemark/" + topic)));
            assertThat(event.getSubject(), is(decision.key()));
            assertThat(
                event.getTime().toInstant().toEpochMilli(),
                is(decision.decisionTime().getMillis()));
            assertThat(event.getDataContentType(), is("application/json"));
            if (format.equals("cloudevents-binary")) {
              assertThat(record.value(), is(json));
            } else {
              assertThat(
                  new String(record.value(), StandardCharsets.UTF_8),
                  containsString("\"data\":" + decision.toJson()));
            }
            assertThat(MAPPER.readTree(event.getData().toBytes()), is(MAPPER.readTree(json)));
          }
          assertThat(prefix + "decisions", landed, is(byId));
        }
      }
    }
  }

  private static String header(ConsumerRecord<byte[], byte[]> record, String name) {
    return new String(record.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
  }

  /** The records the job wrote: keys d0, d1, ... with their values. */
  private static Map<String, String> expected() {
    Map<String, String> expected = new TreeMap<>();
    for (int i = 0; i < RECORDS; i++) {
      expected.put("d" + i, value(i));
    }
    return expected;
  }

  /** The records' values by key; fails if a key landed twice or without its version header. */
  private static Map<String, String> landedOnce(List<ConsumerRecord<byte[], byte[]>> records) {
    Map<String, String> landed = new TreeMap<>();
    for (ConsumerRecord<byte[], byte[]> record : records) {
      String key = new String(record.key(), StandardCharsets.UTF_8);
      assertThat(key + " landed twice", landed.containsKey(key), is(false));
      landed.put(key, new String(record.value(), StandardCharsets.UTF_8));
      assertThat(
          new String(record.headers().lastHeader("version").value(), StandardCharsets.UTF_8),
          is("1"));
    }
    return landed;
  }

  /**
   * The topic's committed records once it holds {@code expected} of them, or after 30 s. A commit
   * returns once the transaction coordinator has logged it; the commit markers reach the topic's
   * partitions just after, and until then a read_committed reader sees none of the records.
   */
  private static List<ConsumerRecord<byte[], byte[]>> readCommitted(
      KafkaClients clients, String topic, int expected) throws InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L;
    List<ConsumerRecord<byte[], byte[]>> records =
        EmbeddedKafka.readCommitted(clients.bootstrapServers(), topic);
    while (records.size() < expected && System.nanoTime() < deadline) {
      Thread.sleep(200);
      records = EmbeddedKafka.readCommitted(clients.bootstrapServers(), topic);
    }
    return records;
  }

  private static PipelineResult writeRecords(
      TidemarkOptions options, PTransform<PCollection<KV<String, HeaderedValue>>, PDone> write) {
    Pipeline pipeline = Pipeline.create(options);
    pipeline
        .apply(Create.of(RECORDS))
        .apply("OneBundle", ParDo.of(new RecordsFn()))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), HeaderedValue.Coder.of()))
        .apply(write);
    return pipeline.run();
  }

  private static String stackText(Throwable e) {
    StringBuilder text = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      text.append(t).append('\n');
    }
    return text.toString();
  }

  private static TidemarkOptions options(String bootstrapServers, String... args) {
    List<String> all = new ArrayList<>(List.of("--runner=DirectRunner"));
    all.add("--kafkaBootstrapServers=" + bootstrapServers);
    all.addAll(List.of(args));
    return PipelineOptionsFactory.fromArgs(all.toArray(new String[0])).as(TidemarkOptions.class);
  }

  private static String value(int i) {
    return "{\"decisionId\":\"d" + i + "\",\"score\":0." + i + "}";
  }

  /** Outputs {@code n} records from one element, so that they reach the sink in one bundle. */
  private static final class RecordsFn extends DoFn<Integer, KV<String, HeaderedValue>> {
    @ProcessElement
    public void processElement(@Element Integer n, OutputReceiver<KV<String, HeaderedValue>> out) {
      for (int i = 0; i < n; i++) {
        out.output(
            KV.of(
                "d" + i,
                new HeaderedValue(
                    value(i).getBytes(StandardCharsets.UTF_8), Map.of("version", "1"))));
      }
    }
  }
}
