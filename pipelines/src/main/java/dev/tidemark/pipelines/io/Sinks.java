package dev.tidemark.pipelines.io;

import dev.tidemark.pipelines.Durations;
import dev.tidemark.pipelines.EvaluateDecisions;
import dev.tidemark.pipelines.Outputs;
import dev.tidemark.pipelines.SpecDefaults;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.io.bigquery.BigQuerySinks;
import dev.tidemark.pipelines.io.kafka.KafkaChecks;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.io.kafka.KafkaSinks;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.DriftAlarm;
import dev.tidemark.transforms.values.DuplicateRecord;
import dev.tidemark.transforms.values.EvaluationSummary;
import dev.tidemark.transforms.values.Label;
import dev.tidemark.transforms.values.TooLateRecord;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;

/**
 * The sinks {@code --sink} names, built from the options: NDJSON files, Kafka topics or BigQuery
 * tables, each receiving all four {@link Outputs}, the drift alarms and, when the run reads labels,
 * the other outputs of the model's loop.
 */
public final class Sinks {
  private Sinks() {}

  /** {@code --fileRollInterval} as a duration; it must be positive. */
  public static Duration fileRollIntervalOf(TidemarkOptions options) {
    Duration interval = Durations.parse("fileRollInterval", options.getFileRollInterval());
    if (!interval.isLongerThan(Duration.ZERO)) {
      throw new IllegalArgumentException(
          "--fileRollInterval="
              + options.getFileRollInterval()
              + " must be positive: it is how often a streaming run with --sink=files starts a"
              + " new set of files, e.g. PT1M");
    }
    return interval;
  }

  /** Writes the outputs where {@code --sink} says. */
  public static void write(Outputs outputs, TidemarkOptions options) {
    write(outputs, null, options);
  }

  /**
   * Writes the outputs where {@code --sink} says, and the drift alarms (when not null) beside them,
   * under the spec's name of the {@code drift} output ({@link #labelNames}): with the file sink in
   * the same write as the outputs, a topic or a table of their own with the others.
   */
  public static void write(
      Outputs outputs, @Nullable PCollection<DriftAlarm> drift, TidemarkOptions options) {
    switch (options.getSink()) {
      case files:
        writeFiles(
            outputs,
            options.getOutput(),
            rollsFiles(options, outputs) ? fileRollIntervalOf(options) : null,
            fileNames(options),
            drift == null
                ? Map.of()
                : Map.of(
                    labelNames(options).get("drift"),
                    drift.apply(
                        "DriftToJson",
                        MapElements.into(TypeDescriptors.strings()).via(DriftAlarm::toJsonLine))));
        return;
      case kafka:
        KafkaClients clients = KafkaClients.from(options);
        KafkaChecks.checkSinkGroups(options, clients);
        KafkaSinks.write(outputs, options, clients);
        if (drift != null) {
          KafkaSinks.writeDrift(drift, options, clients);
        }
        return;
      case bigquery:
        BigQuerySinks.write(outputs, options, null);
        if (drift != null) {
          BigQuerySinks.writeDrift(drift, options, null);
        }
        return;
      default:
        throw new IllegalArgumentException("unknown --sink=" + options.getSink());
    }
  }

  /**
   * Where the run's sink puts the model loop's outputs, by their key in {@link
   * PipelineSpec#LABEL_OUTPUTS} (in that order): the spec's names for the run's profile on its
   * sink, the sink's defaults otherwise.
   */
  public static Map<String, String> labelNames(TidemarkOptions options) {
    Map<String, String> all = SpecDefaults.outputNames(options, sinkOf(options));
    Map<String, String> names = new LinkedHashMap<>();
    for (String output : PipelineSpec.LABEL_OUTPUTS) {
      names.put(output, all.get(output));
    }
    return names;
  }

  private static PipelineSpec.Sink sinkOf(TidemarkOptions options) {
    return PipelineSpec.Sink.valueOf(options.getSink().name().toUpperCase(Locale.ROOT));
  }

  /**
   * The directory of each output under {@code --output}, in {@link Outputs#NAMES}' order: the
   * spec's names for the run's profile ({@link SpecDefaults#outputNames}), {@link Outputs#NAMES} by
   * default.
   */
  public static List<String> fileNames(PipelineOptions options) {
    return inOutputOrder(SpecDefaults.outputNames(options, PipelineSpec.Sink.FILES));
  }

  /**
   * Where the run's sink puts each output, by the spec's output names ({@link
   * PipelineSpec#OUTPUTS}, in that order, then, when the run reads labels, the {@link
   * PipelineSpec#LABEL_OUTPUTS}, or else the drift alarms): directories under {@code --output},
   * Kafka topics (the four outputs' options may override the spec's names) or BigQuery tables.
   */
  public static Map<String, String> destinations(TidemarkOptions options) {
    List<String> names;
    switch (options.getSink()) {
      case files:
        names = fileNames(options);
        break;
      case kafka:
        names = List.copyOf(KafkaSinks.topics(options).values());
        break;
      default:
        names = inOutputOrder(SpecDefaults.outputNames(options, PipelineSpec.Sink.BIGQUERY));
    }
    Map<String, String> destinations = new LinkedHashMap<>();
    for (int i = 0; i < names.size(); i++) {
      destinations.put(PipelineSpec.OUTPUTS.get(i), names.get(i));
    }
    Map<String, String> labelNames = labelNames(options);
    if (Sources.readsLabels(options)) {
      destinations.putAll(labelNames);
    } else {
      destinations.put("drift", labelNames.get("drift"));
    }
    return destinations;
  }

  /**
   * The values of a map keyed by the spec's output names, in {@link PipelineSpec#OUTPUTS} order.
   */
  private static List<String> inOutputOrder(Map<String, String> byOutput) {
    return PipelineSpec.OUTPUTS.stream().map(byOutput::get).toList();
  }

  /**
   * Whether the file sink rolls its files: a live Kafka or Pub/Sub read never ends, and files
   * written when the input ends would never appear. A Kafka read with {@code --kafkaMaxRecords} is
   * bounded and, like a replay or a backfill, writes one set of files at its end.
   */
  public static boolean rollsFiles(TidemarkOptions options, Outputs outputs) {
    TidemarkOptions.SourceKind source = options.getSource();
    return (source == TidemarkOptions.SourceKind.kafka
            || source == TidemarkOptions.SourceKind.pubsub)
        && outputs.decisions.isBounded() == PCollection.IsBounded.UNBOUNDED;
  }

  /** Writes the four outputs as NDJSON under {@code --output}, once, when the input ends. */
  public static void writeFiles(Outputs outputs, String outputDirectory) {
    writeFiles(outputs, outputDirectory, null, Outputs.NAMES);
  }

  /**
   * Writes the four outputs as NDJSON under {@code --output}, each in the directory {@code names}
   * gives it ({@link #fileNames}): once when the input ends, or, with a {@code rollInterval}, a new
   * set of files per output every interval ({@link NdjsonFiles}).
   */
  public static void writeFiles(
      Outputs outputs,
      String outputDirectory,
      @Nullable Duration rollInterval,
      List<String> names) {
    writeFiles(outputs, outputDirectory, rollInterval, names, Map.of());
  }

  /** {@link #writeFiles(Outputs, String, Duration, List)} and more lines, by directory. */
  private static void writeFiles(
      Outputs outputs,
      String outputDirectory,
      @Nullable Duration rollInterval,
      List<String> names,
      Map<String, PCollection<String>> more) {
    Map<String, PCollection<String>> lines = new LinkedHashMap<>();
    lines.put(
        names.get(0),
        outputs.decisions.apply(
            "DecisionsToJson", MapElements.into(TypeDescriptors.strings()).via(Decision::toJson)));
    lines.put(
        names.get(1),
        outputs.deadLetters.apply(
            "DeadLettersToJson",
            MapElements.into(TypeDescriptors.strings()).via(DeadLetter::toJson)));
    lines.put(
        names.get(2),
        outputs.duplicates.apply(
            "DuplicatesToJson",
            MapElements.into(TypeDescriptors.strings()).via(DuplicateRecord::toJson)));
    lines.put(
        names.get(3),
        outputs.tooLate.apply(
            "TooLateToJson",
            MapElements.into(TypeDescriptors.strings()).via(TooLateRecord::toJson)));
    lines.putAll(more);
    outputs
        .decisions
        .getPipeline()
        .apply(
            "WriteFiles",
            rollInterval == null
                ? NdjsonFiles.write(lines, outputDirectory)
                : NdjsonFiles.write(lines, outputDirectory).withRollInterval(rollInterval));
  }

  /** The directory of the drift alarms under {@code --output}: with the file sink, always. */
  public static List<String> driftFileNames(TidemarkOptions options) {
    return options.getSink() == TidemarkOptions.SinkKind.files
        ? List.of(labelNames(options).get("drift"))
        : List.of();
  }

  /**
   * The directories of the label outputs under {@code --output}, in {@link
   * EvaluateDecisions.Result}'s order: none without labels or with another sink.
   */
  public static List<String> labelFileNames(TidemarkOptions options) {
    return Sources.readsLabels(options) && options.getSink() == TidemarkOptions.SinkKind.files
        ? labelOutputNames(options)
        : List.of();
  }

  /**
   * The names of the four label outputs on the run's sink, in {@link EvaluateDecisions.Result}'s
   * order (evaluations, unmatched labels, duplicates, dead letters).
   */
  private static List<String> labelOutputNames(TidemarkOptions options) {
    return List.copyOf(labelNames(options).values()).subList(0, EvaluateDecisions.NAMES.size());
  }

  /**
   * Writes the label outputs where {@code --sink} says, by the spec's names ({@link #labelNames}).
   */
  public static void writeLabels(
      EvaluateDecisions.Result labels, Outputs outputs, TidemarkOptions options) {
    switch (options.getSink()) {
      case files:
        writeLabelFiles(
            labels,
            options.getOutput(),
            rollsFiles(options, outputs) ? fileRollIntervalOf(options) : null,
            labelOutputNames(options));
        return;
      case kafka:
        KafkaSinks.writeLabels(labels, options, KafkaClients.from(options));
        return;
      case bigquery:
        BigQuerySinks.writeLabels(labels, options, null);
        return;
      default:
        throw new IllegalArgumentException("unknown --sink=" + options.getSink());
    }
  }

  /**
   * Writes the label outputs as NDJSON under {@code --output}, in the directories {@link
   * EvaluateDecisions#NAMES} gives: the evaluation summaries, the unmatched labels, the labels'
   * duplicates and dead letters; once, or with a {@code rollInterval} a set per interval.
   */
  public static void writeLabelFiles(
      EvaluateDecisions.Result labels, String outputDirectory, @Nullable Duration rollInterval) {
    writeLabelFiles(labels, outputDirectory, rollInterval, EvaluateDecisions.NAMES);
  }

  /** {@link #writeLabelFiles(EvaluateDecisions.Result, String, Duration)} in {@code names}. */
  private static void writeLabelFiles(
      EvaluateDecisions.Result labels,
      String outputDirectory,
      @Nullable Duration rollInterval,
      List<String> names) {
    Map<String, PCollection<String>> lines = new LinkedHashMap<>();
    lines.put(
        names.get(0),
        labels.summaries.apply(
            "EvaluationsToJson",
            MapElements.into(TypeDescriptors.strings()).via(EvaluationSummary::toJsonLine)));
    lines.put(
        names.get(1),
        labels.unmatched.apply(
            "UnmatchedLabelsToJson",
            MapElements.into(TypeDescriptors.strings()).via(Label::toJsonLine)));
    lines.put(
        names.get(2),
        labels.duplicates.apply(
            "LabelDuplicatesToJson",
            MapElements.into(TypeDescriptors.strings()).via(DuplicateRecord::toJson)));
    lines.put(
        names.get(3),
        labels.deadLetters.apply(
            "LabelDeadLettersToJson",
            MapElements.into(TypeDescriptors.strings()).via(DeadLetter::toJson)));
    NdjsonFiles files = NdjsonFiles.write(lines, outputDirectory);
    labels
        .summaries
        .getPipeline()
        .apply(
            "WriteLabelFiles", rollInterval == null ? files : files.withRollInterval(rollInterval));
  }
}
