package dev.tidemark.launcher.it.kafka;

import static org.junit.Assert.assertThrows;

import dev.tidemark.launcher.KafkaFeed;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.io.kafka.KafkaCloudEvents;
import dev.tidemark.pipelines.io.kafka.KafkaSource;
import dev.tidemark.testkit.EmbeddedKafka;
import dev.tidemark.transforms.values.RawRecord;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * A Kafka read given its partitions ({@link KafkaSource#withPartitions}) reads those and no other,
 * on an embedded broker: a cluster job's read named by its partition count reads what it counted.
 */
@RunWith(JUnit4.class)
public class KafkaSourcePartitionsIT {
  private static final String TOPIC = "partitions.events";

  private static EmbeddedKafka broker;

  @BeforeClass
  public static void startBroker() throws Exception {
    broker = EmbeddedKafka.start();
    broker.createTopics(2, List.of(TOPIC));
    Map<String, Object> config = new HashMap<>();
    config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(config, new StringSerializer(), new ByteArraySerializer())) {
      // The second partition's records first: a read of both would meet them before the first's.
      for (int partition : new int[] {1, 0}) {
        for (int i = 0; i < 3; i++) {
          producer.send(record(partition, "p" + partition + "-" + i)).get();
        }
      }
    }
  }

  @AfterClass
  public static void stopBroker() {
    if (broker != null) {
      broker.close();
    }
  }

  private static ProducerRecord<String, byte[]> record(int partition, String id) {
    String event =
        "{\"specversion\":\"1.0\",\"id\":\""
            + id
            + "\",\"source\":\"test\",\"type\":\"t\",\"time\":\"2026-01-01T00:00:00Z\"}";
    return KafkaFeed.structuredRecord(
        TOPIC, partition, null, id, event.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  public void aReadOfOnePartitionReadsThatPartitionOnly() throws Exception {
    Pipeline pipeline =
        Pipeline.create(PipelineOptionsFactory.fromArgs("--runner=DirectRunner").create());
    PCollection<String> origins =
        pipeline
            .apply(
                "ReadKafka",
                KafkaSource.of(
                        KafkaClients.plaintext(broker.bootstrapServers()), TOPIC, "partitions-test")
                    .withPartitions(1)
                    .withMaxRecords(3))
            .apply("Origins", MapElements.into(TypeDescriptors.strings()).via(RawRecord::origin));
    PAssert.that(origins)
        .containsInAnyOrder(
            KafkaCloudEvents.origin(TOPIC, 0, 0),
            KafkaCloudEvents.origin(TOPIC, 0, 1),
            KafkaCloudEvents.origin(TOPIC, 0, 2));
    BoundedReads.runToEnd(pipeline);
  }

  @Test
  public void aReadOfNoPartitionIsRefused() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                KafkaSource.of(
                        KafkaClients.plaintext(broker.bootstrapServers()), TOPIC, "partitions-test")
                    .withPartitions(0));
    org.hamcrest.MatcherAssert.assertThat(
        e.getMessage(), org.hamcrest.Matchers.containsString("at least one partition"));
  }
}
