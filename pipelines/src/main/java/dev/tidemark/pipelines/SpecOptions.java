package dev.tidemark.pipelines;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/** The pipeline spec the run follows ({@code docs/spec.md}). */
public interface SpecOptions extends PipelineOptions {
  @Description(
      "The pipeline spec (YAML, docs/spec.md): a bundled spec's name (payments, logins), a local"
          + " path, or a file: or gs:// URI. Its values (event types, identity, clocks, windows,"
          + " model, threshold) are the defaults of the other options; an option given explicitly"
          + " overrides the spec for this run. The CLI's --spec=PATH sets it.")
  @Default.String("payments")
  String getSpecUri();

  void setSpecUri(String uri);
}
