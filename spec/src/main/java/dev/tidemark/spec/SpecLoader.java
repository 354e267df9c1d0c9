package dev.tidemark.spec;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.tidemark.spec.PipelineSpec.Accumulation;
import dev.tidemark.spec.PipelineSpec.Aggregation;
import dev.tidemark.spec.PipelineSpec.Clocks;
import dev.tidemark.spec.PipelineSpec.Condition;
import dev.tidemark.spec.PipelineSpec.Drift;
import dev.tidemark.spec.PipelineSpec.Events;
import dev.tidemark.spec.PipelineSpec.Feature;
import dev.tidemark.spec.PipelineSpec.Field;
import dev.tidemark.spec.PipelineSpec.FieldType;
import dev.tidemark.spec.PipelineSpec.Identity;
import dev.tidemark.spec.PipelineSpec.Labels;
import dev.tidemark.spec.PipelineSpec.Model;
import dev.tidemark.spec.PipelineSpec.Output;
import dev.tidemark.spec.PipelineSpec.Sink;
import dev.tidemark.spec.PipelineSpec.ValueType;
import dev.tidemark.spec.PipelineSpec.Windows;
import dev.tidemark.spec.SpecException.Problem;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Reads a {@link PipelineSpec} from YAML and checks it whole: every problem is collected with its
 * path ({@code features[3].of: no field 'amout' in events.fields (did you mean 'amount'?)}) and one
 * {@link SpecException} lists them all. Nothing else is thrown for any input text.
 *
 * <p>Checked: the format version, unknown keys, value types, names, each field's attributes for its
 * type, the key and the event-time field, durations (positive where they must be, whole
 * milliseconds, a window period that divides the size), each feature's field and whether its
 * aggregation fits the field's type, filters, the model and the outputs. {@code docs/spec.md} is
 * the reference of the format.
 */
public final class SpecLoader {
  private SpecLoader() {}

  /**
   * Dead-letter reasons the pipeline gives before or after the fields are read; a field may not
   * reuse one, so that a reason always names one cause.
   */
  public static final Set<String> RESERVED_REASONS =
      Set.of(
          "invalid_utf8",
          "oversized_record",
          "invalid_json",
          "not_a_cloudevent",
          "unsupported_specversion",
          "missing_attribute",
          "invalid_attribute",
          "invalid_time",
          "time_in_future",
          "unsupported_type",
          "invalid_cloudevent",
          "invalid_data",
          "invalid_directive",
          "after_end_of_replay",
          "scoring_failed",
          "sink_rejected");

  /** The runner profiles and their sinks when a spec has no {@code outputs}. */
  public static final Map<String, Sink> DEFAULT_PROFILES =
      Map.of(
          "local", Sink.FILES,
          "direct-kafka", Sink.KAFKA,
          "flink", Sink.KAFKA,
          "flink-cluster", Sink.KAFKA,
          "dataflow", Sink.BIGQUERY);

  /** The name of each output on a sink when a profile names none. */
  public static Map<String, String> defaultNames(Sink sink) {
    switch (sink) {
      case FILES:
        return names(
            "decisions",
            "dead-letters",
            "duplicates",
            "too-late",
            "evaluations",
            "unmatched-labels",
            "label-duplicates",
            "label-dead-letters",
            "drift");
      case KAFKA:
        return names(
            "tidemark.decisions",
            "tidemark.dead-letters",
            "tidemark.duplicates",
            "tidemark.too-late",
            "tidemark.evaluations",
            "tidemark.unmatched-labels",
            "tidemark.label-duplicates",
            "tidemark.label-dead-letters",
            "tidemark.drift");
      default:
        return names(
            "decisions",
            "dead_letters",
            "duplicates",
            "too_late",
            "evaluations",
            "unmatched_labels",
            "label_duplicates",
            "label_dead_letters",
            "drift_alarms");
    }
  }

  private static Map<String, String> names(String... values) {
    Map<String, String> names = new LinkedHashMap<>();
    for (int i = 0; i < values.length; i++) {
      names.put(PipelineSpec.ALL_OUTPUTS.get(i), values[i]);
    }
    return names;
  }

  private static final ObjectMapper YAML =
      YAMLMapper.builder(new YAMLFactory())
          .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
          .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
          .build();

  private static final Pattern NAME = Pattern.compile("[a-z][a-z0-9-]{0,62}");
  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,63}");
  private static final Pattern REASON = Pattern.compile("[a-z][a-z0-9_]{0,63}");
  private static final Pattern PROFILE = Pattern.compile("[a-z][a-z0-9-]{0,62}");
  private static final Pattern TABLE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,1023}");
  private static final Pattern TOPIC = Pattern.compile("[A-Za-z0-9._-]{1,249}");
  private static final Pattern DIRECTORY = Pattern.compile("[A-Za-z0-9._-]{1,255}");

  /** The durations a spec writes: ISO-8601, days at most, never negative (as the JSON Schema). */
  private static final Pattern DURATION =
      Pattern.compile(
          "P(?!$)([0-9]+D)?(T(?=[0-9])([0-9]+H)?([0-9]+M)?([0-9]+(\\.[0-9]{1,3})?S)?)?");

  private static final Set<String> COUNTRIES = Set.of(Locale.getISOCountries());
  private static final int MAX_WINDOWS_PER_EVENT = 10_000;
  private static final int DEFAULT_MAX_EVENT_BYTES = 64 * 1024;

  /** The bundled spec that is the pipeline's default. */
  public static final String DEFAULT_BUNDLED = "payments";

  /** The classpath directory of the bundled specs ({@code specs/*.yaml} of the source tree). */
  public static final String BUNDLED_RESOURCES = "dev/tidemark/spec/bundled/";

  /** Whether a spec of this name is bundled ({@code specs/<name>.yaml} in the source tree). */
  public static boolean isBundled(String name) {
    return NAME.matcher(name).matches()
        && SpecLoader.class.getClassLoader().getResource(BUNDLED_RESOURCES + name + ".yaml")
            != null;
  }

  /**
   * Reads and checks the bundled spec {@code name} (e.g. {@code payments}) from the classpath;
   * {@code specs/<name>.yaml} names it in problems.
   */
  public static PipelineSpec loadBundled(String name) {
    return parse(bundledText(name), "specs/" + name + ".yaml");
  }

  /**
   * The YAML text of the bundled spec {@code name}, as in {@code specs/<name>.yaml}: a start for a
   * spec of one's own.
   *
   * @throws SpecException when no such spec is bundled or it cannot be read
   */
  public static String bundledText(String name) {
    String location = "specs/" + name + ".yaml";
    if (!isBundled(name)) {
      throw new SpecException(
          location, List.of(new Problem("", "no bundled spec '" + name + "' on the classpath")));
    }
    try (InputStream in =
        SpecLoader.class.getClassLoader().getResourceAsStream(BUNDLED_RESOURCES + name + ".yaml")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new SpecException(location, List.of(new Problem("", "cannot read the spec: " + e)));
    }
  }

  /** Reads and checks the spec in {@code file}; its path names the spec in problems. */
  public static PipelineSpec load(Path file) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException | RuntimeException e) {
      throw new SpecException(
          file.toString(), List.of(new Problem("", "cannot read the spec: " + e)));
    }
    return parse(text, file.toString());
  }

  /** Reads and checks a spec from its YAML text; {@code location} names it in problems. */
  public static PipelineSpec parse(String yaml, String location) {
    JsonNode root;
    try {
      root = YAML.readTree(yaml);
    } catch (JsonProcessingException e) {
      throw new SpecException(
          location, List.of(new Problem("", "not valid YAML: " + e.getOriginalMessage())));
    } catch (RuntimeException e) {
      // SnakeYAML's own limits (aliases, nesting) surface as runtime exceptions.
      throw new SpecException(location, List.of(new Problem("", "not valid YAML: " + e)));
    }
    Reader reader = new Reader();
    PipelineSpec spec = reader.spec(root);
    if (!reader.problems.isEmpty() || spec == null) {
      throw new SpecException(location, reader.problems);
    }
    return spec;
  }

  /** Walks the YAML tree once, collecting problems; null where a section cannot be built. */
  private static final class Reader {
    final List<Problem> problems = new ArrayList<>();

    void problem(String path, String message) {
      problems.add(new Problem(path, message));
    }

    @Nullable PipelineSpec spec(@Nullable JsonNode root) {
      if (root == null || root.isMissingNode() || root.isNull()) {
        problem("", "the spec is empty; it starts with 'spec: 1'");
        return null;
      }
      if (!object(
          root,
          "",
          "spec",
          "name",
          "description",
          "events",
          "identity",
          "clocks",
          "windows",
          "features",
          "model",
          "labels",
          "outputs")) {
        return null;
      }
      JsonNode version = root.get("spec");
      if (version == null) {
        problem("spec", "missing; a spec starts with 'spec: " + PipelineSpec.FORMAT + "'");
      } else if (!version.isIntegralNumber() || version.asLong() != PipelineSpec.FORMAT) {
        problem(
            "spec",
            "format "
                + version
                + " is not one this build reads; it reads format "
                + PipelineSpec.FORMAT);
      }
      String name = text(root, "name", "name", null, NAME, "a lower-case name such as payments");
      String description = text(root, "description", "description", "", null, null);
      Events events = events(root.get("events"));
      Identity identity = identity(root.get("identity"));
      Clocks clocks = clocks(root.get("clocks"), events);
      Windows windows = windows(root.get("windows"));
      List<Feature> features = features(root.get("features"), events);
      Model model = model(root.get("model"));
      Labels labels = labels(root.get("labels"), windows);
      Map<String, Output> outputs = outputs(root.get("outputs"));
      if (!problems.isEmpty()
          || name == null
          || events == null
          || identity == null
          || clocks == null
          || windows == null
          || features == null
          || model == null
          || labels == null
          || outputs == null) {
        return null;
      }
      return new PipelineSpec(
          PipelineSpec.FORMAT,
          name,
          description,
          events,
          identity,
          clocks,
          windows,
          features,
          model,
          labels,
          outputs);
    }

    // ---- events ----

    @Nullable Events events(@Nullable JsonNode node) {
      if (node == null) {
        problem("events", "missing; a spec declares its events' types, key and fields");
        return null;
      }
      if (!object(node, "events", "types", "maxEventBytes", "key", "fields")) {
        return null;
      }
      List<String> types = new ArrayList<>();
      JsonNode typesNode = node.get("types");
      if (typesNode == null) {
        problem("events.types", "missing; list the accepted CloudEvents types");
      } else if (!typesNode.isArray() || typesNode.isEmpty()) {
        problem("events.types", "must be a non-empty list of CloudEvents types");
      } else {
        for (int i = 0; i < typesNode.size(); i++) {
          JsonNode type = typesNode.get(i);
          String path = "events.types[" + i + "]";
          if (!type.isTextual() || type.asText().isEmpty()) {
            problem(path, "must be a non-empty string, got " + describe(type));
          } else if (hasControlCharacter(type.asText())) {
            problem(path, "holds a control character");
          } else if (types.contains(type.asText())) {
            problem(path, "'" + type.asText() + "' is listed twice");
          } else {
            types.add(type.asText());
          }
        }
      }
      Integer maxEventBytes =
          integer(
              node, "maxEventBytes", "events.maxEventBytes", DEFAULT_MAX_EVENT_BYTES, 64, 1 << 30);
      List<Field> fields = new ArrayList<>();
      JsonNode fieldsNode = node.get("fields");
      if (fieldsNode == null) {
        problem("events.fields", "missing; declare the fields of data");
      } else if (!fieldsNode.isObject() || fieldsNode.isEmpty()) {
        problem("events.fields", "must be a non-empty map of field name to its type");
      } else if (fieldsNode.size() > PipelineSpec.MAX_FIELDS) {
        problem("events.fields", "more than " + PipelineSpec.MAX_FIELDS + " fields");
      } else {
        Set<String> reasons = new HashSet<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = fieldsNode.fields(); it.hasNext(); ) {
          Map.Entry<String, JsonNode> entry = it.next();
          Field field = field(entry.getKey(), entry.getValue(), maxEventBytes);
          if (field != null) {
            fields.add(field);
            reasons.add(field.reason());
          }
        }
      }
      boolean allFields = fieldsNode != null && fields.size() == fieldsNode.size();
      String key = text(node, "key", "events.key", null, null, null);
      if (key != null && allFields) {
        Field keyField = fields.stream().filter(f -> f.name().equals(key)).findFirst().orElse(null);
        if (keyField == null) {
          problem("events.key", noField(key, fields));
        } else if (keyField.optional()) {
          problem("events.key", "the key field '" + key + "' must not be optional");
        } else if (keyField.type() != FieldType.STRING
            && keyField.type() != FieldType.ENUM
            && keyField.type() != FieldType.COUNTRY) {
          problem(
              "events.key",
              "the key field '"
                  + key
                  + "' is "
                  + keyField.type().specName()
                  + "; a key is a string, enum or country field");
        }
      }
      if (types.isEmpty() || maxEventBytes == null || key == null || !allFields) {
        return null;
      }
      return new Events(types, maxEventBytes, key, fields);
    }

    @Nullable Field field(String name, JsonNode node, @Nullable Integer maxEventBytes) {
      String path = "events.fields." + name;
      if (!IDENTIFIER.matcher(name).matches()) {
        problem(path, "a field name is letters, digits and _, not starting with a digit");
        return null;
      }
      if (!node.isObject()) {
        problem(path, "must be a map such as {type: string}, got " + describe(node));
        return null;
      }
      JsonNode typeNode = node.get("type");
      FieldType type = null;
      if (typeNode == null) {
        problem(path + ".type", "missing; one of " + specNames(FieldType.values()));
      } else {
        type = choice(typeNode, path + ".type", FieldType.values(), FieldType::specName);
      }
      if (type == null) {
        object(node, path, allKeys(FieldType.values()));
        return null;
      }
      List<String> known = new ArrayList<>(List.of("type", "optional", "reason"));
      known.addAll(keysOf(type));
      if (!object(node, path, known.toArray(new String[0]))) {
        return null;
      }
      Boolean optional = bool(node, "optional", path + ".optional", false);
      String reason =
          text(node, "reason", path + ".reason", defaultReason(name), REASON, "a code like x_y");
      if (reason != null && RESERVED_REASONS.contains(reason)) {
        problem(
            path + ".reason",
            "'" + reason + "' is a reason the pipeline gives itself; choose another code");
      }
      int minLength = 0;
      Integer maxLength = null;
      boolean plain = false;
      int scale = 0;
      int integerDigits = 0;
      BigDecimal min = null;
      BigDecimal max = null;
      List<String> values = List.of();
      switch (type) {
        case STRING:
          Integer least = integer(node, "minLength", path + ".minLength", 1, 0, 1 << 30);
          minLength = least == null ? 0 : least;
          maxLength = integer(node, "maxLength", path + ".maxLength", null, 1, 1 << 30);
          if (maxLength != null && maxLength < minLength) {
            problem(path + ".maxLength", maxLength + " is below minLength " + minLength);
          }
          if (maxLength != null && maxEventBytes != null && maxLength > maxEventBytes) {
            problem(
                path + ".maxLength",
                maxLength + " is over events.maxEventBytes " + maxEventBytes + "; no record fits");
          }
          String chars = text(node, "chars", path + ".chars", "plain", null, null);
          if (chars != null && !chars.equals("plain") && !chars.equals("any")) {
            problem(path + ".chars", "'" + chars + "' is not plain or any");
          }
          plain = !"any".equals(chars);
          break;
        case DECIMAL:
          Integer scaleValue = integer(node, "scale", path + ".scale", null, 0, 18);
          if (scaleValue == null && !node.has("scale")) {
            problem(path + ".scale", "missing; a decimal declares its digits after the point");
          }
          scale = scaleValue == null ? 0 : scaleValue;
          Integer digits =
              integer(node, "integerDigits", path + ".integerDigits", 18 - scale, 1, 18);
          integerDigits = digits == null ? 1 : digits;
          if (scale + integerDigits > 18) {
            problem(
                path + ".integerDigits",
                "scale "
                    + scale
                    + " + integerDigits "
                    + integerDigits
                    + " is over 18 digits; values are held in a 64-bit integer");
          }
          min = number(node, "min", path + ".min", scale);
          max = number(node, "max", path + ".max", scale);
          break;
        case INTEGER:
          min = number(node, "min", path + ".min", 0);
          max = number(node, "max", path + ".max", 0);
          break;
        case ENUM:
          values = enumValues(node.get("values"), path + ".values");
          break;
        default:
          break;
      }
      if (min != null && max != null && min.compareTo(max) > 0) {
        problem(path + ".max", max.toPlainString() + " is below min " + min.toPlainString());
      }
      if (optional == null || reason == null) {
        return null;
      }
      return new Field(
          name,
          type,
          optional,
          reason,
          minLength,
          maxLength,
          plain,
          scale,
          integerDigits,
          min,
          max,
          values);
    }

    List<String> enumValues(@Nullable JsonNode node, String path) {
      List<String> values = new ArrayList<>();
      if (node == null) {
        problem(path, "missing; an enum lists its values");
      } else if (!node.isArray() || node.isEmpty()) {
        problem(path, "must be a non-empty list of strings");
      } else {
        for (int i = 0; i < node.size(); i++) {
          JsonNode value = node.get(i);
          if (!value.isTextual() || value.asText().isEmpty()) {
            problem(path + "[" + i + "]", "must be a non-empty string, got " + describe(value));
          } else if (values.contains(value.asText())) {
            problem(path + "[" + i + "]", "'" + value.asText() + "' is listed twice");
          } else {
            values.add(value.asText());
          }
        }
      }
      return values;
    }

    // ---- identity, clocks, windows ----

    @Nullable Identity identity(@Nullable JsonNode node) {
      JsonNode section = section(node, "identity", "horizon");
      if (section == null) {
        return null;
      }
      Duration horizon = duration(section, "horizon", "identity.horizon", "PT24H", true);
      return horizon == null ? null : new Identity(horizon);
    }

    @Nullable Clocks clocks(@Nullable JsonNode node, @Nullable Events events) {
      JsonNode section = section(node, "clocks", "eventTime", "maxFutureSkew", "maxOutOfOrderness");
      if (section == null) {
        return null;
      }
      String eventTime =
          text(section, "eventTime", "clocks.eventTime", Clocks.TIME_ATTRIBUTE, null, null);
      if (eventTime != null && !eventTime.equals(Clocks.TIME_ATTRIBUTE) && events != null) {
        Field field =
            events.fields().stream()
                .filter(f -> f.name().equals(eventTime))
                .findFirst()
                .orElse(null);
        if (field == null) {
          problem(
              "clocks.eventTime",
              "'time' (the CloudEvents attribute) or a timestamp field; "
                  + noField(eventTime, events.fields()));
        } else if (field.type() != FieldType.TIMESTAMP || field.optional()) {
          problem(
              "clocks.eventTime",
              "the field '" + eventTime + "' must be a required timestamp field to be event time");
        }
      }
      Duration skew = duration(section, "maxFutureSkew", "clocks.maxFutureSkew", "PT10M", false);
      Duration disorder =
          duration(section, "maxOutOfOrderness", "clocks.maxOutOfOrderness", "PT30S", false);
      return eventTime == null || skew == null || disorder == null
          ? null
          : new Clocks(eventTime, skew, disorder);
    }

    @Nullable Windows windows(@Nullable JsonNode node) {
      JsonNode section =
          section(
              node,
              "windows",
              "size",
              "period",
              "earlyFiring",
              "lateFiring",
              "allowedLateness",
              "accumulation");
      if (section == null) {
        return null;
      }
      Duration size = duration(section, "size", "windows.size", "PT5M", true);
      Duration period = duration(section, "period", "windows.period", "PT30S", true);
      Duration early = null;
      boolean earlyOk = true;
      JsonNode earlyNode = section.get("earlyFiring");
      if (earlyNode != null && earlyNode.isTextual() && earlyNode.asText().equals("none")) {
        early = null;
      } else {
        early = duration(section, "earlyFiring", "windows.earlyFiring", "PT10S", false);
        earlyOk = early != null;
      }
      Duration late = duration(section, "lateFiring", "windows.lateFiring", "PT0S", false);
      Duration lateness =
          duration(section, "allowedLateness", "windows.allowedLateness", "PT1H", false);
      Accumulation accumulation = Accumulation.ACCUMULATING;
      JsonNode mode = section.get("accumulation");
      if (mode != null) {
        accumulation =
            choice(
                mode,
                "windows.accumulation",
                Accumulation.values(),
                a -> a.name().toLowerCase(Locale.ROOT));
      }
      if (size != null && period != null) {
        if (period.compareTo(size) > 0) {
          problem(
              "windows.period",
              period + " is longer than the window size " + size + "; windows would leave gaps");
        } else if (size.toMillis() % period.toMillis() != 0) {
          problem(
              "windows.period",
              period
                  + " does not divide the window size "
                  + size
                  + "; choose a period that does (size = period x a whole number)");
        } else if (size.toMillis() / period.toMillis() > MAX_WINDOWS_PER_EVENT) {
          problem(
              "windows.period",
              "size / period is "
                  + size.toMillis() / period.toMillis()
                  + " windows per event, over "
                  + MAX_WINDOWS_PER_EVENT);
        }
      }
      if (size == null || period == null || !earlyOk || late == null || lateness == null) {
        return null;
      }
      return accumulation == null
          ? null
          : new Windows(size, period, early, late, lateness, accumulation);
    }

    // ---- features ----

    @Nullable List<Feature> features(@Nullable JsonNode node, @Nullable Events events) {
      if (node == null) {
        problem("features", "missing; list the features, in the model's input order");
        return null;
      }
      if (!node.isArray() || node.isEmpty()) {
        problem("features", "must be a non-empty list such as [{name: n, aggregate: count}]");
        return null;
      }
      if (node.size() > PipelineSpec.MAX_FIELDS) {
        problem("features", "more than " + PipelineSpec.MAX_FIELDS + " features");
        return null;
      }
      List<Feature> features = new ArrayList<>();
      Map<String, Integer> seen = new TreeMap<>();
      for (int i = 0; i < node.size(); i++) {
        String path = "features[" + i + "]";
        Feature feature = feature(node.get(i), path, events);
        if (feature != null) {
          Integer before = seen.putIfAbsent(feature.name(), i);
          if (before != null) {
            problem(
                path + ".name",
                "'" + feature.name() + "' is also the name of features[" + before + "]");
          }
          features.add(feature);
        }
      }
      return features.size() == node.size() ? features : null;
    }

    @Nullable Feature feature(JsonNode node, String path, @Nullable Events events) {
      if (!object(node, path, "name", "aggregate", "of", "where", "maxDistinct", "type")) {
        return null;
      }
      String name = text(node, "name", path + ".name", null, IDENTIFIER, "letters, digits and _");
      JsonNode aggregateNode = node.get("aggregate");
      Aggregation aggregation = null;
      if (aggregateNode == null) {
        problem(path + ".aggregate", "missing; one of " + specNames(Aggregation.values()));
      } else {
        aggregation =
            choice(aggregateNode, path + ".aggregate", Aggregation.values(), Aggregation::specName);
      }
      String of = node.has("of") ? text(node, "of", path + ".of", null, null, null) : null;
      Field field = null;
      boolean fieldsKnown = events != null;
      if (of != null && fieldsKnown) {
        field = events.fields().stream().filter(f -> f.name().equals(of)).findFirst().orElse(null);
        if (field == null) {
          problem(path + ".of", noField(of, events.fields()));
        }
      }
      if (aggregation == null) {
        return null;
      }
      if (aggregation != Aggregation.DISTINCT && node.has("maxDistinct")) {
        problem(path + ".maxDistinct", "only a distinct feature has maxDistinct");
      }
      if (aggregation != Aggregation.CUSTOM && node.has("type")) {
        problem(path + ".type", "only a custom feature declares its type");
      }
      boolean needsField = aggregation != Aggregation.COUNT && aggregation != Aggregation.CUSTOM;
      if (needsField && !node.has("of")) {
        problem(path + ".of", "missing; a " + aggregation.specName() + " names the field it reads");
      }
      if (aggregation == Aggregation.CUSTOM && node.has("of")) {
        problem(path + ".of", "a custom feature reads what its CombineFn reads; remove 'of'");
      }
      ValueType valueType = ValueType.INTEGER;
      int scale = 0;
      if (field != null) {
        FieldType type = field.type();
        switch (aggregation) {
          case SUM:
          case MEAN:
            if (!type.isNumber()) {
              misfit(path, aggregation, field, "a decimal or integer field");
            }
            valueType =
                aggregation == Aggregation.MEAN
                    ? ValueType.DOUBLE
                    : type == FieldType.DECIMAL ? ValueType.DECIMAL : ValueType.INTEGER;
            break;
          case MIN:
          case MAX:
          case LAST:
            boolean fits =
                type.isNumber()
                    || type == FieldType.TIMESTAMP
                    || (aggregation == Aggregation.LAST && type == FieldType.BOOLEAN);
            if (!fits) {
              misfit(
                  path,
                  aggregation,
                  field,
                  aggregation == Aggregation.LAST
                      ? "a decimal, integer, timestamp or boolean field (a feature is a number)"
                      : "a decimal, integer or timestamp field");
            }
            valueType = valueTypeOf(type);
            break;
          default:
            break;
        }
        scale = valueType == ValueType.DECIMAL ? field.scale() : 0;
      }
      int maxDistinct = 0;
      if (aggregation == Aggregation.DISTINCT) {
        Integer bound =
            integer(
                node,
                "maxDistinct",
                path + ".maxDistinct",
                Feature.DEFAULT_MAX_DISTINCT,
                1,
                Feature.MAX_MAX_DISTINCT);
        maxDistinct = bound == null ? 1 : bound;
      }
      if (aggregation == Aggregation.CUSTOM) {
        String type = text(node, "type", path + ".type", "double", null, null);
        if ("integer".equals(type)) {
          valueType = ValueType.INTEGER;
        } else if ("double".equals(type)) {
          valueType = ValueType.DOUBLE;
        } else if (type != null) {
          problem(path + ".type", "'" + type + "' is not integer or double");
        }
      }
      List<Condition> where = conditions(node.get("where"), path + ".where", events);
      if (name == null || (needsField && field == null) || where == null) {
        return null;
      }
      return new Feature(name, aggregation, of, where, maxDistinct, valueType, scale);
    }

    void misfit(String path, Aggregation aggregation, Field field, String wanted) {
      problem(
          path + ".of",
          aggregation.specName()
              + " does not fit the "
              + field.type().specName()
              + " field '"
              + field.name()
              + "'; it needs "
              + wanted);
    }

    @Nullable List<Condition> conditions(
        @Nullable JsonNode node, String path, @Nullable Events events) {
      if (node == null) {
        return List.of();
      }
      if (!node.isObject() || node.isEmpty()) {
        problem(path, "must be a map of field to value, such as {success: false}");
        return null;
      }
      if (events == null) {
        return null;
      }
      List<Condition> conditions = new ArrayList<>();
      boolean ok = true;
      for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> entry = it.next();
        String conditionPath = path + "." + entry.getKey();
        Field field =
            events.fields().stream()
                .filter(f -> f.name().equals(entry.getKey()))
                .findFirst()
                .orElse(null);
        if (field == null) {
          problem(conditionPath, noField(entry.getKey(), events.fields()));
          ok = false;
          continue;
        }
        String value = conditionValue(field, entry.getValue(), conditionPath);
        if (value == null) {
          ok = false;
        } else {
          conditions.add(new Condition(field.name(), value));
        }
      }
      return ok ? conditions : null;
    }

    /** The canonical text of a filter value for the field, or null after a problem. */
    @Nullable String conditionValue(Field field, JsonNode value, String path) {
      String got = describe(value);
      switch (field.type()) {
        case BOOLEAN:
          if (value.isBoolean()) {
            return value.asText();
          }
          problem(path, "the boolean field '" + field.name() + "' is compared with " + got);
          return null;
        case INTEGER:
        case DECIMAL:
          if (!value.isNumber()) {
            problem(path, "the number field '" + field.name() + "' is compared with " + got);
            return null;
          }
          BigDecimal number = value.decimalValue().stripTrailingZeros();
          int scale = field.type() == FieldType.DECIMAL ? field.scale() : 0;
          if (Math.max(0, number.scale()) > scale
              || number.precision() - number.scale() > 18 - scale) {
            problem(path, value + " cannot be a value of the field '" + field.name() + "'");
            return null;
          }
          return number.setScale(scale).toPlainString();
        case TIMESTAMP:
          if (value.isTextual() && FieldParser.isTimestamp(value.asText())) {
            return value.asText();
          }
          problem(path, "the timestamp field '" + field.name() + "' is compared with " + got);
          return null;
        case ENUM:
          if (value.isTextual() && field.values().contains(value.asText())) {
            return value.asText();
          }
          problem(
              path,
              got
                  + " is not one of "
                  + field.values()
                  + suggestion(value.asText(), field.values()));
          return null;
        case COUNTRY:
          if (value.isTextual() && COUNTRIES.contains(value.asText())) {
            return value.asText();
          }
          problem(path, got + " is not an ISO 3166-1 alpha-2 country code such as GB");
          return null;
        default:
          if (value.isTextual()) {
            return value.asText();
          }
          problem(path, "the string field '" + field.name() + "' is compared with " + got);
          return null;
      }
    }

    // ---- model, outputs ----

    @Nullable Model model(@Nullable JsonNode node) {
      if (node == null) {
        problem("model", "missing; name the model's uri (and its threshold)");
        return null;
      }
      if (!object(node, "model", "uri", "engine", "threshold", "labels")) {
        return null;
      }
      String uri = text(node, "uri", "model.uri", null, null, null);
      String engine =
          node.has("engine") ? text(node, "engine", "model.engine", null, null, null) : null;
      if (engine != null && !engine.equals("XGBoost") && !engine.equals("OnnxRuntime")) {
        problem("model.engine", "'" + engine + "' is not XGBoost or OnnxRuntime");
      }
      Double threshold = null;
      JsonNode thresholdNode = node.get("threshold");
      if (thresholdNode == null) {
        threshold = 0.5;
      } else if (!thresholdNode.isNumber()) {
        problem("model.threshold", "must be a number from 0 to 1, got " + describe(thresholdNode));
      } else if (thresholdNode.asDouble() < 0 || thresholdNode.asDouble() > 1) {
        problem("model.threshold", thresholdNode + " is not from 0 to 1");
      } else {
        threshold = thresholdNode.asDouble();
      }
      String positive = "review";
      String negative = "allow";
      JsonNode labels = node.get("labels");
      if (labels != null) {
        if (object(labels, "model.labels", "atOrAbove", "below")) {
          positive = text(labels, "atOrAbove", "model.labels.atOrAbove", positive, null, null);
          negative = text(labels, "below", "model.labels.below", negative, null, null);
          if (positive != null && positive.equals(negative)) {
            problem("model.labels", "both decisions are '" + positive + "'");
          }
        }
      }
      if (uri == null || threshold == null || positive == null || negative == null) {
        return null;
      }
      return new Model(uri, engine, threshold, positive, negative);
    }

    @Nullable Labels labels(@Nullable JsonNode node, @Nullable Windows windows) {
      JsonNode section = section(node, "labels", "positive", "horizon", "evaluation", "drift");
      if (section == null) {
        return null;
      }
      List<String> positive = new ArrayList<>();
      JsonNode values = section.get("positive");
      if (values == null) {
        positive.addAll(Labels.DEFAULT_POSITIVE);
      } else if (!values.isArray() || values.isEmpty()) {
        problem("labels.positive", "must be a non-empty list of label values such as [fraud]");
      } else {
        for (JsonNode value : values) {
          if (!value.isTextual() || value.asText().isEmpty()) {
            problem("labels.positive", "must list label values as strings, got " + describe(value));
          } else if (positive.contains(value.asText())) {
            problem("labels.positive", "'" + value.asText() + "' is listed twice");
          } else {
            positive.add(value.asText());
          }
        }
      }
      Duration horizon = duration(section, "horizon", "labels.horizon", "P7D", true);
      if (horizon != null && windows != null && horizon.compareTo(windows.allowedLateness()) <= 0) {
        problem(
            "labels.horizon",
            horizon
                + " must be longer than windows.allowedLateness ("
                + windows.allowedLateness()
                + "): a window's decisions must outlive its last pane");
      }
      JsonNode evaluation =
          section(
              section.get("evaluation"), "labels.evaluation", "window", "every", "allowedLateness");
      if (evaluation == null) {
        return null;
      }
      Duration window = duration(evaluation, "window", "labels.evaluation.window", "P1D", true);
      Duration every = duration(evaluation, "every", "labels.evaluation.every", "PT1H", true);
      Duration lateness =
          duration(
              evaluation, "allowedLateness", "labels.evaluation.allowedLateness", "PT0S", false);
      if (window != null && every != null && every.compareTo(window) > 0) {
        problem(
            "labels.evaluation.every",
            every + " is longer than the window " + window + ": some labels would fall in none");
      }
      Drift drift = drift(section.get("drift"));
      if (horizon == null || window == null || every == null || lateness == null || drift == null) {
        return null;
      }
      return new Labels(positive, horizon, window, every, lateness, drift);
    }

    @Nullable Drift drift(@Nullable JsonNode node) {
      JsonNode section =
          section(
              node,
              "labels.drift",
              "scoreDelta",
              "scoreThreshold",
              "errorDelta",
              "errorThreshold",
              "baselineEvaluations");
      if (section == null) {
        return null;
      }
      Drift defaults = Drift.DEFAULT;
      Double scoreDelta = fraction(section, "scoreDelta", defaults.scoreDelta());
      Double scoreThreshold = positive(section, "scoreThreshold", defaults.scoreThreshold());
      Double errorDelta = fraction(section, "errorDelta", defaults.errorDelta());
      Double errorThreshold = positive(section, "errorThreshold", defaults.errorThreshold());
      Integer baseline =
          integer(
              section,
              "baselineEvaluations",
              "labels.drift.baselineEvaluations",
              defaults.baselineEvaluations(),
              1,
              Integer.MAX_VALUE);
      if (scoreDelta == null
          || scoreThreshold == null
          || errorDelta == null
          || errorThreshold == null
          || baseline == null) {
        return null;
      }
      return new Drift(scoreDelta, scoreThreshold, errorDelta, errorThreshold, baseline);
    }

    /** A drift allowance: a number from 0 (inclusive) to 1 (exclusive). */
    @Nullable Double fraction(JsonNode node, String key, double fallback) {
      JsonNode value = node.get(key);
      if (value == null) {
        return fallback;
      }
      if (!value.isNumber() || value.asDouble() < 0 || value.asDouble() >= 1) {
        problem(
            "labels.drift." + key,
            "must be a number from 0 up to 1 (a shift of a score or an error rate), got "
                + describe(value));
        return null;
      }
      return value.asDouble();
    }

    /** A drift alarm level: a number above 0. */
    @Nullable Double positive(JsonNode node, String key, double fallback) {
      JsonNode value = node.get(key);
      if (value == null) {
        return fallback;
      }
      if (!value.isNumber() || !(value.asDouble() > 0) || Double.isInfinite(value.asDouble())) {
        problem(
            "labels.drift." + key,
            "must be a number above 0 (the CUSUM sum that raises an alarm), got "
                + describe(value));
        return null;
      }
      return value.asDouble();
    }

    @Nullable Map<String, Output> outputs(@Nullable JsonNode node) {
      Map<String, Output> outputs = new TreeMap<>();
      if (node == null) {
        DEFAULT_PROFILES.forEach(
            (profile, sink) -> outputs.put(profile, new Output(sink, defaultNames(sink))));
        return outputs;
      }
      if (!node.isObject() || node.isEmpty()) {
        problem("outputs", "must be a map of runner profile to {sink: files|kafka|bigquery}");
        return null;
      }
      boolean ok = true;
      for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> entry = it.next();
        String path = "outputs." + entry.getKey();
        if (!PROFILE.matcher(entry.getKey()).matches()) {
          problem(path, "a profile name is lower-case letters, digits and -");
          ok = false;
          continue;
        }
        Output output = output(entry.getValue(), path);
        if (output == null) {
          ok = false;
        } else {
          outputs.put(entry.getKey(), output);
        }
      }
      return ok ? outputs : null;
    }

    @Nullable Output output(JsonNode node, String path) {
      if (!object(node, path, "sink", "names")) {
        return null;
      }
      JsonNode sinkNode = node.get("sink");
      if (sinkNode == null) {
        problem(path + ".sink", "missing; one of files, kafka, bigquery");
        return null;
      }
      Sink sink =
          choice(sinkNode, path + ".sink", Sink.values(), s -> s.name().toLowerCase(Locale.ROOT));
      if (sink == null) {
        return null;
      }
      Map<String, String> names = new LinkedHashMap<>(defaultNames(sink));
      JsonNode namesNode = node.get("names");
      if (namesNode != null
          && object(namesNode, path + ".names", PipelineSpec.ALL_OUTPUTS.toArray(new String[0]))) {
        Pattern pattern = sink == Sink.FILES ? DIRECTORY : sink == Sink.KAFKA ? TOPIC : TABLE;
        for (String output : PipelineSpec.ALL_OUTPUTS) {
          String name =
              text(namesNode, output, path + ".names." + output, names.get(output), null, null);
          if (name != null && !pattern.matcher(name).matches()) {
            problem(
                path + ".names." + output,
                "'" + name + "' is not a valid " + sink.name().toLowerCase(Locale.ROOT) + " name");
          } else if (name != null) {
            names.put(output, name);
          }
        }
        if (new HashSet<>(names.values()).size() < names.size()) {
          problem(path + ".names", "two outputs share a name: " + names);
        }
      }
      return new Output(sink, names);
    }

    // ---- helpers ----

    /** An optional section: its node, an empty object when absent, or null after a problem. */
    @Nullable JsonNode section(@Nullable JsonNode node, String path, String... known) {
      if (node == null) {
        return YAML.createObjectNode();
      }
      return object(node, path, known) ? node : null;
    }

    /** Whether {@code node} is a map holding only {@code known} keys; problems otherwise. */
    boolean object(JsonNode node, String path, String... known) {
      if (!node.isObject()) {
        problem(path, "must be a map, got " + describe(node));
        return false;
      }
      List<String> knownKeys = Arrays.asList(known);
      boolean ok = true;
      for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
        String key = it.next();
        if (!knownKeys.contains(key)) {
          problem(
              path.isEmpty() ? key : path + "." + key,
              "unknown key '" + key + "'" + suggestion(key, knownKeys) + "; known: " + knownKeys);
          ok = false;
        }
      }
      return ok;
    }

    @Nullable String text(
        JsonNode node,
        String key,
        String path,
        @Nullable String fallback,
        @Nullable Pattern pattern,
        @Nullable String shape) {
      JsonNode value = node.get(key);
      if (value == null) {
        if (fallback == null) {
          problem(path, "missing");
        }
        return fallback;
      }
      if (!value.isTextual()) {
        problem(path, "must be a string, got " + describe(value));
        return null;
      }
      String text = value.asText();
      if (pattern != null && !pattern.matcher(text).matches()) {
        problem(path, "'" + text + "' is not " + shape);
        return null;
      }
      if (pattern == null && text.isEmpty() && fallback == null) {
        problem(path, "must not be empty");
        return null;
      }
      return text;
    }

    @Nullable Integer integer(
        JsonNode node, String key, String path, @Nullable Integer fallback, int min, int max) {
      JsonNode value = node.get(key);
      if (value == null) {
        return fallback;
      }
      if (!value.isIntegralNumber()) {
        problem(path, "must be a whole number, got " + describe(value));
        return null;
      }
      if (!value.canConvertToInt() || value.asInt() < min || value.asInt() > max) {
        problem(path, value + " is not from " + min + " to " + max);
        return null;
      }
      return value.asInt();
    }

    @Nullable Boolean bool(JsonNode node, String key, String path, boolean fallback) {
      JsonNode value = node.get(key);
      if (value == null) {
        return fallback;
      }
      if (!value.isBoolean()) {
        problem(path, "must be true or false, got " + describe(value));
        return null;
      }
      return value.asBoolean();
    }

    @Nullable BigDecimal number(JsonNode node, String key, String path, int scale) {
      JsonNode value = node.get(key);
      if (value == null) {
        return null;
      }
      if (!value.isNumber()) {
        problem(path, "must be a number, got " + describe(value));
        return null;
      }
      BigDecimal number = value.decimalValue().stripTrailingZeros();
      if (Math.max(0, number.scale()) > scale || number.precision() - number.scale() > 18 - scale) {
        problem(path, value + " does not fit " + scale + " decimal places in 18 digits");
        return null;
      }
      return number;
    }

    @Nullable Duration duration(
        JsonNode node, String key, String path, String fallback, boolean positive) {
      JsonNode value = node.get(key);
      if (value == null) {
        return Duration.parse(fallback);
      }
      if (!value.isTextual()) {
        problem(path, "must be an ISO-8601 duration such as PT5M, got " + describe(value));
        return null;
      }
      if (value.asText().startsWith("-") || value.asText().contains("-")) {
        problem(path, value.asText() + " is negative; it must be zero or longer");
        return null;
      }
      Duration duration;
      try {
        if (!DURATION.matcher(value.asText()).matches()) {
          throw new DateTimeParseException("not a duration", value.asText(), 0);
        }
        duration = Duration.parse(value.asText());
      } catch (DateTimeParseException e) {
        problem(path, "'" + value.asText() + "' is not an ISO-8601 duration such as PT5M");
        return null;
      }
      if (positive && duration.isZero()) {
        problem(path, "must be longer than zero");
        return null;
      }
      if (duration.getNano() % 1_000_000 != 0) {
        problem(path, value.asText() + " is not a whole number of milliseconds");
        return null;
      }
      if (duration.compareTo(Duration.ofDays(3650)) > 0) {
        problem(path, value.asText() + " is over ten years");
        return null;
      }
      return duration;
    }

    <E> @Nullable E choice(
        JsonNode node, String path, E[] options, java.util.function.Function<E, String> name) {
      List<String> names = new ArrayList<>();
      for (E option : options) {
        names.add(name.apply(option));
      }
      if (node.isTextual()) {
        int index = names.indexOf(node.asText());
        if (index >= 0) {
          return options[index];
        }
      }
      problem(path, describe(node) + " is not one of " + names + suggestion(node.asText(), names));
      return null;
    }
  }

  // ---- shared helpers ----

  private static String noField(String name, List<Field> fields) {
    List<String> names = fields.stream().map(Field::name).toList();
    return "no field '" + name + "' in events.fields" + suggestion(name, names);
  }

  private static ValueType valueTypeOf(FieldType type) {
    switch (type) {
      case DECIMAL:
        return ValueType.DECIMAL;
      case TIMESTAMP:
        return ValueType.TIMESTAMP;
      case BOOLEAN:
        return ValueType.BOOLEAN;
      default:
        return ValueType.INTEGER;
    }
  }

  private static List<String> keysOf(FieldType type) {
    switch (type) {
      case STRING:
        return List.of("minLength", "maxLength", "chars");
      case DECIMAL:
        return List.of("scale", "integerDigits", "min", "max");
      case INTEGER:
        return List.of("min", "max");
      case ENUM:
        return List.of("values");
      default:
        return List.of();
    }
  }

  private static String[] allKeys(FieldType[] types) {
    Set<String> keys = new java.util.LinkedHashSet<>(List.of("type", "optional", "reason"));
    for (FieldType type : types) {
      keys.addAll(keysOf(type));
    }
    return keys.toArray(new String[0]);
  }

  private static List<String> specNames(FieldType[] types) {
    return Arrays.stream(types).map(FieldType::specName).toList();
  }

  private static List<String> specNames(Aggregation[] aggregations) {
    return Arrays.stream(aggregations).map(Aggregation::specName).toList();
  }

  /**
   * {@code invalid_} and the field's name in snake case: {@code merchantId} gives
   * invalid_merchant_id.
   */
  static String defaultReason(String field) {
    return "invalid_"
        + field
            .replaceAll("([a-z0-9])([A-Z])", "$1_$2")
            .toLowerCase(Locale.ROOT)
            .replaceAll("[^a-z0-9_]", "_");
  }

  private static String describe(JsonNode node) {
    if (node.isTextual()) {
      return "'" + node.asText() + "'";
    }
    if (node.isObject()) {
      return "a map";
    }
    if (node.isArray()) {
      return "a list";
    }
    return node.isNull() ? "null" : node.toString();
  }

  private static boolean hasControlCharacter(String text) {
    return text.chars().anyMatch(Character::isISOControl);
  }

  /** {@code " (did you mean 'x'?)"} for the nearest candidate within a small edit distance. */
  static String suggestion(String word, List<String> candidates) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String candidate : candidates) {
      int distance = distance(word.toLowerCase(Locale.ROOT), candidate.toLowerCase(Locale.ROOT));
      if (distance < bestDistance) {
        best = candidate;
        bestDistance = distance;
      }
    }
    int allowed = Math.max(1, Math.min(3, word.length() / 3));
    return best != null && bestDistance <= allowed && !best.equals(word)
        ? " (did you mean '" + best + "'?)"
        : "";
  }

  private static int distance(String a, String b) {
    if (Math.abs(a.length() - b.length()) > 3 || a.length() > 256 || b.length() > 256) {
      return Integer.MAX_VALUE;
    }
    int[] previous = new int[b.length() + 1];
    int[] current = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      previous[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      current[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        current[j] =
            Math.min(Math.min(current[j - 1] + 1, previous[j] + 1), previous[j - 1] + cost);
      }
      int[] swap = previous;
      previous = current;
      current = swap;
    }
    return previous[b.length()];
  }
}
