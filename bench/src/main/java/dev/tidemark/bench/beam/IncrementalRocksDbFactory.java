package dev.tidemark.bench.beam;

import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.beam.runners.flink.FlinkPipelineOptions;
import org.apache.beam.runners.flink.FlinkStateBackendFactory;
import org.apache.flink.contrib.streaming.state.RocksDBStateBackend;
import org.apache.flink.runtime.state.StateBackend;

/**
 * RocksDB with incremental checkpoints under {@code --stateBackendStoragePath}, for a job on the
 * embedded MiniCluster ({@code --stateBackendFactory}). Beam's {@code --stateBackend=rocksdb}
 * leaves incremental checkpoints off (Flink's default), which is not what production runs.
 */
public final class IncrementalRocksDbFactory implements FlinkStateBackendFactory {
  // The legacy class is both the backend and the checkpoint storage, which is what a factory must
  // return: Beam sets no separate checkpoint storage for a factory's backend.
  @SuppressWarnings("deprecation")
  @Override
  public StateBackend createStateBackend(FlinkPipelineOptions options) {
    try {
      return new RocksDBStateBackend(options.getStateBackendStoragePath(), true);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
