package dev.tidemark.pipelines.io.kafka;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import dev.tidemark.harness.KafkaFeed;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.testing.kafka.EmbeddedKafka;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The answer to Beam's EOS writer-cache defect, on a real broker: a producer handed back in the
 * middle of a failed attempt's transaction can begin the next one, and only committed records are
 * visible. Also the construction checks that refuse unsafe Kafka/Flink combinations.
 */
@RunWith(JUnit4.class)
public class RecoveringProducerIT {
  private static EmbeddedKafka broker;

  @BeforeClass
  public static void start() {
    broker = EmbeddedKafka.start();
    broker.createTopics(1, List.of("eos.out"));
  }

  @AfterClass
  public static void stop() {
    broker.close();
  }

  private static Map<String, Object> config(String transactionalId) {
    Map<String, Object> config = new HashMap<>();
    config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    return config;
  }

  private static ProducerRecord<byte[], byte[]> record(String value) {
    return new ProducerRecord<>("eos.out", value.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  public void aPlainProducerReusedMidTransactionFailsAsInBeam() {
    try (Producer<byte[], byte[]> producer = new KafkaProducer<>(config("plain"))) {
      producer.initTransactions();
      producer.beginTransaction();
      producer.send(record("lost-attempt"));
      // The failed attempt never commits; the restarted attempt begins again on the same producer.
      Exception e = assertThrows(Exception.class, producer::beginTransaction);
      assertThat(e.getMessage(), containsString("IN_TRANSACTION to state IN_TRANSACTION"));
    }
  }

  @Test
  public void recoveringProducerAbortsTheStaleTransactionAndOnlyCommittedRecordsAreVisible() {
    RecoveringProducer<byte[], byte[]> producer =
        new RecoveringProducer<>(new KafkaProducer<>(config("recovering")));
    try (producer) {
      producer.initTransactions();
      producer.beginTransaction();
      producer.send(record("failed-attempt"));
      producer.beginTransaction();
      producer.send(record("retried"));
      producer.commitTransaction();
    }
    assertThat(producer.recoveredTransactions(), is(1L));
    List<String> visible = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> r :
        KafkaFeed.readAll(KafkaClients.plaintext(broker.bootstrapServers()), "eos.out")) {
      visible.add(new String(r.value(), StandardCharsets.UTF_8));
    }
    assertThat(visible, contains("retried"));
  }

  private static TidemarkOptions options(String... args) {
    return PipelineOptionsFactory.fromArgs(args).withValidation().as(TidemarkOptions.class);
  }

  @Test
  public void unsafeCombinationsAreRefused() {
    String[] flink = {
      "--runner=FlinkRunner", "--source=kafka", "--sink=kafka", "--kafkaBootstrapServers=x:9092"
    };
    IllegalArgumentException noCheckpoints =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                KafkaChecks.checkOptions(options(concat(flink, "--kafkaSinkMode=transactional"))));
    assertThat(noCheckpoints.getMessage(), containsString("needs checkpointing"));
    IllegalArgumentException unboundedRestarts =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                KafkaChecks.checkOptions(
                    options(
                        concat(
                            flink,
                            "--kafkaSinkMode=transactional",
                            "--checkpointingInterval=1000"))));
    assertThat(unboundedRestarts.getMessage(), containsString("--numberOfExecutionRetries"));
    IllegalArgumentException defectUnfixed =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                KafkaChecks.checkOptions(
                    options(
                        concat(
                            flink,
                            "--kafkaSinkMode=transactional",
                            "--checkpointingInterval=1000",
                            "--numberOfExecutionRetries=2",
                            "--executionRetryDelay=1000",
                            "--kafkaEosRecovery=false"))));
    assertThat(defectUnfixed.getMessage(), containsString("--executionRetryDelay=70000"));
    IllegalArgumentException sameGroup =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                KafkaChecks.checkOptions(
                    options(
                        "--source=kafka",
                        "--sink=kafka",
                        "--kafkaBootstrapServers=x:9092",
                        "--kafkaSinkMode=transactional",
                        "--kafkaConsumerGroup=g",
                        "--kafkaSinkGroupId=g")));
    assertThat(sameGroup.getMessage(), containsString("must differ from --kafkaConsumerGroup"));
  }

  @Test
  public void aSinkGroupHoldingAnotherTopicsStateIsRefused() throws Exception {
    broker.createTopics(1, List.of("other.topic"));
    // Another pipeline's sink state: committed offsets of group shared-sink.decisions on
    // other.topic.
    Map<String, Object> consumer = new HashMap<>();
    consumer.put("bootstrap.servers", broker.bootstrapServers());
    consumer.put("group.id", "shared-sink.decisions");
    consumer.put(
        "key.deserializer", org.apache.kafka.common.serialization.ByteArrayDeserializer.class);
    consumer.put(
        "value.deserializer", org.apache.kafka.common.serialization.ByteArrayDeserializer.class);
    try (var c = new org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]>(consumer)) {
      var partition = new org.apache.kafka.common.TopicPartition("other.topic", 0);
      c.assign(List.of(partition));
      c.commitSync(
          Map.of(partition, new org.apache.kafka.clients.consumer.OffsetAndMetadata(0, "{}")));
    }
    TidemarkOptions options =
        options(
            "--source=kafka",
            "--sink=kafka",
            "--kafkaBootstrapServers=" + broker.bootstrapServers(),
            "--kafkaSinkMode=transactional",
            "--kafkaSinkGroupId=shared-sink");
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> KafkaChecks.checkSinkGroups(options, KafkaClients.from(options)));
    assertThat(e.getMessage(), containsString("another pipeline uses it"));
  }

  private static String[] concat(String[] first, String... rest) {
    String[] all = new String[first.length + rest.length];
    System.arraycopy(first, 0, all, 0, first.length);
    System.arraycopy(rest, 0, all, first.length, rest.length);
    return all;
  }
}
