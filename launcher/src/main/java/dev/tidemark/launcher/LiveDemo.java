package dev.tidemark.launcher;

import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.io.kafka.KafkaSinks;
import dev.tidemark.pipelines.launch.EmbeddedBroker;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.OptionChecks;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.testkit.EmbeddedKafka;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import org.apache.beam.runners.flink.EmbeddedFlinkJobsShim;
import org.apache.beam.runners.flink.FlinkRunner;
import org.apache.beam.sdk.PipelineResult;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * The local live demo, {@code --kafkaBootstrapServers=embedded}: starts a real broker in this JVM,
 * creates the topics, feeds {@code --input} (a replay file) into the input topic in mixed binary
 * and structured mode, runs the pipeline as a bounded read of exactly the fed records (so it ends
 * by itself), then reads every output topic back ({@code read_committed}) into the usual NDJSON
 * files under {@code --output}, beside {@code summary.json}.
 */
public final class LiveDemo {
  private static final int PARTITIONS = 2;

  private LiveDemo() {}

  /**
   * Runs the pipeline inside the embedded services ({@link EmbeddedBroker#requested}); returns its
   * checked summary.
   */
  public static Summary run(TidemarkOptions options) {
    OptionChecks.check(options);
    if (options.getSource() != TidemarkOptions.SourceKind.kafka
        || options.getSink() != TidemarkOptions.SinkKind.kafka) {
      throw new IllegalArgumentException(
          "--kafkaBootstrapServers=embedded runs the live demo: it needs --source=kafka and"
              + " --sink=kafka");
    }
    if (options.getInput() == null || !Files.isReadable(Paths.get(options.getInput()))) {
      throw new IllegalArgumentException(
          "the live demo feeds --input (a replay file) into Kafka; no readable file at "
              + options.getInput());
    }
    try (EmbeddedKafka broker = EmbeddedKafka.start()) {
      options.setKafkaBootstrapServers(broker.bootstrapServers());
      KafkaClients clients = KafkaClients.from(options);
      LiveRun.createTopics(options, PARTITIONS);
      KafkaFeed.Fed fed =
          KafkaFeed.produce(
              clients,
              options.getKafkaInputTopic(),
              Paths.get(options.getInput()),
              KafkaFeed.Mode.MIXED);
      System.out.printf(
          "embedded Kafka at %s: fed %d records (%d binary mode, %d structured) from %s%n",
          broker.bootstrapServers(),
          fed.records,
          fed.binary,
          fed.records - fed.binary,
          options.getInput());
      Summary summary;
      if (FlinkRunner.class.equals(options.getRunner())) {
        summary = runOnFlink(options, clients, fed);
      } else {
        // The DirectRunner demo is a bounded read of exactly the fed records: it ends by itself.
        if (options.getKafkaMaxRecords() == null) {
          options.setKafkaMaxRecords((long) fed.records);
        }
        summary = Launch.run(options);
      }
      Path output = Paths.get(options.getOutput());
      for (Map.Entry<String, String> topic : KafkaSinks.outputTopics(options).entrySet()) {
        List<ConsumerRecord<byte[], byte[]>> records = KafkaFeed.readAll(clients, topic.getValue());
        writeValues(output.resolve(topic.getKey()), topic.getKey(), records);
        System.out.printf("read back %d records from %s%n", records.size(), topic.getValue());
      }
      return summary;
    } catch (IOException e) {
      throw new UncheckedIOException("live demo failed: " + e.getMessage(), e);
    }
  }

  /**
   * On Flink the demo is what production is: an unbounded read with checkpointing and the
   * transactional sink. End-of-stream markers close every window; the demo waits until the outputs
   * are committed and quiet, then drains the job (stop with a savepoint), which ends it with its
   * final counters. (A bounded read cannot be used: a finishing Flink job fails in Beam's
   * stable-input buffer of the exactly-once sink, which still holds the last uncommitted bundle
   * when the sources end.)
   */
  private static Summary runOnFlink(
      TidemarkOptions options, KafkaClients clients, KafkaFeed.Fed fed) throws IOException {
    int markers =
        LiveRun.sendEndMarkers(
            clients,
            options.getKafkaInputTopic(),
            fed.maxEventTimeMillis,
            Duration.standardDays(1));
    System.out.printf(
        "sent %d end-of-stream markers (type %s, dead-lettered as unsupported_type)%n",
        markers, LiveRun.END_OF_STREAM_TYPE);
    Instant started = Instant.now();
    EmbeddedFlinkJobsShim.Job job;
    try {
      job = EmbeddedFlinkJobsShim.start(Launch.build(options));
    } catch (Exception e) {
      throw new IllegalStateException("cannot start the Flink job: " + e, e);
    }
    PipelineResult finished;
    try {
      LiveRun.awaitQuiet(
          clients,
          KafkaSinks.topics(options),
          markers,
          Duration.standardMinutes(15),
          LiveRun.quietPeriod(options),
          job::checkRunning);
      finished = job.stop(Duration.standardMinutes(2));
    } catch (Exception e) {
      job.cancel();
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new IllegalStateException("the Flink live demo did not complete: " + e, e);
    }
    Summary summary = Summary.from(finished, new Duration(started, Instant.now())).withRun(options);
    summary.writeTo(Paths.get(options.getOutput()).resolve("summary.json"));
    return summary;
  }

  private static void writeValues(
      Path directory, String name, List<ConsumerRecord<byte[], byte[]>> records)
      throws IOException {
    Files.createDirectories(directory);
    Path file = directory.resolve(name + "-00000-of-00001.ndjson");
    try (OutputStream out = Files.newOutputStream(file)) {
      for (ConsumerRecord<byte[], byte[]> record : records) {
        out.write(record.value());
        out.write('\n');
      }
    }
  }
}
