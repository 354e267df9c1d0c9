package dev.tidemark.pipelines;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/** The deduplication boundary. */
public interface IdentityOptions extends PipelineOptions {
  @Description(
      "How long (event time, ISO-8601) an event identity (source+id) is remembered after its"
          + " first copy.")
  @Default.String("PT24H")
  String getDedupHorizon();

  void setDedupHorizon(String duration);
}
