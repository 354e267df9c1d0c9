package dev.tidemark.bench.kafka;

import dev.tidemark.bench.beam.IncrementalRocksDbFactory;

/** Where a sink job keeps its state. */
public enum StateBackend {
  /** Flink's heap state backend with full checkpoints, as the flink runner profile. */
  HEAP("heap", "--stateBackend=filesystem"),

  /** RocksDB with incremental checkpoints. */
  ROCKSDB("rocksdb", "--stateBackendFactory=" + IncrementalRocksDbFactory.class.getName());

  /** How measurements and notes name it. */
  public final String label;

  /** The pipeline option that selects it. */
  final String argument;

  StateBackend(String label, String argument) {
    this.label = label;
    this.argument = argument;
  }
}
