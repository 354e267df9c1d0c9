package dev.tidemark.pipelines.io.kafka;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.hasEntry;
import static org.hamcrest.Matchers.hasKey;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

import dev.tidemark.harness.KafkaFeed;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.testing.kafka.EmbeddedKafka;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.io.kafka.KafkaIO;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The idempotent Kafka sink against a real broker: its producer settings, and every record of a
 * bundle landing once with its headers.
 */
@RunWith(JUnit4.class)
public class KafkaSinksIT {
  private static final int RECORDS = 2_000;

  @Test
  public void theIdempotentSinkLingersWithinABundleAndLandsEveryRecordOnce() throws Exception {
    String topic = "sink.idempotent";
    try (EmbeddedKafka broker = EmbeddedKafka.start()) {
      TidemarkOptions options = options(broker.bootstrapServers(), "--kafkaSinkMode=idempotent");
      KafkaClients clients = KafkaClients.from(options);
      KafkaIO.Write<String, HeaderedValue> write =
          KafkaSinks.kafkaWrite(topic, "decisions", options, clients);
      Map<String, Object> producer = write.getWriteRecordsTransform().getProducerConfig();
      assertThat(producer, hasEntry(ProducerConfig.ACKS_CONFIG, (Object) "all"));
      assertThat(producer, hasEntry(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, (Object) true));
      assertThat(
          producer,
          hasEntry(ProducerConfig.LINGER_MS_CONFIG, (Object) KafkaSinks.IDEMPOTENT_LINGER_MS));
      assertThat(producer, not(hasKey(ProducerConfig.TRANSACTIONAL_ID_CONFIG)));

      EmbeddedKafka.createTopics(broker.bootstrapServers(), 2, List.of(topic), Map.of());
      Pipeline pipeline = Pipeline.create(options);
      pipeline
          .apply(Create.of(RECORDS))
          .apply("OneBundle", ParDo.of(new RecordsFn()))
          .setCoder(KvCoder.of(StringUtf8Coder.of(), HeaderedValue.Coder.of()))
          .apply(write);
      pipeline.run().waitUntilFinish();

      Map<String, String> expected = new TreeMap<>();
      for (int i = 0; i < RECORDS; i++) {
        expected.put("d" + i, value(i));
      }
      Map<String, String> landed = new TreeMap<>();
      for (ConsumerRecord<byte[], byte[]> record : KafkaFeed.readAll(clients, topic)) {
        String key = new String(record.key(), StandardCharsets.UTF_8);
        assertThat(key + " landed twice", landed.containsKey(key), is(false));
        landed.put(key, new String(record.value(), StandardCharsets.UTF_8));
        assertThat(
            new String(record.headers().lastHeader("version").value(), StandardCharsets.UTF_8),
            is("1"));
      }
      assertThat(landed, is(expected));
    }
  }

  @Test
  public void theTransactionalSinkKeepsKafkasDefaultLinger() {
    // No broker needed: the producer settings are fixed when the pipeline is built.
    TidemarkOptions options = options("localhost:9092", "--kafkaSinkMode=transactional");
    Map<String, Object> producer =
        KafkaSinks.kafkaWrite(
                "sink.transactional", "decisions", options, KafkaClients.from(options))
            .getWriteRecordsTransform()
            .getProducerConfig();
    assertThat(producer, hasEntry(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, (Object) true));
    assertThat(producer, not(hasKey(ProducerConfig.LINGER_MS_CONFIG)));
  }

  private static TidemarkOptions options(String bootstrapServers, String mode) {
    return PipelineOptionsFactory.fromArgs(
            "--runner=DirectRunner", "--kafkaBootstrapServers=" + bootstrapServers, mode)
        .as(TidemarkOptions.class);
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
