package dev.tidemark.pipelines;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/** The BigQuery sink ({@code --sink=bigquery}). */
public interface BigQuerySinkOptions extends PipelineOptions {
  @Description(
      "BigQuery dataset for --sink=bigquery, as PROJECT:DATASET: decisions, dead letters,"
          + " duplicates and too-late records go to its tables decisions, dead_letters,"
          + " duplicates and too_late (docs/bigquery-schema.md; terraform/ creates them).")
  String getBigQueryDataset();

  void setBigQueryDataset(String dataset);

  @Description(
      "Create missing BigQuery tables (schema and primary key from the pipeline) instead of"
          + " failing. Off by default: terraform/ creates them with the CDC settings"
          + " (max_staleness, CMEK) that a table created by the pipeline lacks.")
  @Default.Boolean(false)
  Boolean getBigQueryCreateTables();

  void setBigQueryCreateTables(Boolean create);

  @Description(
      "Check at submission that the BigQuery dataset and tables exist. Turn off only where"
          + " Google cannot be reached (offline translation, tests).")
  @Default.Boolean(true)
  Boolean getBigQueryValidate();

  void setBigQueryValidate(Boolean validate);
}
