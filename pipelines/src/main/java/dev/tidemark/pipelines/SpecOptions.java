package dev.tidemark.pipelines;

import com.fasterxml.jackson.annotation.JsonIgnore;
import dev.tidemark.spec.PipelineSpec;
import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.DefaultValueFactory;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.Hidden;
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

  /**
   * The spec {@link #getSpecUri} names, read on first use and kept by these options (Beam keeps a
   * computed default), so the options whose defaults come from it read the file once. Not
   * serialized: the defaults computed from it travel with the options.
   */
  @JsonIgnore
  @Hidden
  @Default.InstanceFactory(LoadSpec.class)
  PipelineSpec getPipelineSpec();

  void setPipelineSpec(PipelineSpec spec);

  /** Reads the spec at {@link #getSpecUri} ({@link RunSpecs#read}). */
  final class LoadSpec implements DefaultValueFactory<PipelineSpec> {
    @Override
    public PipelineSpec create(PipelineOptions options) {
      return RunSpecs.read(options);
    }
  }
}
