package dev.tidemark.bench.kafka;

import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * How a sink job runs: its state backend, checkpoint interval, transactional shards, and the two
 * latency settings (null: the runner's default).
 *
 * @param maxBundleTimeMills the FlinkRunner's {@code --maxBundleTimeMills}; null: Beam's 1000 ms
 * @param bufferTimeoutMillis Flink's network buffer timeout; null: Flink's 100 ms
 */
public record SinkJobSettings(
    StateBackend stateBackend,
    long checkpointIntervalMs,
    int sinkShards,
    @Nullable Long maxBundleTimeMills,
    @Nullable Long bufferTimeoutMillis) {
  /** The flink runner profile's checkpointing (runner-profiles/flink.properties). */
  public static final long CHECKPOINT_INTERVAL_MS = 2000;

  public static final long MIN_PAUSE_BETWEEN_CHECKPOINTS_MS = 500;

  /** The flink profile's checkpointing on {@code backend}, one shard, the runner's defaults. */
  public static SinkJobSettings of(StateBackend backend) {
    return new SinkJobSettings(backend, CHECKPOINT_INTERVAL_MS, 1, null, null);
  }

  /** These settings with a bundle of at most {@code bundleMillis} and that buffer timeout. */
  public SinkJobSettings withLatencySettings(long bundleMillis, long bufferMillis) {
    return new SinkJobSettings(
        stateBackend, checkpointIntervalMs, sinkShards, bundleMillis, bufferMillis);
  }

  /** These settings with checkpoints every {@code millis}. */
  public SinkJobSettings withCheckpointInterval(long millis) {
    return new SinkJobSettings(
        stateBackend, millis, sinkShards, maxBundleTimeMills, bufferTimeoutMillis);
  }
}
