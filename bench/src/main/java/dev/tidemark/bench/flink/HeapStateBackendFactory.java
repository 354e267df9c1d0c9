package dev.tidemark.bench.flink;

import org.apache.beam.runners.flink.FlinkPipelineOptions;
import org.apache.beam.runners.flink.FlinkStateBackendFactory;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;

/**
 * Heap state for one Tidemark job on a cluster whose configuration says RocksDB ({@code
 * --stateBackendFactory}). Beam's {@code --stateBackend=filesystem} would also set a checkpoint
 * path in the launcher, which a remote master refuses; this backend keeps the cluster's {@code
 * state.checkpoints.dir}.
 */
public final class HeapStateBackendFactory implements FlinkStateBackendFactory {
  @Override
  public StateBackend createStateBackend(FlinkPipelineOptions options) {
    return new HashMapStateBackend();
  }
}
