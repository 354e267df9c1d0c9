package dev.tidemark.pipelines;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/** The deduplication boundary. */
public interface IdentityOptions extends PipelineOptions {
  @Description(
      "How long (event time, ISO-8601) an event identity (source+id) is remembered after its"
          + " first copy. Unless given, the spec's identity.horizon.")
  @Default.InstanceFactory(SpecDefaults.DedupHorizon.class)
  String getDedupHorizon();

  void setDedupHorizon(String duration);
}
