package dev.tidemark.launcher.it.kafka;

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.joda.time.Duration;

/** Runs a pipeline whose Kafka read is bounded ({@code withMaxRecords}) to its end. */
final class BoundedReads {
  private BoundedReads() {}

  /**
   * Runs {@code pipeline} and waits up to two minutes for it to finish: a bounded read ends after
   * its records, and one that never sees them fails here, its job cancelled.
   */
  static void runToEnd(Pipeline pipeline) {
    PipelineResult result = pipeline.run();
    PipelineResult.State state = result.waitUntilFinish(Duration.standardMinutes(2));
    if (state != PipelineResult.State.DONE) {
      try {
        result.cancel();
      } catch (java.io.IOException e) {
        throw new AssertionError("the bounded read did not end, nor could it be cancelled", e);
      }
      throw new AssertionError("the bounded read did not end within 2 minutes: " + state);
    }
  }
}
