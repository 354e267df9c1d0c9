package dev.tidemark.pipelines;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.Hidden;
import org.apache.beam.sdk.options.PipelineOptions;

/** Where the outputs go, and in which record format. */
public interface OutputOptions extends PipelineOptions {
  /**
   * The record format of the Kafka decisions topic ({@code --outputFormat}). Beam's enum options
   * take Java names, and the option's values are hyphenated: the option is a string that {@link
   * #parse} turns into one of these.
   */
  enum OutputFormat {
    /** Key decisionId, value the decision JSON, headers version and paneTiming. */
    JSON("json"),
    /**
     * A CloudEvent in structured mode: value the event in the JSON event format, header {@code
     * content-type: application/cloudevents+json}.
     */
    CLOUDEVENTS_STRUCTURED("cloudevents-structured"),
    /** A CloudEvent in binary mode: attributes in {@code ce_*} headers, value the decision JSON. */
    CLOUDEVENTS_BINARY("cloudevents-binary");

    private final String value;

    OutputFormat(String value) {
      this.value = value;
    }

    /** The option value, as given on the command line. */
    public String value() {
      return value;
    }

    /** Whether records of this format are CloudEvents. */
    public boolean isCloudEvent() {
      return this != JSON;
    }

    /** Every option value, in declaration order. */
    public static List<String> optionValues() {
      return Arrays.stream(values()).map(OutputFormat::value).collect(Collectors.toList());
    }

    /** The format {@code --outputFormat=value} names (case-insensitive), or a usage error. */
    public static OutputFormat parse(String value) {
      String given = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
      for (OutputFormat format : values()) {
        if (format.value.equals(given)) {
          return format;
        }
      }
      throw new IllegalArgumentException(
          "--outputFormat=" + value + ": use one of " + String.join(", ", optionValues()));
    }
  }

  @Description(
      "Output directory: decisions/, dead-letters/, duplicates/, too-late/ (NDJSON) and"
          + " summary.json.")
  @Default.String("out")
  String getOutput();

  void setOutput(String directory);

  @Description(
      "The runner profile of the run, which 'tidemark run --profile' and a Flex Template launch"
          + " set (not a template parameter): the spec's outputs for this profile choose the sink and"
          + " name its topics or tables unless their options do.")
  @Default.InstanceFactory(RunnerProfiles.DefaultProfile.class)
  @Hidden
  String getRunnerProfile();

  void setRunnerProfile(String profile);

  @Description(
      "Where decisions, dead letters, duplicates and too-late records go: files (NDJSON under"
          + " --output), kafka (the --kafka*Topic topics) or bigquery (the tables of"
          + " --bigQueryDataset). Default: the spec's outputs.<profile>.sink for the run's"
          + " profile, files when the spec has none.")
  @Default.InstanceFactory(SpecDefaults.Sink.class)
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

  @Description(
      "Record format of the Kafka decisions topic (--sink=kafka only): json (value = the decision"
          + " JSON), cloudevents-structured (value = a CloudEvent of type dev.tidemark.decision.v1"
          + " in the JSON event format) or cloudevents-binary (the same event with its attributes"
          + " in ce_* headers and the decision JSON as value). The other three topics stay JSON.")
  @Default.String("json")
  String getOutputFormat();

  void setOutputFormat(String format);

  @Description(
      "The CloudEvents source (a URI reference) of the decision events --outputFormat=cloudevents-*"
          + " writes; with the id it identifies an event, so it must stay the same across"
          + " restarts and differ between pipelines. Default: /tidemark/<kafkaDecisionsTopic>.")
  String getOutputEventSource();

  void setOutputEventSource(String source);
}
