package dev.tidemark.harness.check;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import dev.tidemark.harness.KafkaFeed;
import dev.tidemark.harness.LiveRun;
import dev.tidemark.pipelines.EmbeddedFlinkOptions;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.pipelines.Summary;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.TidemarkPipeline;
import dev.tidemark.pipelines.generate.EventGenerator;
import dev.tidemark.pipelines.generate.GeneratorConfig;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.testing.kafka.EmbeddedKafka;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.beam.runners.flink.EmbeddedFlinkJobsShim;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.joda.time.Duration;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The drill's comparison on a fault-free run: the drill-like input (late, too-late, duplicate,
 * conflicting and malformed records) fed in both CloudEvents Kafka modes to a streaming job on the
 * FlinkRunner (embedded MiniCluster, parallelism 2, two input partitions) matches the batch
 * reference of the same replay file in every category, and every record is accounted for.
 *
 * <p>Measured (seed 20261203, 10,400 records fed, batch 263 s, streaming 622 s): the identity holds
 * and no version is doubled or missing, but the run does not match yet. tooLateMismatches 99: the
 * batch calls 100 events too late, the streaming gate 1 (and 3 partially late), because a backlog
 * read from Kafka runs ahead of the watermark, so the gate accepts them as late; hence
 * finalStateMismatches 890 (the windows they joined). deadLetterMismatches 4: two {@code
 * missing_attribute} records sent in binary mode are re-encoded by the source, so the SHA-256
 * identity of a record without {@code source} and {@code id} differs from the file's.
 */
@RunWith(JUnit4.class)
public class StreamingMatchesBatchIT {
  @Rule public final TemporaryFolder temp = new TemporaryFolder();

  @Test
  public void aFaultFreeStreamingRunMatchesTheBatchReference() throws Exception {
    Path events = temp.getRoot().toPath().resolve("events.ndjson");
    EventGenerator generator =
        new EventGenerator(
            GeneratorConfig.builder()
                .seed(20261203)
                .numEvents(10_000)
                .numAccounts(300)
                .eventsPerSecond(1.0)
                .build());
    generator.writeTo(events);
    EventGenerator.Stats stats = generator.stats();
    System.out.println("generated " + stats);
    assertThat("the input has too-late events", stats.tooLate(), greaterThan(0L));
    assertThat("the input has late events", stats.late(), greaterThan(0L));

    // A failing or restarting job says why.
    System.setProperty(
        "org.slf4j.simpleLogger.log.org.apache.flink.runtime.executiongraph", "info");
    System.setProperty("org.slf4j.simpleLogger.log.org.apache.flink.runtime.checkpoint", "info");
    System.setProperty("org.slf4j.simpleLogger.log.org.apache.flink.runtime.taskmanager", "info");
    ExecutorService batch = Executors.newSingleThreadExecutor();
    try (EmbeddedKafka broker = EmbeddedKafka.start()) {
      TidemarkOptions options = options(broker, "check");
      Path referenceDir = temp.newFolder("reference").toPath();
      // The batch reference (minutes on the DirectRunner) runs while the streaming job does.
      Future<Reference> pending =
          batch.submit(
              () -> {
                long began = System.nanoTime();
                Reference computed = Reference.compute(events, options, referenceDir);
                System.out.printf(
                    "batch reference in %.1f s: %s%n", seconds(began), computed.summary().toJson());
                return computed;
              });
      long started;

      KafkaClients clients = KafkaClients.from(options);
      Map<String, String> topics = LiveRun.createTopics(options, 2);
      KafkaFeed.Fed fed =
          KafkaFeed.produce(clients, options.getKafkaInputTopic(), events, KafkaFeed.Mode.MIXED);
      int markers =
          LiveRun.sendEndMarkers(
              clients,
              options.getKafkaInputTopic(),
              fed.maxEventTimeMillis,
              Duration.standardDays(1));
      started = System.nanoTime();
      EmbeddedFlinkJobsShim.Job job = EmbeddedFlinkJobsShim.start(TidemarkPipeline.build(options));
      Map<String, List<ConsumerRecord<byte[], byte[]>>> committed;
      Summary streamed;
      try {
        committed =
            LiveRun.awaitQuiet(
                clients, topics, markers, Duration.standardMinutes(20), job::checkRunning);
        streamed = Summary.from(job.stop(Duration.standardMinutes(2)), Duration.ZERO);
      } catch (Exception e) {
        job.cancel();
        throw e;
      }
      System.out.printf("streaming run in %.1f s: %s%n", seconds(started), streamed.toJson());
      Reference reference = pending.get();
      assertThat(reference.summary().tooLate(), greaterThan(0L));

      Comparison comparison =
          Comparison.compare(
              reference,
              OutputView.fromRecords(committed),
              fed.records,
              markers,
              Comparison.Delivery.EXACTLY_ONCE);
      System.out.println(comparison.toJson(fed.records, 0, 0, 0));
      System.out.println(comparison.describe());
      assertThat(
          comparison.describe(), comparison.mismatches().get("finalStateMismatches"), is(empty()));
      assertThat(
          comparison.describe(), comparison.mismatches().get("tooLateMismatches"), is(empty()));
      assertThat(
          comparison.describe(), comparison.mismatches().get("deadLetterMismatches"), is(empty()));
      assertThat(
          comparison.describe(), comparison.mismatches().get("duplicateMismatches"), is(empty()));
      assertThat(comparison.identityViolations(), is(empty()));
      assertThat(comparison.describe(), comparison.passed(), is(true));
      assertThat(comparison.decisionsCommitted(), is(streamed.decisions()));
    } finally {
      batch.shutdownNow();
    }
  }

  private static double seconds(long started) {
    return (System.nanoTime() - started) / 1e9;
  }

  private TidemarkOptions options(EmbeddedKafka broker, String name) {
    return EmbeddedFlinkOptions.of(
        broker.bootstrapServers(),
        temp.getRoot().toPath(),
        name,
        KafkaOptions.KafkaSinkMode.transactional,
        // The exactly-once sink's buffered outputs outgrow the 5 MB of in-memory checkpoints.
        "--stateBackend=filesystem",
        "--stateBackendStoragePath=" + temp.getRoot().toURI() + "checkpoints");
  }
}
