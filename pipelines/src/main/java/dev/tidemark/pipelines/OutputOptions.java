package dev.tidemark.pipelines;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/** Local outputs. */
public interface OutputOptions extends PipelineOptions {
  @Description(
      "Output directory: decisions/, dead-letters/, duplicates/, too-late/ (NDJSON) and"
          + " summary.json.")
  @Default.String("out")
  String getOutput();

  void setOutput(String directory);

  @Description(
      "Where decisions, dead letters, duplicates and too-late records go: files (NDJSON under"
          + " --output), kafka (the --kafka*Topic topics) or bigquery (the tables of"
          + " --bigQueryDataset).")
  @Default.Enum("files")
  TidemarkOptions.SinkKind getSink();

  void setSink(TidemarkOptions.SinkKind sink);
}
