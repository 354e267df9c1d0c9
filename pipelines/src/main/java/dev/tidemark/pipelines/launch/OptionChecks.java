package dev.tidemark.pipelines.launch;

import dev.tidemark.pipelines.Runners;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.flink.ClusterPaths;
import dev.tidemark.pipelines.flink.FlinkRestClient;
import dev.tidemark.pipelines.io.Sinks;
import dev.tidemark.pipelines.io.Sources;
import dev.tidemark.pipelines.io.kafka.KafkaChecks;
import org.apache.beam.runners.flink.FlinkPipelineOptions;

/**
 * Option combinations a runner cannot honour, refused before anything is built or submitted, with a
 * message that says what to use instead.
 */
public final class OptionChecks {
  private OptionChecks() {}

  /**
   * Refuses unsafe option combinations that need no broker to detect: {@link
   * KafkaChecks#checkOptions}, and on Flink {@code --fasterCopy=true} in a checkpointed streaming
   * job. With it Beam's state serializer hands Flink the live state object as its "copy", so
   * Flink's heap backend snapshots asynchronously what the task keeps mutating: the features
   * combine updates its accumulator in place, and the benchmark saw checkpoints fail with a {@code
   * ConcurrentModificationException} and the job restart and replay (a snapshot that does not fail
   * may hold an accumulator with elements from after its barrier, counted twice on restore). In
   * batch and without checkpoints it is safe.
   *
   * <p>First the spec: {@link SpecChecks} loads it and refuses a model whose features are not the
   * spec's, with a {@code SpecException} naming the spec.
   *
   * <p>Also refuses a negative {@code --maxFutureSkew}, a Pub/Sub source the options cannot
   * describe ({@link Sources#pubsubSource}), and with {@code --sink=files} a {@code
   * --fileRollInterval} that is not positive.
   *
   * <p>Also refuses {@code --sink=bigquery} with {@code --accumulationMode=DISCARDING}: the CDC
   * upsert keeps one row per window, the one with the highest pane index, and a discarding pane
   * holds only what arrived since the pane before it, so the table would keep the last pane's delta
   * as the window's features.
   *
   * <p>With a Flink master in other processes, also refuses state the cluster could not use: see
   * {@link #checkFlinkClusterState}.
   */
  public static void check(TidemarkOptions options) {
    SpecChecks.check(options);
    KafkaChecks.checkOptions(options);
    Sources.maxFutureSkewOf(options);
    if (options.getSource() == TidemarkOptions.SourceKind.pubsub) {
      // Its subscription or topic, and an event time it can order the stream by.
      Sources.pubsubSource(options);
    }
    if (options.getSink() == TidemarkOptions.SinkKind.files) {
      Sinks.fileRollIntervalOf(options);
    }
    if (options.getSink() == TidemarkOptions.SinkKind.bigquery
        && options.getAccumulationMode() == TidemarkOptions.AccumulationKind.DISCARDING) {
      throw new IllegalArgumentException(
          "--sink=bigquery needs --accumulationMode=ACCUMULATING: the BigQuery tables keep one row"
              + " per window, its highest pane (a CDC upsert on decision_id ordered by the pane"
              + " index), and with DISCARDING that pane holds only the events since the pane"
              + " before it, not the window's. Use ACCUMULATING, or --sink=files or --sink=kafka"
              + " to receive every discarding pane");
    }
    if (!Runners.isFlink(options)) {
      return;
    }
    checkFlinkClusterState(options);
    FlinkPipelineOptions flink = options.as(FlinkPipelineOptions.class);
    if (flink.isStreaming()
        && KafkaChecks.checkpointing(flink)
        && Boolean.TRUE.equals(flink.getFasterCopy())) {
      throw new IllegalArgumentException(
          "--fasterCopy=true with checkpointing (--checkpointingInterval="
              + flink.getCheckpointingInterval()
              + ") is unsafe: Flink's heap state backend then snapshots, asynchronously, the same"
              + " accumulator objects the job keeps updating (checkpoints fail with a"
              + " ConcurrentModificationException, or capture elements from after the barrier)."
              + " Use --fasterCopy=false, or --fasterCopy=true only in batch (--streaming=false)");
    }
  }

  /** The class Beam's {@code --stateBackend=rocksdb} creates in the launcher. */
  static final String BEAM_ROCKSDB_BACKEND =
      "org.apache.flink.contrib.streaming.state.RocksDBStateBackend";

  /**
   * With a Flink master in other processes ({@link FlinkRestClient#isRemote}): refuses a
   * launcher-local {@code --stateBackendStoragePath} ({@link ClusterPaths#isLauncherLocal}: {@code
   * file:} or no scheme), where each process would write its part of a checkpoint to its own disk
   * and a restore elsewhere would not find it; and {@code --stateBackend=rocksdb} when the launcher
   * lacks Flink's RocksDB classes (Beam creates the backend here, and the Tidemark jars do not
   * carry it). On a cluster, state belongs in the cluster's configuration: {@code
   * state.backend.type: rocksdb}, {@code state.backend.incremental: true}, {@code
   * state.checkpoints.dir}.
   *
   * <p>No method of this class has a Flink type in its signature: deserializing a lambda of this
   * class reflects on all its methods, and the Dataflow jar has no Flink classes.
   */
  static void checkFlinkClusterState(TidemarkOptions options) {
    FlinkPipelineOptions flink = options.as(FlinkPipelineOptions.class);
    String master = flink.getFlinkMaster();
    if (!FlinkRestClient.isRemote(master)) {
      return;
    }
    String storage = flink.getStateBackendStoragePath();
    if (storage != null && !storage.isBlank() && ClusterPaths.isLauncherLocal(storage)) {
      throw new IllegalArgumentException(
          "--stateBackendStoragePath="
              + storage
              + " is a path on this machine (file: or no scheme), but --flinkMaster="
              + master
              + " runs the job in other processes: each TaskManager would write its part of a"
              + " checkpoint to its own disk and a restore would not find it. Use a path every"
              + " Flink process reaches: leave --stateBackend and --stateBackendStoragePath unset"
              + " and set state.checkpoints.dir in the cluster's configuration (the local cluster"
              + " of './tidemark cluster up' does; --profile=flink-cluster leaves them unset), or"
              + " pass an s3://, gs:// or hdfs:// URI");
    }
    String backend = flink.getStateBackend();
    if (backend != null && backend.trim().equalsIgnoreCase("rocksdb") && !onClassPath()) {
      throw new IllegalArgumentException(
          "--stateBackend=rocksdb makes Beam create Flink's RocksDB backend in this launcher, and"
              + " its classes are not in the Tidemark jars (NoClassDefFoundError:"
              + " RocksDBStateBackend). Leave --stateBackend unset and configure the cluster:"
              + " state.backend.type: rocksdb, state.backend.incremental: true,"
              + " state.checkpoints.dir: a directory every Flink process reaches");
    }
  }

  private static boolean onClassPath() {
    try {
      Class.forName(BEAM_ROCKSDB_BACKEND, false, OptionChecks.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }
}
