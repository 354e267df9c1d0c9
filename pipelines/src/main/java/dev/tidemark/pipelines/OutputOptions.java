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

  @Description(
      "With an unbounded source and --sink=files: how often (ISO-8601) a new set of NDJSON files"
          + " is started per output.")
  @Default.String("PT1M")
  String getFileRollInterval();

  void setFileRollInterval(String duration);

  @Description(
      "Largest original payload (bytes) kept in a dead letter; a longer one is cut and marked"
          + " truncated, with its original size and SHA-256.")
  @Default.Integer(16384)
  Integer getMaxDeadLetterPayloadBytes();

  void setMaxDeadLetterPayloadBytes(Integer bytes);
}
