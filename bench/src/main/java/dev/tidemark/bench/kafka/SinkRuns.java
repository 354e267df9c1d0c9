package dev.tidemark.bench.kafka;

import dev.tidemark.launcher.LiveRun;
import dev.tidemark.pipelines.KafkaOptions.KafkaSinkMode;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.testkit.EmbeddedKafka;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.runners.flink.EmbeddedFlinkJobsShim;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.joda.time.Duration;

/**
 * Runs {@link SinkJob}s with one set of {@link SinkJobSettings} against an embedded broker: a
 * throughput run drains a backlog, a latency run feeds the job at a fixed rate. Each run has
 * topics, groups and checkpoints of its own, under {@code work}.
 */
public final class SinkRuns {
  /** The longest a latency run waits for its last decisions after the feed stops. */
  static final long MAX_DRAIN_MILLIS = 60_000;

  private final EmbeddedKafka broker;
  private final SinkJobSettings settings;
  private final int accounts;
  private final Path work;

  public SinkRuns(EmbeddedKafka broker, SinkJobSettings settings, int accounts, Path work) {
    this.broker = broker;
    this.settings = settings;
    this.accounts = accounts;
    this.work = work;
  }

  public SinkJobSettings settings() {
    return settings;
  }

  /** The backlog of {@code events} events over this runs' accounts. */
  public List<SinkEvents.Line> backlog(int events) throws IOException {
    return SinkEvents.backlog(events, accounts);
  }

  /**
   * Produces {@code lines} into a fresh topic (timestamps = now) with end-of-stream markers, then
   * runs the job in {@code mode} until its committed output is quiet.
   */
  public ThroughputRun throughput(KafkaSinkMode mode, String name, List<SinkEvents.Line> lines)
      throws Exception {
    TidemarkOptions options =
        SinkJob.options(broker.bootstrapServers(), name, mode, settings, work);
    KafkaClients clients = KafkaClients.from(options);
    Map<String, String> topics = SinkJob.createTopics(options);
    try (KafkaProducer<String, byte[]> producer = SinkEvents.producer(clients, 5)) {
      long now = System.currentTimeMillis();
      for (SinkEvents.Line line : lines) {
        producer.send(SinkEvents.record(options.getKafkaInputTopic(), line, now));
      }
      producer.flush();
    }
    int markers =
        LiveRun.sendEndMarkers(
            clients,
            options.getKafkaInputTopic(),
            SinkEvents.maxEventTimeMillis(lines),
            Duration.standardDays(1));
    long submitted = System.currentTimeMillis();
    EmbeddedFlinkJobsShim.Job job = SinkJob.start(options, clients);
    Map<String, List<ConsumerRecord<byte[], byte[]>>> committed;
    try {
      committed =
          LiveRun.awaitQuiet(
              clients,
              topics,
              markers,
              Duration.standardMinutes(10),
              LiveRun.quietPeriod(options),
              job::checkRunning);
    } catch (Exception e) {
      job.cancel();
      throw e;
    }
    Summary summary = Summary.from(job.stop(Duration.standardMinutes(1)), Duration.ZERO);
    List<ConsumerRecord<byte[], byte[]>> decisions = committed.get("decisions");
    if (decisions.isEmpty()) {
      throw new IllegalStateException("run " + name + " committed no decisions");
    }
    long first = Long.MAX_VALUE;
    long last = Long.MIN_VALUE;
    for (ConsumerRecord<byte[], byte[]> record : decisions) {
      first = Math.min(first, record.timestamp());
      last = Math.max(last, record.timestamp());
    }
    return new ThroughputRun(
        mode, lines.size(), submitted, first, last, decisions.size(), summary.decisions());
  }

  /**
   * Starts the job in {@code mode} and feeds it at {@code rate} events/s ({@link FixedRateFeed});
   * measures every committed early decision of the span's measured part, waiting after the feed
   * until no new decision arrives over two polls a checkpoint interval apart (at most {@value
   * #MAX_DRAIN_MILLIS} ms).
   */
  public LatencyRun latency(KafkaSinkMode mode, String name, double rate, LatencySpan span)
      throws Exception {
    // Enough distinct events for start-up, warm-up and measurement; event time moves at the rate.
    List<SinkEvents.Line> lines =
        SinkEvents.generate(
            (int) Math.ceil(rate * span.feedSeconds()),
            accounts,
            rate,
            SinkEvents.SEED + name.hashCode());
    TidemarkOptions options =
        SinkJob.options(broker.bootstrapServers(), name, mode, settings, work);
    KafkaClients clients = KafkaClients.from(options);
    Map<String, String> topics = SinkJob.createTopics(options);
    DecisionWatcher watcher = new DecisionWatcher(clients, topics.get("decisions"));
    EmbeddedFlinkJobsShim.Job job = SinkJob.start(options, clients);
    FixedRateFeed feed = new FixedRateFeed();
    boolean drained;
    try {
      try (KafkaProducer<String, byte[]> producer = SinkEvents.producer(clients, 0)) {
        feed.run(producer, options.getKafkaInputTopic(), lines, rate, watcher, span, name);
      }
      drained = drain(watcher);
    } finally {
      job.stop(Duration.standardMinutes(1));
    }
    List<DecisionWatcher.Seen> seen = watcher.stop();
    // One compact pane per record, each record's bytes dropped once read: a tree per record at
    // once would not fit the heap at the rates a fast machine sustains (1M decisions a span).
    List<Pane> panes = new ArrayList<>(seen.size());
    for (int i = 0; i < seen.size(); i++) {
      DecisionWatcher.Seen decision = seen.set(i, null);
      panes.add(
          new Pane(Json.MAPPER.readTree(decision.value), decision.timestamp, decision.seenAt));
    }
    seen.clear();
    return LatencyRun.of(mode, rate, panes, feed, drained);
  }

  /** Whether the decisions stopped arriving: the same count over two polls, before the cap. */
  private boolean drain(DecisionWatcher watcher) throws InterruptedException {
    int previous = -1;
    int stable = 0;
    long deadline = System.currentTimeMillis() + MAX_DRAIN_MILLIS;
    while (stable < 2) {
      Thread.sleep(Math.max(1000, settings.checkpointIntervalMs() + 500));
      int now = watcher.count();
      stable = now == previous ? stable + 1 : 0;
      previous = now;
      if (System.currentTimeMillis() > deadline) {
        return false;
      }
    }
    return true;
  }
}
