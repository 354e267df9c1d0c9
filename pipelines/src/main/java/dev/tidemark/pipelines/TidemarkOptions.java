package dev.tidemark.pipelines;

import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.StreamingOptions;

/**
 * Every option of the Tidemark pipeline, composed from small mixins. Durations are ISO-8601 strings
 * ({@code PT5M}); they are validated when the pipeline is built, with messages that say how to fix
 * them.
 */
public interface TidemarkOptions
    extends PipelineOptions,
        StreamingOptions,
        SpecOptions,
        SourceOptions,
        IdentityOptions,
        WindowOptions,
        ScoringOptions,
        OutputOptions,
        KafkaOptions,
        BigQuerySinkOptions,
        PubsubOptions {
  /** What the job does, in one line: the CLI's and the Flex Template's description. */
  String DESCRIPTION = "Event-time, deduplicated, scored payment CloudEvents on Apache Beam.";

  /** Event sources. */
  enum SourceKind {
    replay,
    backfill,
    kafka,
    pubsub
  }

  /** Where the outputs go. */
  enum SinkKind {
    files,
    kafka,
    bigquery
  }

  /** Pane accumulation. */
  enum AccumulationKind {
    ACCUMULATING,
    DISCARDING
  }
}
