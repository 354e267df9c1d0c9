package dev.tidemark.launcher;

import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.io.kafka.KafkaCloudEvents;
import dev.tidemark.pipelines.io.kafka.KafkaSinks;
import dev.tidemark.testkit.EmbeddedKafka;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.function.Predicate;
import org.apache.beam.runners.flink.FlinkPipelineOptions;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.joda.time.Duration;

/**
 * Drives an unbounded (streaming) run to a known end, for the Flink live demo, the tests and the
 * benchmarks: end-of-stream markers move every partition's watermark past the last window, then
 * {@link #awaitQuiet} waits until every output is committed in its topic.
 */
public final class LiveRun {
  /** The CloudEvent type of end-of-stream markers; not a payment type, so it is dead-lettered. */
  public static final String END_OF_STREAM_TYPE = "tidemark.end-of-stream";

  /** The CloudEvent source of end-of-stream markers; their ids are {@code end-of-stream-N}. */
  public static final String END_MARKER_SOURCE = "/tidemark/live-run";

  /** How often {@link #awaitQuiet} reads the output topics. */
  private static final long POLL_MILLIS = 500;

  private LiveRun() {}

  /**
   * Creates the input topic of {@code options} (kept forever: replayed events carry event times in
   * the past, which {@code retention.ms} would delete) and every topic the run writes ({@link
   * KafkaSinks#outputTopics}), each with {@code partitions} partitions, on the broker at {@code
   * --kafkaBootstrapServers}. Returns the four outputs' topics by output name ({@code decisions},
   * {@code dead-letters}, {@code duplicates}, {@code too-late}).
   */
  public static Map<String, String> createTopics(TidemarkOptions options, int partitions) {
    EmbeddedKafka.createTopics(
        options.getKafkaBootstrapServers(),
        partitions,
        List.of(options.getKafkaInputTopic()),
        Map.of("retention.ms", "-1"));
    EmbeddedKafka.createTopics(
        options.getKafkaBootstrapServers(),
        partitions,
        new ArrayList<>(KafkaSinks.outputTopics(options).values()),
        Map.of());
    return KafkaSinks.topics(options);
  }

  /**
   * Sends one end-of-stream marker to every partition of {@code topic}: a CloudEvent of type {@link
   * #END_OF_STREAM_TYPE} whose {@code time} is {@code after} the last event, so the partition's
   * watermark passes every window and its allowed lateness. The pipeline dead-letters each marker
   * ({@code unsupported_type}), so it is accounted for like any other record. Returns the number of
   * markers sent.
   */
  public static int sendEndMarkers(
      KafkaClients clients, String topic, long lastEventTimeMillis, Duration after) {
    Map<String, Object> config = clients.merged(new HashMap<>());
    config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    String time = Instant.ofEpochMilli(lastEventTimeMillis + after.getMillis()).toString();
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config)) {
      int partitions = producer.partitionsFor(topic).size();
      for (int partition = 0; partition < partitions; partition++) {
        String marker =
            "{\"specversion\":\"1.0\",\"id\":\"end-of-stream-"
                + partition
                + "\",\"source\":\""
                + END_MARKER_SOURCE
                + "\",\"type\":\""
                + END_OF_STREAM_TYPE
                + "\",\"time\":\""
                + time
                + "\"}";
        ProducerRecord<byte[], byte[]> record =
            new ProducerRecord<>(
                topic, partition, null, null, marker.getBytes(StandardCharsets.UTF_8));
        record
            .headers()
            .add(
                "content-type",
                KafkaCloudEvents.STRUCTURED_CONTENT_TYPE.getBytes(StandardCharsets.UTF_8));
        producer.send(record).get();
      }
      return partitions;
    } catch (ExecutionException e) {
      throw new IllegalStateException("cannot send end-of-stream markers: " + e.getCause(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while sending end-of-stream markers", e);
    }
  }

  /**
   * How long outputs must stay unchanged before {@link #awaitQuiet} takes them as final, for a
   * Flink job of {@code options}: the transactional sink makes records visible only when a
   * checkpoint completes, so two checkpoint intervals ({@code --checkpointingInterval}) without a
   * change, and a second for the checkpoint itself; at least three seconds.
   */
  public static Duration quietPeriod(PipelineOptions options) {
    Long interval = options.as(FlinkPipelineOptions.class).getCheckpointingInterval();
    long millis = interval == null || interval < 0 ? 0 : interval;
    return Duration.millis(Math.max(3000, 2 * millis + 1000));
  }

  /**
   * Polls the output topics ({@code read_committed}) every half second until every end-of-stream
   * marker has reached the dead-letter topic and no output changed for {@code quiet} (see {@link
   * #quietPeriod}), and returns what is committed. A running Flink job does not report its
   * counters, and after a restart they count only the current attempt, so completion is judged on
   * the outputs. Throws after {@code timeout}, or as soon as {@code checkJob}, called before every
   * poll, throws (for a job that has failed).
   *
   * @param topics output name ({@code decisions}, {@code dead-letters}, {@code duplicates}, {@code
   *     too-late}) to topic
   */
  public static Map<String, List<ConsumerRecord<byte[], byte[]>>> awaitQuiet(
      KafkaClients clients,
      Map<String, String> topics,
      int markers,
      Duration timeout,
      Duration quiet,
      Runnable checkJob)
      throws InterruptedException {
    return awaitQuiet(clients, topics, markers, timeout, quiet, checkJob, committed -> true);
  }

  /**
   * {@link #awaitQuiet(KafkaClients, Map, int, Duration, Duration, Runnable)}, and also until
   * {@code complete} holds for what is committed (by output name): for a caller that knows an
   * output it must see, such as a window's on-time pane, which a loaded machine can deliver after a
   * quiet period.
   */
  public static Map<String, List<ConsumerRecord<byte[], byte[]>>> awaitQuiet(
      KafkaClients clients,
      Map<String, String> topics,
      int markers,
      Duration timeout,
      Duration quiet,
      Runnable checkJob,
      Predicate<Map<String, List<ConsumerRecord<byte[], byte[]>>>> complete)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.getMillis() * 1_000_000L;
    Map<String, Integer> previous = Map.of();
    long unchangedSince = System.nanoTime();
    int polls = 0;
    Map<String, KafkaFeed.TopicReader> readers = new LinkedHashMap<>();
    try {
      topics.forEach((name, topic) -> readers.put(name, new KafkaFeed.TopicReader(clients, topic)));
      while (true) {
        checkJob.run();
        Map<String, Integer> sizes = new LinkedHashMap<>();
        readers.forEach((name, reader) -> sizes.put(name, reader.readToEnd()));
        long seen =
            readers.get("dead-letters").records().stream()
                .filter(
                    r -> new String(r.value(), StandardCharsets.UTF_8).contains(END_OF_STREAM_TYPE))
                .count();
        if (!sizes.equals(previous)) {
          unchangedSince = System.nanoTime();
        }
        previous = sizes;
        if (seen >= markers
            && System.nanoTime() - unchangedSince >= quiet.getMillis() * 1_000_000L) {
          Map<String, List<ConsumerRecord<byte[], byte[]>>> committed = new LinkedHashMap<>();
          readers.forEach((name, reader) -> committed.put(name, reader.records()));
          if (complete.test(committed)) {
            return committed;
          }
        }
        if (++polls % 20 == 0) {
          System.out.printf(
              "  ... committed so far %s, end markers %d of %d%n", sizes, seen, markers);
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "the streaming run did not complete within "
                  + timeout
                  + ": committed "
                  + sizes
                  + ", end markers seen "
                  + seen
                  + " of "
                  + markers);
        }
        Thread.sleep(POLL_MILLIS);
      }
    } finally {
      readers.values().forEach(KafkaFeed.TopicReader::close);
    }
  }
}
