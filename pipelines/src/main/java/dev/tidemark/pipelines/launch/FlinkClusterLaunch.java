package dev.tidemark.pipelines.launch;

import dev.tidemark.pipelines.Runners;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.TidemarkPipeline;
import dev.tidemark.pipelines.flink.FlinkRestClient;
import dev.tidemark.pipelines.flink.FlinkRestException;
import dev.tidemark.pipelines.io.Sources;
import dev.tidemark.pipelines.io.kafka.KafkaChecks;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.transforms.values.RawRecord;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import java.util.Set;
import org.apache.beam.runners.flink.FlinkDetachedRunnerResult;
import org.apache.beam.runners.flink.FlinkPipelineOptions;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.options.StreamingOptions;
import org.apache.beam.sdk.values.PCollection;

/** Submits a streaming job to a Flink cluster in other processes, detached. */
public final class FlinkClusterLaunch {
  private FlinkClusterLaunch() {}

  /**
   * Whether the options submit a streaming job to a Flink cluster in other processes: the
   * FlinkRunner, a {@code --flinkMaster} other than {@code [local]}, {@code [auto]} and {@code
   * [collection]}, and {@code --streaming=true}. A batch job on a cluster (a backfill) ends by
   * itself, so {@code run} still waits for it and checks its summary.
   */
  public static boolean submitsToFlinkCluster(TidemarkOptions options) {
    return Runners.isFlink(options)
        && options.as(StreamingOptions.class).isStreaming()
        && FlinkRestClient.isRemote(options.as(FlinkPipelineOptions.class).getFlinkMaster());
  }

  /** A streaming job submitted to a Flink cluster: its id, name and web UI page. */
  public record FlinkSubmission(String jobId, String jobName, String master, String webUi) {}

  /**
   * Builds the pipeline and submits it to the Flink cluster at {@code --flinkMaster} through the
   * FlinkRunner's public remote path, detached ({@code --attachedMode=false}): Beam uploads {@code
   * --filesToStage} (the Flink job jar) with the job graph and returns once the cluster accepted
   * it. Beam's detached result does not expose the job id, so it is read from the cluster's REST
   * API: the new job named {@code --jobName}. {@code --savepointPath} (the command line's {@code
   * --fromSavepoint}) resumes from a savepoint; Beam passes it with the submission.
   */
  public static FlinkSubmission submitToFlinkCluster(TidemarkOptions options)
      throws FlinkRestException {
    OptionChecks.check(options);
    FlinkPipelineOptions flink = options.as(FlinkPipelineOptions.class);
    if (EmbeddedBroker.requested(options)) {
      throw new IllegalArgumentException(
          "--kafkaBootstrapServers=embedded starts a broker inside this launcher, which the"
              + " cluster at --flinkMaster="
              + flink.getFlinkMaster()
              + " cannot reach: pass --kafkaBootstrapServers=host:port (the local cluster's"
              + " broker is 127.0.0.1:9092)");
    }
    checkFilesToStage(options);
    flink.setAttachedMode(false);
    FlinkRestClient cluster = FlinkRestClient.of(flink.getFlinkMaster());
    // Also proves the master answers before the job is translated and its jar uploaded.
    Set<String> before = cluster.jobIds();
    Pipeline pipeline = Pipeline.create(options);
    PCollection<RawRecord> raw =
        options.getSource() == TidemarkOptions.SourceKind.kafka
            ? readKafka(pipeline, options)
            : Sources.read(pipeline, options);
    TidemarkPipeline.buildFrom(raw, options);
    PipelineResult result = pipeline.run();
    if (!(result instanceof FlinkDetachedRunnerResult)) {
      throw new IllegalStateException(
          "the FlinkRunner ran the job attached ("
              + result.getClass().getSimpleName()
              + ") although --attachedMode=false was set");
    }
    String jobId =
        cluster.awaitSubmittedJob(options.getJobName(), before, java.time.Duration.ofMinutes(1));
    return new FlinkSubmission(jobId, options.getJobName(), cluster.master(), cluster.webUi(jobId));
  }

  /**
   * A cluster job's Kafka read, named by the partitions it reads, which is its Flink operator's
   * uid: {@code ReadKafka (N partitions)}. Beam's Kafka source keeps the partitions it found when
   * its job first started, and a job restored from a savepoint keeps them too. So the read is named
   * by the partition count: after the topic gained partitions, a resumed job has a new read, which
   * starts from the consumer group's committed offsets (the savepoint's positions, as the stop
   * committed them) and from the start of the new partitions; the old read's state is the one part
   * of the savepoint not restored ({@code --allowNonRestoredState}, set only then). Every other
   * operator restores as before. The read takes exactly the partitions counted for its name, not a
   * second listing of KafkaIO's, which a broker that has not yet seen the topic grow could answer.
   */
  static PCollection<RawRecord> readKafka(Pipeline pipeline, TidemarkOptions options) {
    KafkaChecks.SourcePartitions partitions =
        KafkaChecks.sourcePartitions(options, KafkaClients.from(options));
    FlinkPipelineOptions flink = options.as(FlinkPipelineOptions.class);
    if (flink.getSavepointPath() != null && partitions.added()) {
      flink.setAllowNonRestoredState(true);
      System.err.printf(
          "tidemark: --kafkaInputTopic=%s has %d partitions; the job of this savepoint read %d."
              + " The resumed job reads all %d: from the offsets consumer group %s committed at"
              + " the savepoint, and the new partitions from their start (--kafkaStartOffset=%s)."
              + " Its old Kafka read's state is not restored (allowNonRestoredState).%n",
          options.getKafkaInputTopic(),
          partitions.partitions(),
          partitions.committed(),
          partitions.partitions(),
          options.getKafkaConsumerGroup(),
          options.getKafkaStartOffset());
    }
    return pipeline.apply(
        "ReadKafka (" + partitions.partitions() + " partitions)",
        Sources.kafkaSource(options).withPartitions(partitions.partitions()));
  }

  /**
   * Refuses a submission whose {@code --filesToStage} names a missing file: the default profile
   * stages the Flink job jar, which {@code mvn package} builds.
   */
  static void checkFilesToStage(TidemarkOptions options) {
    List<String> files = options.as(FlinkPipelineOptions.class).getFilesToStage();
    if (files == null) {
      return;
    }
    for (String file : files) {
      if (!Files.exists(Paths.get(file))) {
        throw new IllegalArgumentException(
            "--filesToStage="
                + file
                + ": no such file. The Flink job jar is built by 'mvn -B package -DskipTests -pl"
                + " pipelines -am' (or './tidemark' on its first run) as"
                + " pipelines/target/tidemark-flink-job.jar");
      }
    }
  }
}
