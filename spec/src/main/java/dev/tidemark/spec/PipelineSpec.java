package dev.tidemark.spec;

import java.io.Serializable;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * A pipeline spec, format {@value #FORMAT}: the five choices a stream job writes down before any
 * window or broker setting (which events, their identity, their clocks, the windows and features,
 * the model that decides and where the outputs go). Immutable and {@link Serializable}, so a
 * transform may carry it to the workers inside its DoFns. {@link SpecLoader} reads one from YAML
 * and refuses a spec with every problem listed; {@code docs/spec.md} is the reference.
 *
 * @param format the format version, {@value #FORMAT}
 * @param name the spec's name, e.g. {@code payments}
 * @param description free text, may be empty
 * @param labels how the truth about decided events, learnt later, is read and evaluated
 */
public record PipelineSpec(
    int format,
    String name,
    String description,
    Events events,
    Identity identity,
    Clocks clocks,
    Windows windows,
    List<Feature> features,
    Model model,
    Labels labels,
    Map<String, Output> outputs)
    implements Serializable {

  /** The format version this build reads and writes. */
  public static final int FORMAT = 1;

  /** The largest number of fields, and of features, a spec declares (a 64-bit presence mask). */
  public static final int MAX_FIELDS = 64;

  public PipelineSpec {
    features = List.copyOf(features);
    outputs = Map.copyOf(outputs);
  }

  /** The field named {@code name}, if declared. */
  public Optional<Field> field(String name) {
    return events.fields().stream().filter(f -> f.name().equals(name)).findFirst();
  }

  /** The feature names in declaration order: the model's input order. */
  public List<String> featureNames() {
    return features.stream().map(Feature::name).toList();
  }

  /**
   * Refuses a model whose input is not this spec's features, name for name and in order: a {@link
   * SpecException} on {@code specLocation} lists each difference.
   *
   * @param modelUri the model, as the run names it
   * @param modelFeatureNames the {@code featureNames} of its sidecar
   */
  public void checkModelFeatures(
      String specLocation, String modelUri, List<String> modelFeatureNames) {
    List<String> names = featureNames();
    if (names.equals(modelFeatureNames)) {
      return;
    }
    List<SpecException.Problem> problems = new java.util.ArrayList<>();
    for (int i = 0; i < Math.max(names.size(), modelFeatureNames.size()); i++) {
      String ours = i < names.size() ? "'" + names.get(i) + "'" : "nothing";
      String theirs =
          i < modelFeatureNames.size() ? "'" + modelFeatureNames.get(i) + "'" : "nothing";
      if (!ours.equals(theirs)) {
        problems.add(
            new SpecException.Problem(
                "features[" + i + "]",
                "the spec has " + ours + " where the model " + modelUri + " has " + theirs));
      }
    }
    problems.add(
        new SpecException.Problem(
            "model.uri",
            "the model's features "
                + modelFeatureNames
                + " are not the spec's "
                + names
                + "; train a model for this spec or name its features in the spec's order"));
    throw new SpecException(specLocation, problems);
  }

  /** The feature named {@code name}, if declared. */
  public Optional<Feature> feature(String name) {
    return features.stream().filter(f -> f.name().equals(name)).findFirst();
  }

  /**
   * The accepted events: CloudEvents {@code type} values, the size limit, the key (a field of
   * {@code data}) and the typed fields of {@code data}, in the order they are checked.
   */
  public record Events(List<String> types, int maxEventBytes, String key, List<Field> fields)
      implements Serializable {
    public Events {
      types = List.copyOf(types);
      fields = List.copyOf(fields);
    }
  }

  /** The type of a field of {@code data}. */
  public enum FieldType {
    STRING,
    DECIMAL,
    INTEGER,
    BOOLEAN,
    ENUM,
    COUNTRY,
    TIMESTAMP;

    /** The name written in a spec, e.g. {@code decimal}. */
    public String specName() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** Whether values are held as a {@code long} (numbers, booleans, epoch milliseconds). */
    public boolean isLong() {
      return this == DECIMAL || this == INTEGER || this == BOOLEAN || this == TIMESTAMP;
    }

    /** Whether values are numbers that can be added. */
    public boolean isNumber() {
      return this == DECIMAL || this == INTEGER;
    }
  }

  /**
   * One typed field of {@code data}. Attributes that do not apply to the type are null (or 0).
   *
   * @param name the member name in {@code data}
   * @param type its type
   * @param optional whether it may be absent or null
   * @param reason the dead-letter reason of a value that fails validation (or a required field that
   *     is absent)
   * @param minLength string: least length in code points
   * @param maxLength string: greatest length in code points, or null for no limit beyond the record
   * @param plainText string: whether control characters and unpaired surrogates are refused
   * @param scale decimal: most digits after the point; values are held as unscaled {@code long}s
   * @param integerDigits decimal: most digits before the point
   * @param min decimal or integer: least value, or null
   * @param max decimal or integer: greatest value, or null
   * @param values enum: the accepted values
   */
  public record Field(
      String name,
      FieldType type,
      boolean optional,
      String reason,
      int minLength,
      @Nullable Integer maxLength,
      boolean plainText,
      int scale,
      int integerDigits,
      @Nullable BigDecimal min,
      @Nullable BigDecimal max,
      List<String> values)
      implements Serializable {
    public Field {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(type, "type");
      Objects.requireNonNull(reason, "reason");
      values = List.copyOf(values);
    }
  }

  /** Event identity: CloudEvents {@code source}+{@code id} are remembered for the horizon. */
  public record Identity(Duration horizon) implements Serializable {}

  /**
   * The clocks.
   *
   * @param eventTime {@code time} (the CloudEvents attribute) or the name of a timestamp field
   * @param maxFutureSkew how far after its ingestion time an event time may lie
   * @param maxOutOfOrderness how far behind the newest event time the watermark is held
   */
  public record Clocks(String eventTime, Duration maxFutureSkew, Duration maxOutOfOrderness)
      implements Serializable {
    /** The CloudEvents attribute that is the event time unless a field is named. */
    public static final String TIME_ATTRIBUTE = "time";
  }

  /** Pane accumulation. */
  public enum Accumulation {
    ACCUMULATING,
    DISCARDING
  }

  /**
   * Sliding event-time windows and their triggers.
   *
   * @param size window length
   * @param period window start interval; divides {@code size}
   * @param earlyFiring processing-time delay of early firings after a pane's first element, or null
   *     for none
   * @param lateFiring processing-time delay of late firings after a pane's first late element
   * @param allowedLateness how long after a window's end late events still revise it
   * @param accumulation whether a pane holds everything so far or only what is new
   */
  public record Windows(
      Duration size,
      Duration period,
      @Nullable Duration earlyFiring,
      Duration lateFiring,
      Duration allowedLateness,
      Accumulation accumulation)
      implements Serializable {}

  /** What a feature computes. */
  public enum Aggregation {
    COUNT,
    SUM,
    MIN,
    MAX,
    MEAN,
    DISTINCT,
    LAST,
    /** Computed by a {@code CombineFn} the Java caller supplies ({@link SpecFeaturesFn}). */
    CUSTOM;

    /** The name written in a spec, e.g. {@code distinct}. */
    public String specName() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /** The type of a feature's value. */
  public enum ValueType {
    /** A {@code long}. */
    INTEGER,
    /** An unscaled {@code long} with the scale of its field. */
    DECIMAL,
    /** A {@code double}. */
    DOUBLE,
    /** Epoch milliseconds in a {@code long}. */
    TIMESTAMP,
    /** 0 or 1 in a {@code long}. */
    BOOLEAN
  }

  /**
   * One named feature, in model input order.
   *
   * @param name the feature's name (the model's feature name)
   * @param aggregation what it computes
   * @param of the field it aggregates; null for a count of events or a custom feature
   * @param where conditions every counted event meets (all of them); empty for all events
   * @param maxDistinct distinct: the most values kept; more saturate the feature
   * @param valueType the type of the feature's value
   * @param scale the scale of a {@link ValueType#DECIMAL} value, else 0
   */
  public record Feature(
      String name,
      Aggregation aggregation,
      @Nullable String of,
      List<Condition> where,
      int maxDistinct,
      ValueType valueType,
      int scale)
      implements Serializable {
    /** The default bound of a distinct count. */
    public static final int DEFAULT_MAX_DISTINCT = 10_000;

    /** The largest bound a spec may give a distinct count. */
    public static final int MAX_MAX_DISTINCT = 1_000_000;

    public Feature {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(aggregation, "aggregation");
      where = List.copyOf(where);
    }
  }

  /**
   * A filter condition: the field is present and equal to the value.
   *
   * @param field the field's name
   * @param value the value as written: {@code true}/{@code false}, a number, or the text
   */
  public record Condition(String field, String value) implements Serializable {}

  /**
   * The model and the decision it makes.
   *
   * @param uri {@code default}, a path, {@code file:}, {@code classpath:} or {@code gs://} URI
   * @param engine the engine the sidecar must name, or null for any
   * @param threshold a score at or above it gets {@code positiveLabel}
   * @param positiveLabel the decision at or above the threshold, e.g. {@code review}
   * @param negativeLabel the decision below it, e.g. {@code allow}
   */
  public record Model(
      String uri,
      @Nullable String engine,
      double threshold,
      String positiveLabel,
      String negativeLabel)
      implements Serializable {}

  /**
   * The labels stream: the truth about decided events, learnt after the decisions (a chargeback, a
   * confirmed report), as CloudEvents of type {@code tidemark.label.v1} naming the event they are
   * about. Not to be confused with {@link Model}'s decision names.
   *
   * @param positive the label values of the positive class (what the model should flag); any other
   *     value is negative
   * @param horizon how long after a window's end its decisions wait for labels, and how long a
   *     label's identity is remembered to deduplicate it
   * @param evaluationWindow the length of the rolling windows of judgement time that online
   *     evaluation sums per model version
   * @param evaluationPeriod how often a new evaluation window starts
   * @param evaluationLateness how long after its end an evaluation window takes late judgements
   * @param drift the thresholds of the drift alarms
   */
  public record Labels(
      List<String> positive,
      Duration horizon,
      Duration evaluationWindow,
      Duration evaluationPeriod,
      Duration evaluationLateness,
      Drift drift)
      implements Serializable {
    /** The positive values when a spec has no {@code labels} section. */
    public static final List<String> DEFAULT_POSITIVE = List.of("fraud");

    public Labels {
      positive = List.copyOf(positive);
    }
  }

  /**
   * The drift alarms' CUSUM settings, per model version and role. The score test sums {@code score
   * - referenceMean - scoreDelta} over decisions (and, for a fall, {@code referenceMean - score -
   * scoreDelta}), never below 0, and alarms when a sum exceeds {@code scoreThreshold}; the error
   * test does the same with 1 for a misclassified evaluation and 0 otherwise, against the training
   * error rate, with {@code errorDelta} and {@code errorThreshold}.
   *
   * @param scoreDelta the allowance of the score test: about half the smallest shift of the mean
   *     score worth an alarm
   * @param scoreThreshold the score test's alarm level, in score units summed over decisions
   * @param errorDelta the allowance of the error test: about half the smallest rise of the error
   *     rate worth an alarm
   * @param errorThreshold the error test's alarm level, in errors summed over evaluations
   * @param baselineEvaluations for a model whose sidecar has no error rate, how many first
   *     evaluations make its baseline error rate
   */
  public record Drift(
      double scoreDelta,
      double scoreThreshold,
      double errorDelta,
      double errorThreshold,
      int baselineEvaluations)
      implements Serializable {
    /** The settings of a spec that names none. */
    public static final Drift DEFAULT = new Drift(0.02, 50, 0.02, 30, 1000);
  }

  /** A sink kind. */
  public enum Sink {
    FILES,
    KAFKA,
    BIGQUERY
  }

  /** The four outputs every run writes, by their key in a spec's {@code names}. */
  public static final List<String> OUTPUTS =
      List.of("decisions", "deadLetters", "duplicates", "tooLate");

  /**
   * The outputs of the model's loop, by their key in a spec's {@code names}: the online
   * evaluations, the unmatched labels, the labels' duplicates and dead letters (a run that reads
   * labels writes them), and the drift alarms (every run).
   */
  public static final List<String> LABEL_OUTPUTS =
      List.of("evaluations", "unmatchedLabels", "labelDuplicates", "labelDeadLetters", "drift");

  /** {@link #OUTPUTS} and then {@link #LABEL_OUTPUTS}: every name a spec's {@code names} takes. */
  public static final List<String> ALL_OUTPUTS =
      Stream.concat(OUTPUTS.stream(), LABEL_OUTPUTS.stream()).toList();

  /**
   * Where one runner profile writes its outputs.
   *
   * @param sink the sink kind
   * @param names the name of each of {@link #ALL_OUTPUTS} on that sink (directory, topic or table)
   */
  public record Output(Sink sink, Map<String, String> names) implements Serializable {
    public Output {
      names = Map.copyOf(names);
    }
  }
}
