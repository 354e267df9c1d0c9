package dev.tidemark.bench.kafka;

import dev.tidemark.bench.suite.ExtraPipelineArgs;
import dev.tidemark.launcher.LiveRun;
import dev.tidemark.pipelines.KafkaOptions.KafkaSinkMode;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.TidemarkPipeline;
import dev.tidemark.pipelines.io.Sources;
import dev.tidemark.pipelines.io.kafka.KafkaChecks;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.io.kafka.KafkaSinks;
import dev.tidemark.pipelines.launch.OptionChecks;
import dev.tidemark.transforms.values.RawRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.runners.flink.EmbeddedFlinkJobsShim;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.values.PCollection;

/**
 * One Tidemark job from a Kafka topic to its four output topics, streaming on the FlinkRunner's
 * embedded MiniCluster at parallelism 2 with exactly-once checkpoints, early firing on every
 * element ({@code --earlyFiringDelay=PT0S}) and the given sink mode. Its topics are named after the
 * run.
 */
final class SinkJob {
  static final int PARTITIONS = 2;

  private SinkJob() {}

  /** The options of run {@code name}: topics, groups and checkpoint storage of its own. */
  static TidemarkOptions options(
      String bootstrapServers, String name, KafkaSinkMode mode, SinkJobSettings settings, Path work)
      throws IOException {
    Path output = Files.createDirectories(work.resolve(name));
    List<String> args =
        new ArrayList<>(
            List.of(
                "--runner=FlinkRunner",
                "--flinkMaster=[local]",
                "--streaming=true",
                "--parallelism=2",
                "--fasterCopy=false", // with checkpoints: TidemarkPipeline.checkOptions
                settings.stateBackend().argument,
                "--stateBackendStoragePath=" + work.resolve("checkpoints-" + name).toUri(),
                "--checkpointingInterval=" + settings.checkpointIntervalMs(),
                "--checkpointingMode=EXACTLY_ONCE",
                "--minPauseBetweenCheckpoints=" + SinkJobSettings.MIN_PAUSE_BETWEEN_CHECKPOINTS_MS,
                "--numberOfExecutionRetries=3",
                // The transactional sink needs it (the options check refuses it otherwise).
                "--finishBundleBeforeCheckpointing=true",
                "--executionRetryDelay=2000",
                "--source=kafka",
                "--sink=kafka",
                "--kafkaBootstrapServers=" + bootstrapServers,
                "--kafkaInputTopic=" + name + ".events",
                "--kafkaDecisionsTopic=" + name + ".decisions",
                "--kafkaDeadLettersTopic=" + name + ".dead-letters",
                "--kafkaDuplicatesTopic=" + name + ".duplicates",
                "--kafkaTooLateTopic=" + name + ".too-late",
                "--kafkaConsumerGroup=" + name + "-source",
                "--kafkaSinkGroupId=" + name + "-sink",
                "--kafkaSinkMode=" + mode,
                "--kafkaSinkShards=" + settings.sinkShards(),
                "--maxOutOfOrderness=PT30S",
                "--kafkaIdleTimeout=PT10S",
                "--earlyFiringDelay=PT0S",
                "--output=" + output));
    if (settings.maxBundleTimeMills() != null) {
      args.add("--maxBundleTimeMills=" + settings.maxBundleTimeMills());
    }
    if (settings.bufferTimeoutMillis() != null) {
      args.add("--flinkConfDir=" + flinkConfDir(work, settings.bufferTimeoutMillis()));
    }
    return PipelineOptionsFactory.fromArgs(ExtraPipelineArgs.append(args))
        .withValidation()
        .as(TidemarkOptions.class);
  }

  /**
   * A Flink configuration directory setting only the network buffer timeout: how long a partly
   * filled buffer between two tasks may wait before it is sent (Flink's default 100 ms). Beam has
   * no pipeline option for it; {@code --flinkConfDir} is how a FlinkRunner job gets it.
   */
  static Path flinkConfDir(Path work, long bufferTimeoutMillis) throws IOException {
    Path dir = Files.createDirectories(work.resolve("flink-conf-buffer-" + bufferTimeoutMillis));
    Files.writeString(
        dir.resolve("flink-conf.yaml"),
        "execution.buffer-timeout.interval: " + bufferTimeoutMillis + " ms\n");
    return dir;
  }

  /** Creates the job's input topic and output topics; returns output name to topic. */
  static Map<String, String> createTopics(TidemarkOptions options) {
    return LiveRun.createTopics(options, PARTITIONS);
  }

  /** Builds the job and starts it on an embedded MiniCluster. */
  static EmbeddedFlinkJobsShim.Job start(TidemarkOptions options, KafkaClients clients)
      throws Exception {
    OptionChecks.check(options);
    Pipeline pipeline = Pipeline.create(options);
    PCollection<RawRecord> raw = pipeline.apply("ReadKafka", Sources.kafkaSource(options));
    KafkaChecks.checkSinkGroups(options, clients);
    KafkaSinks.write(TidemarkPipeline.expand(raw, options), options, clients);
    return EmbeddedFlinkJobsShim.start(pipeline);
  }
}
