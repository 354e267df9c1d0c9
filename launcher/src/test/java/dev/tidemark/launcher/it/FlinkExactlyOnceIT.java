package dev.tidemark.launcher.it;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import dev.tidemark.launcher.KafkaFeed;
import dev.tidemark.launcher.LiveRun;
import dev.tidemark.launcher.check.Comparison;
import dev.tidemark.launcher.check.OutputView;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.TidemarkPipeline;
import dev.tidemark.pipelines.io.Sinks;
import dev.tidemark.pipelines.io.Sources;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.launch.OptionChecks;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.testkit.EmbeddedKafka;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.transforms.values.RawRecord;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.beam.runners.flink.EmbeddedFlinkJobsShim;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Duration;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The exactly-once proof on the FlinkRunner (embedded MiniCluster, parallelism 2, checkpoints every
 * second) against a real Kafka broker: unbounded runs with failures injected mid-stream and
 * automatic recovery from the last checkpoint, compared with a fault-free run.
 */
@RunWith(JUnit4.class)
public class FlinkExactlyOnceIT {
  @ClassRule public static final TemporaryFolder TEMP = new TemporaryFolder();

  /** The default {@code --windowSize}, which these runs use. */
  private static final Duration WINDOW_SIZE = Duration.standardMinutes(5);

  private static EmbeddedKafka broker;
  private static Path events;
  private static OutputView reference;
  private static List<String> referenceViolations;

  /** Records seen by the failure injector, across every attempt of every job in this JVM. */
  private static final Map<String, AtomicLong> SEEN = new ConcurrentHashMap<>();

  @BeforeClass
  public static void startAndRunFaultFree() throws Exception {
    broker = EmbeddedKafka.start();
    events = TEMP.getRoot().toPath().resolve("events.ndjson");
    // No late or too-late events: the final state of every window is then independent of when the
    // watermark passed, so runs with and without failures must agree exactly.
    new EventGenerator(
            GeneratorConfig.builder()
                .seed(20261129)
                .numEvents(240)
                .numAccounts(12)
                .eventsPerSecond(1)
                .lateFraction(0)
                .tooLateFraction(0)
                .duplicateRate(0.05)
                .malformedFraction(0.02)
                .build())
        .writeTo(events);
    Run faultFree = run("faultfree", KafkaOptions.KafkaSinkMode.transactional);
    reference = faultFree.outputs;
    referenceViolations = faultFree.summary.identityViolations();
    assertThat(reference.finalState().size(), greaterThan(50));
    assertThat(reference.duplicateVersions(), is(empty()));
    assertThat(reference.missingVersions(), is(empty()));
    // Without failures the job's own accounting holds and every decision it counted is committed.
    assertThat(referenceViolations, is(empty()));
    assertThat(reference.decisionsCommitted(), is(faultFree.summary.decisions()));
    // And the committed outputs alone account for every record fed, exactly once.
    assertThat(
        compare(faultFree, Comparison.Delivery.EXACTLY_ONCE).identityViolations(), is(empty()));
  }

  /** A run's committed outputs against the fault-free run's. */
  private static Comparison compare(
      Run run, Comparison.Delivery delivery, Comparison.Rule... rules) {
    return Comparison.compare(
        reference,
        referenceViolations,
        run.outputs,
        run.fed,
        run.markers,
        WINDOW_SIZE,
        delivery,
        rules);
  }

  /**
   * Asserts that {@code comparison} finds nothing that differs, but in the {@code allowed} ones.
   */
  private static void assertMatches(Comparison comparison, String... allowed) {
    comparison
        .mismatches()
        .forEach(
            (category, keys) -> {
              if (!List.of(allowed).contains(category)) {
                assertThat(comparison.describe(), keys, is(empty()));
              }
            });
    assertThat(comparison.identityViolations(), is(empty()));
    assertThat(comparison.passed(), is(true));
  }

  @AfterClass
  public static void stop() {
    if (broker != null) {
      broker.close();
    }
  }

  /**
   * Two injected failures, the second after the job recovered from the first (which covers one).
   */
  @Test
  public void transactionalSinkIsExactlyOnceAcrossTwoFailures() throws Exception {
    Run run = run("tx2", KafkaOptions.KafkaSinkMode.transactional, 80L, 200L);
    assertThat("both failures were injected", SEEN.get("tx2").get(), greaterThan(200L));
    // No decision record twice, versions 0..n with no gap, the same final state, dead letters,
    // duplicates and too-late records, and every record accounted for once.
    assertMatches(compare(run, Comparison.Delivery.EXACTLY_ONCE));
  }

  @Test
  public void idempotentSinkKeepsExactlyOnceStateAcrossAFailure() throws Exception {
    Run run = run("idem1", KafkaOptions.KafkaSinkMode.idempotent, 150L);
    assertThat("the failure was injected", SEEN.get("idem1").get(), greaterThan(150L));
    // Duplicate records may appear (at-least-once); the keep-latest-version view may not differ.
    Comparison comparison = compare(run, Comparison.Delivery.AT_LEAST_ONCE);
    assertThat(comparison.describe(), comparison.finalStateMismatches(), is(0));
    assertMatches(comparison, "duplicateVersions");
  }

  @Test
  public void aCleanStopAndRestartWithTheSameGroupLosesAndDoublesNothing() throws Exception {
    List<String> lines = java.nio.file.Files.readAllLines(events, StandardCharsets.UTF_8);
    Path firstHalf = TEMP.getRoot().toPath().resolve("first-half.ndjson");
    Path secondHalf = TEMP.getRoot().toPath().resolve("second-half.ndjson");
    java.nio.file.Files.write(firstHalf, lines.subList(0, lines.size() / 2));
    java.nio.file.Files.write(secondHalf, lines.subList(lines.size() / 2, lines.size()));

    TidemarkOptions first = options("restart", KafkaOptions.KafkaSinkMode.transactional);
    KafkaClients clients = KafkaClients.from(first);
    Map<String, String> topics = LiveRun.createTopics(first, 2);
    KafkaFeed.Fed fedFirst =
        KafkaFeed.produce(clients, first.getKafkaInputTopic(), firstHalf, KafkaFeed.Mode.MIXED);
    EmbeddedFlinkJobsShim.Job job = EmbeddedFlinkJobsShim.start(pipeline(first, "restart"));
    String savepoint;
    try {
      // No end markers: the job has read the first half once its group committed the topic's end.
      SavepointFixture.awaitConsumed(
          broker.bootstrapServers(),
          first.getKafkaConsumerGroup(),
          SavepointFixture.endOffsets(clients, first.getKafkaInputTopic()),
          job::checkRunning);
      LiveRun.awaitQuiet(
          clients,
          topics,
          0,
          Duration.standardMinutes(3),
          LiveRun.quietPeriod(first),
          job::checkRunning);
    } catch (Exception e) {
      job.cancel();
      throw e;
    }
    savepoint =
        job.stopWithSavepoint(TEMP.newFolder("savepoints").toPath(), Duration.standardMinutes(1));
    // The source committed the offsets of everything it read when the savepoint completed.
    assertThat(
        committedOffsets(first.getKafkaConsumerGroup(), first.getKafkaInputTopic()),
        is((long) fedFirst.records));

    KafkaFeed.Fed fedSecond =
        KafkaFeed.produce(clients, first.getKafkaInputTopic(), secondHalf, KafkaFeed.Mode.MIXED);
    int markers =
        LiveRun.sendEndMarkers(
            clients,
            first.getKafkaInputTopic(),
            Math.max(fedFirst.maxEventTimeMillis, fedSecond.maxEventTimeMillis),
            Duration.standardDays(1));
    TidemarkOptions second = options("restart", KafkaOptions.KafkaSinkMode.transactional);
    second.as(org.apache.beam.runners.flink.FlinkPipelineOptions.class).setSavepointPath(savepoint);
    EmbeddedFlinkJobsShim.Job resumed = EmbeddedFlinkJobsShim.start(pipeline(second, "restart"));
    Run run;
    try {
      LiveRun.awaitQuiet(
          clients,
          topics,
          markers,
          Duration.standardMinutes(4),
          LiveRun.quietPeriod(second),
          resumed::checkRunning);
      run =
          new Run(
              OutputView.fromTopics(clients, topics),
              fedFirst.records + fedSecond.records,
              markers);
    } finally {
      resumed.cancel();
    }
    // The second half's ingestion clock restarts at its own first event: compare without it.
    assertMatches(
        compare(run, Comparison.Delivery.EXACTLY_ONCE, Comparison.Rule.IGNORE_INGESTION_TIME));
  }

  private static long committedOffsets(String group, String topic) throws Exception {
    java.util.Properties properties = new java.util.Properties();
    properties.put("bootstrap.servers", broker.bootstrapServers());
    long deadline = System.nanoTime() + 30_000_000_000L;
    try (org.apache.kafka.clients.admin.Admin admin =
        org.apache.kafka.clients.admin.Admin.create(properties)) {
      while (true) {
        long sum = 0;
        for (var entry :
            admin
                .listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata()
                .get()
                .entrySet()) {
          if (entry.getKey().topic().equals(topic) && entry.getValue() != null) {
            sum += entry.getValue().offset();
          }
        }
        if (sum > 0 || System.nanoTime() > deadline) {
          return sum;
        }
        Thread.sleep(500);
      }
    }
  }

  /** The result of one unbounded run, read back from the topics with read_committed. */
  static final class Run {
    final OutputView outputs;
    final long fed;
    final int markers;
    Summary summary;

    Run(OutputView outputs, long fed, int markers) {
      this.outputs = outputs;
      this.fed = fed;
      this.markers = markers;
    }
  }

  private static TidemarkOptions options(String name, KafkaOptions.KafkaSinkMode mode) {
    return EmbeddedFlinkOptions.of(
        broker.bootstrapServers(), TEMP.getRoot().toPath(), name, mode, "--earlyFiringDelay=PT0S");
  }

  /** The Tidemark pipeline with a failure injector between the source and the parser. */
  private static Pipeline pipeline(TidemarkOptions options, String name, Long... failAt) {
    OptionChecks.check(options);
    Pipeline pipeline = Pipeline.create(options);
    PCollection<RawRecord> raw = pipeline.apply("ReadKafka", Sources.kafkaSource(options));
    SEEN.putIfAbsent(name, new AtomicLong());
    if (failAt.length > 0) {
      raw = raw.apply("InjectFailures", ParDo.of(new FailAt(name, failAt)));
    }
    Sinks.write(TidemarkPipeline.expand(raw, options), options);
    return pipeline;
  }

  private static Run run(String name, KafkaOptions.KafkaSinkMode mode, Long... failAt)
      throws Exception {
    TidemarkOptions options = options(name, mode);
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
    EmbeddedFlinkJobsShim.Job job = EmbeddedFlinkJobsShim.start(pipeline(options, name, failAt));
    Run run;
    try {
      LiveRun.awaitQuiet(
          clients,
          topics,
          markers,
          Duration.standardMinutes(4),
          LiveRun.quietPeriod(options),
          job::checkRunning);
      run = new Run(OutputView.fromTopics(clients, topics), fed.records, markers);
    } catch (Exception e) {
      job.cancel();
      throw e;
    }
    // The final counters of the last attempt (after a failure they restart with the attempt).
    run.summary = Summary.from(job.stop(Duration.standardMinutes(1)), Duration.ZERO);
    return run;
  }

  /** Throws once when the records seen by all attempts of this job reach each threshold. */
  static final class FailAt extends DoFn<RawRecord, RawRecord> {
    private final String name;
    private final Long[] thresholds;

    FailAt(String name, Long[] thresholds) {
      this.name = name;
      this.thresholds = thresholds;
    }

    @ProcessElement
    public void processElement(@Element RawRecord record, OutputReceiver<RawRecord> out) {
      long seen = SEEN.get(name).incrementAndGet();
      for (Long threshold : thresholds) {
        if (seen == threshold) {
          throw new IllegalStateException(
              "injected failure after " + threshold + " records (test " + name + ")");
        }
      }
      out.output(record);
    }
  }
}
