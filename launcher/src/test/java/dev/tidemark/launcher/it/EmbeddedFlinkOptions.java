package dev.tidemark.launcher.it;

import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.pipelines.TidemarkOptions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.options.PipelineOptionsFactory;

/**
 * The options of a streaming Tidemark job on the embedded Flink MiniCluster (parallelism 2,
 * checkpoints every second, three restarts) reading and writing the Kafka topics named after the
 * run, as the Flink integration tests use them.
 */
public final class EmbeddedFlinkOptions {
  private EmbeddedFlinkOptions() {}

  /**
   * Options for run {@code name}: topics {@code name.events}, {@code name.decisions}, ..., groups
   * {@code name-source} and {@code name-sink}, files under {@code root/name}; {@code extra} options
   * are added as given.
   */
  public static TidemarkOptions of(
      String bootstrapServers,
      Path root,
      String name,
      KafkaOptions.KafkaSinkMode mode,
      String... extra) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--runner=FlinkRunner",
                "--flinkMaster=[local]",
                "--streaming=true",
                "--parallelism=2",
                "--checkpointingInterval=1000",
                "--minPauseBetweenCheckpoints=200",
                "--numberOfExecutionRetries=3",
                "--finishBundleBeforeCheckpointing=true",
                "--executionRetryDelay=500",
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
                "--output=" + root.resolve(name)));
    args.addAll(List.of(extra));
    return PipelineOptionsFactory.fromArgs(args.toArray(new String[0]))
        .withValidation()
        .as(TidemarkOptions.class);
  }
}
