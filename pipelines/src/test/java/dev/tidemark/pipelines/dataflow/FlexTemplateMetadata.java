package dev.tidemark.pipelines.dataflow;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.model.ModelEngine;
import dev.tidemark.pipelines.RunSpecs;
import dev.tidemark.pipelines.SpecDefaults;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.Hidden;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.Validation;
import org.joda.time.format.ISOPeriodFormat;

/**
 * The Dataflow Flex Template metadata ({@code pipelines/flex-template/metadata.json}), generated
 * from {@link TidemarkOptions} by reflection so that the template's parameters cannot drift from
 * the pipeline's options.
 *
 * <p>Every getter declared on a {@code dev.tidemark} interface that {@link TidemarkOptions} extends
 * (directly or not) becomes one parameter; Beam's own options ({@code runner}, {@code project},
 * {@code region}, {@code tempLocation}, ...) are left to Dataflow, which sets them from the launch
 * request. {@code streaming} (Beam's {@code StreamingOptions}) is deliberately not a parameter: the
 * {@value FlexTemplateLauncher#PROFILE} runner profile fixes it (the template exists for the
 * unbounded Pub/Sub and Kafka sources), and as a Beam option it belongs with the job's other Beam
 * options, which {@code gcloud dataflow flex-template run --additional-pipeline-options} passes.
 *
 * <p>For each parameter: the help text is the getter's {@link Description} plus its default; the
 * parameter is optional unless the getter is {@link Validation.Required} and the {@value
 * FlexTemplateLauncher#PROFILE} profile does not set it (an unset option without a default is
 * {@code null}, which the pipeline treats as "not used"); the validation regex comes from the type
 * (enum constants, digits, a decimal, {@code true|false}, an ISO-8601 duration for options
 * documented as durations), from a naming convention for string options ({@code kafka*Topic},
 * {@code *Subscription}, {@code pubsub*Topic}, {@code *Table}, {@code *Dataset}, {@code *Gcs*}),
 * or, where neither says enough, from {@link #SPECIFIC_REGEXES}.
 *
 * <p>Regenerate after changing an option or the {@value FlexTemplateLauncher#PROFILE} profile, from
 * the project root (after {@code mvn -B -q -o install -DskipTests -pl transforms,model}):
 *
 * <pre>{@code
 * mvn -B -q -o -pl pipelines test -Dtest=FlexTemplateMetadataTest -Dtidemark.regenerate=true
 * }</pre>
 *
 * <p>or, with the shaded jar built, {@code java -cp pipelines/target/tidemark-dataflow.jar
 * dev.tidemark.pipelines.dataflow.FlexTemplateMetadata} ({@code --stdout} prints instead of
 * writing, {@code --check} compares and exits 1 on a difference). {@code FlexTemplateMetadataTest}
 * fails while the checked-in file differs from the generated one.
 */
public final class FlexTemplateMetadata {
  /** The checked-in file, relative to the project root. */
  public static final String METADATA_FILE = "pipelines/flex-template/metadata.json";

  /** The command that rewrites {@link #METADATA_FILE}, for messages. */
  public static final String REGENERATE_COMMAND =
      "mvn -B -q -o -pl pipelines test -Dtest=FlexTemplateMetadataTest -Dtidemark.regenerate=true";

  /** The system property that makes {@code FlexTemplateMetadataTest} rewrite the file. */
  public static final String REGENERATE_PROPERTY = "tidemark.regenerate";

  /** The template's name in the Dataflow console. */
  public static final String TEMPLATE_NAME = "Tidemark";

  /** Only interfaces in these packages contribute parameters. */
  static final String OWN_PACKAGE_PREFIX = "dev.tidemark.";

  /** An ISO-8601 duration as {@code Durations.parse} accepts it: weeks to seconds, no sign. */
  static final String DURATION_BODY;

  static {
    String seconds = "[0-9]+(?:[.,][0-9]+)?S";
    String time =
        "T(?:[0-9]+H(?:[0-9]+M)?(?:" + seconds + ")?|[0-9]+M(?:" + seconds + ")?|" + seconds + ")";
    String date = "(?:[0-9]+W)?(?:[0-9]+D)?";
    DURATION_BODY = "P(?:" + date + time + "|(?:[0-9]+W)?[0-9]+D|[0-9]+W)";
  }

  static final String DURATION_REGEX = "^" + DURATION_BODY + "$";
  static final String INTEGER_REGEX = "^[0-9]+$";
  static final String DECIMAL_REGEX = "^[0-9]+(?:\\.[0-9]+)?$";
  static final String BOOLEAN_REGEX = "^(?:true|false)$";
  static final String NON_EMPTY_REGEX = "^.+$";
  static final String KAFKA_TOPIC_REGEX = "^[a-zA-Z0-9._-]{1,249}$";
  static final String PUBSUB_SUBSCRIPTION_REGEX = "^projects/[^/]+/subscriptions/[^/]+$";
  static final String PUBSUB_TOPIC_REGEX = "^projects/[^/]+/topics/[^/]+$";
  static final String BIGQUERY_TABLE_REGEX = "^(?:[^:.\\s]+[:.])?[A-Za-z0-9_]+\\.[^.:\\s]+$";
  static final String BIGQUERY_DATASET_REGEX = "^(?:[^:.\\s]+[:.])?[A-Za-z0-9_]+$";
  static final String GCS_REGEX = "^gs://[a-z0-9][-_.a-z0-9]*[a-z0-9](?:/.*)?$";

  /**
   * Regexes for options whose meaning neither the type nor a naming convention captures. Keyed by
   * option name; {@code FlexTemplateMetadataTest} fails when a key names no option.
   */
  static final Map<String, String> SPECIFIC_REGEXES = specificRegexes();

  private static Map<String, String> specificRegexes() {
    Map<String, String> regexes = new TreeMap<>();
    // ISO 4217: three upper-case letters.
    regexes.put("currency", "^[A-Z]{3}$");
    // A comma-separated list of CloudEvent types, no blanks.
    regexes.put("eventTypes", "^[^,\\s]+(?:,[^,\\s]+)*$");
    // A duration, or 'none' (any case) to disable early firings.
    regexes.put("earlyFiringDelay", "^(?:" + DURATION_BODY + "|[Nn][Oo][Nn][Ee])$");
    // A duration, or 'none' (any case): a partial scoring batch waits for the end of its bundle.
    regexes.put("scoringMaxBatchWait", "^(?:" + DURATION_BODY + "|[Nn][Oo][Nn][Ee])$");
    // host:port[,host:port]. 'embedded' (a broker inside the launcher JVM) is left out on purpose:
    // Dataflow workers could not reach it.
    regexes.put("kafkaBootstrapServers", "^[^,:\\s]+:[0-9]{1,5}(?:,[^,:\\s]+:[0-9]{1,5})*$");
    regexes.put("kafkaStartOffset", "^(?:earliest|latest)$");
    regexes.put("kafkaSecurityProtocol", "^(?:PLAINTEXT|SSL|SASL_PLAINTEXT|SASL_SSL)$");
    regexes.put("kafkaSaslMechanism", "^(?:PLAIN|SCRAM-SHA-256|SCRAM-SHA-512|OAUTHBEARER)$");
    regexes.put("kafkaTruststoreType", "^(?:PKCS12|JKS|PEM)$");
    regexes.put("kafkaKeystoreType", "^(?:PKCS12|JKS|PEM)$");
    // A Java class name.
    regexes.put(
        "kafkaOauthLoginCallbackHandler",
        "^[A-Za-z_$][A-Za-z0-9_$]*(?:\\.[A-Za-z_$][A-Za-z0-9_$]*)*$");
    // Secret Manager secret versions, as KafkaClients checks them.
    for (String secret :
        List.of(
            "kafkaPasswordSecret",
            "kafkaUsernameSecret",
            "kafkaTruststoreSecret",
            "kafkaTruststorePasswordSecret",
            "kafkaKeystoreSecret",
            "kafkaKeystorePasswordSecret",
            "kafkaKeyPasswordSecret")) {
      regexes.put(secret, "^" + KafkaClients.PASSWORD_SECRET_REGEX + "$");
    }
    // Not a binding attribute (ce-*, any case), as PubsubSource.withIdAttribute refuses.
    regexes.put("pubsubIdAttribute", "^(?![Cc][Ee]-).+$");
    // The shipped model, or a model in Cloud Storage: a path on the launcher means nothing.
    regexes.put(
        "modelUri",
        "^(?:default|classpath:/.+|" + GCS_REGEX.substring(1, GCS_REGEX.length() - 1) + ")$");
    // A second model: on the job's classpath or in Cloud Storage.
    regexes.put(
        "shadowModelUri",
        "^(?:classpath:/.+|" + GCS_REGEX.substring(1, GCS_REGEX.length() - 1) + ")$");
    // The engines' DJL names, as ModelEngine.fromName documents them.
    regexes.put(
        "modelEngine",
        "^(?:"
            + Arrays.stream(ModelEngine.values())
                .map(e -> e.djlName().replaceAll("[^A-Za-z0-9]", "\\\\$0"))
                .collect(Collectors.joining("|"))
            + ")$");
    return Collections.unmodifiableMap(regexes);
  }

  /**
   * Options the template does not offer, with why: on Dataflow they mean nothing. The template
   * writes to BigQuery (the spec's sink for the profile), so the Kafka sink's options are not
   * offered either; {@code ./tidemark run --profile=dataflow --sink=kafka} still runs that variant.
   * {@code FlexTemplateMetadataTest} fails when a key names no option.
   */
  static final Map<String, String> NOT_ON_DATAFLOW = notOnDataflow();

  private static Map<String, String> notOnDataflow() {
    Map<String, String> reasons = new TreeMap<>();
    String files = "files on the launcher or a worker's disk, which nobody reads";
    reasons.put("input", "replay and backfill files: the template reads Pub/Sub or Kafka");
    reasons.put(
        "labelsInput",
        "labels files read once: a streaming job reads labels as a stream,"
            + " --pubsubLabelsSubscription or --kafkaLabelsTopic");
    reasons.put("labelsInReplay", "labels inside a replay: the template reads no replay");
    reasons.put("output", files);
    reasons.put("fileRollInterval", files);
    reasons.put("sink", "the template writes to BigQuery, the spec's sink for the profile");
    String kafkaSink = "the Kafka sink: the template writes to BigQuery";
    for (String option :
        List.of(
            "kafkaDecisionsTopic",
            "kafkaDeadLettersTopic",
            "kafkaDuplicatesTopic",
            "kafkaTooLateTopic",
            "kafkaSinkMode",
            "kafkaSinkGroupId",
            "kafkaSinkShards",
            "outputFormat",
            "outputEventSource")) {
      reasons.put(option, kafkaSink);
    }
    String workerFile = "a file or variable that would have to exist on every worker; use a secret";
    reasons.put("kafkaPasswordFile", workerFile);
    reasons.put("kafkaPasswordEnv", workerFile);
    reasons.put("kafkaTruststorePasswordFile", workerFile);
    reasons.put("kafkaKeystorePasswordFile", workerFile);
    reasons.put("kafkaKeyPasswordFile", workerFile);
    reasons.put("kafkaMaxRecords", "a bounded read, which would end the streaming job");
    return Collections.unmodifiableMap(reasons);
  }

  /** Enum options whose values the template narrows: the sources a streaming job can read. */
  static final Map<String, List<String>> VALUES_ON_DATAFLOW =
      Map.of("source", List.of("pubsub", "kafka"));

  /**
   * Options the template requires although the pipeline does not: where the BigQuery sink writes.
   */
  static final Set<String> REQUIRED_ON_DATAFLOW = Set.of("bigQueryDataset");

  /**
   * Options that apply only to one source, by prefix: shown (Google's {@code parentName} and {@code
   * parentTriggerValues}) only when {@code source} takes that value.
   */
  static final Map<String, String> SOURCE_BY_PREFIX = Map.of("pubsub", "pubsub", "kafka", "kafka");

  /**
   * Google's parameter types (pickers in the console) for options no convention covers. Google has
   * no type for a Secret Manager secret: those stay {@code TEXT}, with a regex of the version's
   * name. The model options stay {@code TEXT} too: they also take {@code default} and {@code
   * classpath:} values, which a Cloud Storage file type would not.
   */
  static final Map<String, String> SPECIFIC_TYPES =
      Map.of(
          "kafkaClientProperties", "GCS_READ_FILE",
          "kafkaKeystoreFile", "GCS_READ_FILE",
          "kafkaTruststoreFile", "GCS_READ_FILE");

  /** A naming convention for string options: which names it covers, its regex and picker. */
  private static final class Convention {
    final Predicate<String> applies;
    final String regex;
    final String paramType;

    Convention(Predicate<String> applies, String regex, String paramType) {
      this.applies = applies;
      this.regex = regex;
      this.paramType = paramType;
    }
  }

  /** Conventions for string options, first match wins. */
  private static final List<Convention> CONVENTIONS =
      List.of(
          new Convention(n -> n.equals("kafkaInputTopic"), KAFKA_TOPIC_REGEX, "KAFKA_READ_TOPIC"),
          new Convention(
              n -> n.startsWith("kafka") && n.endsWith("Topic"), KAFKA_TOPIC_REGEX, "KAFKA_TOPIC"),
          new Convention(
              n -> n.endsWith("Subscription"), PUBSUB_SUBSCRIPTION_REGEX, "PUBSUB_SUBSCRIPTION"),
          new Convention(
              n -> n.toLowerCase(Locale.ROOT).contains("pubsub") && n.endsWith("Topic"),
              PUBSUB_TOPIC_REGEX,
              "PUBSUB_TOPIC"),
          new Convention(n -> n.endsWith("Table"), BIGQUERY_TABLE_REGEX, "BIGQUERY_TABLE"),
          new Convention(n -> n.endsWith("Dataset"), BIGQUERY_DATASET_REGEX, "TEXT"),
          new Convention(n -> n.contains("Gcs") || n.startsWith("gcs"), GCS_REGEX, "TEXT"));

  /** Words shown in upper case in labels. */
  private static final Set<String> ACRONYMS =
      Set.of("uri", "url", "id", "eos", "sasl", "tls", "ssl", "gcs", "iso", "json", "ndjson");

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private FlexTemplateMetadata() {}

  /** One template parameter, before it becomes JSON. */
  public static final class Parameter {
    public final String name;
    public final String label;
    public final String helpText;
    public final boolean optional;
    public final String regex;
    public final String paramType;
    public final String group;

    /** The interface default, or {@code null}. */
    public final String interfaceDefault;

    /** What the {@value FlexTemplateLauncher#PROFILE} profile sets, or {@code null}. */
    public final String profileValue;

    public final List<String> enumValues;
    public final Class<?> type;

    /** The option whose value shows this one ({@code source}), or {@code null}. */
    public final String parentName;

    /** The values of {@link #parentName} that show this option. */
    public final List<String> parentTriggerValues;

    Parameter(
        String name,
        String label,
        String helpText,
        boolean optional,
        String regex,
        String paramType,
        String group,
        String interfaceDefault,
        String profileValue,
        List<String> enumValues,
        Class<?> type,
        String parentName,
        List<String> parentTriggerValues) {
      this.name = name;
      this.label = label;
      this.helpText = helpText;
      this.optional = optional;
      this.regex = regex;
      this.paramType = paramType;
      this.group = group;
      this.interfaceDefault = interfaceDefault;
      this.profileValue = profileValue;
      this.enumValues = enumValues;
      this.type = type;
      this.parentName = parentName;
      this.parentTriggerValues = parentTriggerValues;
    }

    /**
     * What the job uses when the parameter is not given: the profile's value, else the option's.
     */
    public String defaultValue() {
      return profileValue != null ? profileValue : interfaceDefault;
    }
  }

  /**
   * The parameters of {@code options}: its {@code dev.tidemark} mixins in declaration order, each
   * mixin's options sorted by name. {@code profile} holds the raw options of the runner profile the
   * template runs with (may be empty).
   */
  public static List<Parameter> parameters(
      Class<? extends PipelineOptions> options, Map<String, String> profile) {
    List<Parameter> parameters = new ArrayList<>();
    Set<String> seen = new LinkedHashSet<>();
    for (Class<?> mixin : ownInterfaces(options)) {
      List<Method> getters = new ArrayList<>();
      for (Method method : mixin.getDeclaredMethods()) {
        if (isGetter(method)
            && !method.isAnnotationPresent(Hidden.class)
            && !NOT_ON_DATAFLOW.containsKey(propertyName(method))) {
          getters.add(method);
        }
      }
      getters.sort(Comparator.comparing(FlexTemplateMetadata::propertyName));
      for (Method getter : getters) {
        String name = propertyName(getter);
        if (seen.add(name)) {
          parameters.add(parameter(mixin, getter, name, profile.get(name)));
        }
      }
    }
    return parameters;
  }

  /** The metadata JSON of {@link TidemarkOptions} under the profile at {@code home}. */
  public static String generate(Path home) {
    return toJson(parameters(TidemarkOptions.class, profileOptions(home)));
  }

  /** The raw (unexpanded) options of the template's runner profile, or none if it is missing. */
  public static Map<String, String> profileOptions(Path home) {
    Path file =
        home.resolve("runner-profiles").resolve(FlexTemplateLauncher.PROFILE + ".properties");
    if (!Files.isReadable(file)) {
      return Map.of();
    }
    Properties properties = new Properties();
    try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      properties.load(reader);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
    Map<String, String> options = new TreeMap<>();
    for (String name : properties.stringPropertyNames()) {
      options.put(name, properties.getProperty(name).trim());
    }
    return options;
  }

  /** Pretty-printed metadata with a trailing newline. */
  public static String toJson(List<Parameter> parameters) {
    ObjectNode root = MAPPER.createObjectNode();
    root.put("name", TEMPLATE_NAME);
    root.put("description", description());
    // A streaming template; Tidemark's dedup and windows need exactly-once processing. No
    // defaultStreamingMode: Google takes it only when both modes are supported.
    root.put("streaming", true);
    root.put("supportsAtLeastOnce", false);
    root.put("supportsExactlyOnce", true);
    ArrayNode array = root.putArray("parameters");
    for (Parameter p : parameters) {
      ObjectNode node = array.addObject();
      node.put("name", p.name);
      node.put("label", p.label);
      node.put("helpText", p.helpText);
      node.put("isOptional", p.optional);
      node.putArray("regexes").add(p.regex);
      node.put("paramType", p.paramType);
      // Google ignores groupName on a parameter with a parentName: it shows under its parent.
      if (p.parentName == null) {
        node.put("groupName", p.group);
      }
      if (p.defaultValue() != null) {
        node.put("defaultValue", p.defaultValue());
      }
      if (p.parentName != null) {
        node.put("parentName", p.parentName);
        ArrayNode triggers = node.putArray("parentTriggerValues");
        p.parentTriggerValues.forEach(triggers::add);
      }
      if (!p.enumValues.isEmpty()) {
        ArrayNode options = node.putArray("enumOptions");
        for (String value : p.enumValues) {
          options.addObject().put("value", value).put("label", value);
        }
      }
    }
    DefaultIndenter indenter = new DefaultIndenter("  ", "\n");
    DefaultPrettyPrinter printer =
        new DefaultPrettyPrinter()
            .withSeparators(
                Separators.createDefaultInstance()
                    .withObjectFieldValueSpacing(Separators.Spacing.AFTER));
    printer.indentObjectsWith(indenter);
    printer.indentArraysWith(indenter);
    try {
      return MAPPER.writer(printer).writeValueAsString(root) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write the template metadata", e);
    }
  }

  private static String description() {
    return TidemarkOptions.DESCRIPTION
        + " Runs on Dataflow with the '"
        + FlexTemplateLauncher.PROFILE
        + "' runner profile; unset parameters keep the profile's or the pipeline's default.";
  }

  private static Parameter parameter(
      Class<?> mixin, Method getter, String name, String profileValue) {
    Class<?> type = getter.getReturnType();
    Description description = getter.getAnnotation(Description.class);
    String defaultValue = defaultValue(getter);
    boolean durationOption =
        type == String.class
            && ((description != null && description.value().contains("ISO-8601"))
                || (defaultValue != null && isDuration(defaultValue)));
    List<String> enumValues = new ArrayList<>();
    String regex;
    String paramType;
    if (type.isEnum()) {
      for (Object constant : type.getEnumConstants()) {
        String value = ((Enum<?>) constant).name();
        if (!VALUES_ON_DATAFLOW.containsKey(name) || VALUES_ON_DATAFLOW.get(name).contains(value)) {
          enumValues.add(value);
        }
      }
      regex = "^(?:" + String.join("|", enumValues) + ")$";
      paramType = "ENUM";
    } else if (type == Boolean.class || type == boolean.class) {
      regex = BOOLEAN_REGEX;
      paramType = "BOOLEAN";
    } else if (isIntegral(type)) {
      regex = INTEGER_REGEX;
      paramType = "NUMBER";
    } else if (type == Double.class
        || type == double.class
        || type == Float.class
        || type == float.class) {
      regex = DECIMAL_REGEX;
      paramType = "NUMBER";
    } else if (durationOption) {
      regex = DURATION_REGEX;
      paramType = "TEXT";
    } else {
      regex = NON_EMPTY_REGEX;
      paramType = "TEXT";
      if (type == String.class) {
        for (Convention convention : CONVENTIONS) {
          if (convention.applies.test(name)) {
            regex = convention.regex;
            paramType = convention.paramType;
            break;
          }
        }
      }
    }
    if (SPECIFIC_REGEXES.containsKey(name)) {
      regex = SPECIFIC_REGEXES.get(name);
    }
    paramType = SPECIFIC_TYPES.getOrDefault(name, paramType);
    Validation.Required required = getter.getAnnotation(Validation.Required.class);
    boolean optional =
        !REQUIRED_ON_DATAFLOW.contains(name)
            && (required == null || required.groups().length > 0 || profileValue != null);
    String parentName = null;
    List<String> triggers = List.of();
    for (Map.Entry<String, String> prefix : SOURCE_BY_PREFIX.entrySet()) {
      if (name.startsWith(prefix.getKey())) {
        parentName = "source";
        triggers = List.of(prefix.getValue());
      }
    }
    return new Parameter(
        name,
        label(name),
        helpText(
            description,
            name,
            defaultValue != null ? defaultValue : specDefault(getter),
            profileValue),
        optional,
        regex,
        paramType,
        group(mixin),
        defaultValue,
        profileValue,
        Collections.unmodifiableList(enumValues),
        type,
        parentName,
        triggers);
  }

  private static String helpText(
      Description description, String name, String defaultValue, String profileValue) {
    StringBuilder text = new StringBuilder();
    if (description != null) {
      text.append(description.value().trim());
    } else {
      text.append("The --").append(name).append(" pipeline option.");
    }
    if (profileValue != null) {
      text.append(" Default (")
          .append(FlexTemplateLauncher.PROFILE)
          .append(" profile): ")
          .append(profileValue)
          .append('.');
    } else if (defaultValue != null) {
      text.append(" Default: ").append(defaultValue).append('.');
    }
    return text.toString();
  }

  /**
   * The value a spec-derived default ({@link SpecDefaults.FromSpec}) takes under the bundled
   * default spec, for the help text only: the parameter has no {@code defaultValue}, so that a
   * launch passes nothing and the value comes from the launch's {@code specUri}.
   */
  static String specDefault(Method getter) {
    Default.InstanceFactory factory = getter.getAnnotation(Default.InstanceFactory.class);
    if (factory == null || !SpecDefaults.FromSpec.class.isAssignableFrom(factory.value())) {
      return null;
    }
    try {
      Object value =
          ((SpecDefaults.FromSpec<?>) factory.value().getDeclaredConstructor().newInstance())
              .value(RunSpecs.load(null));
      return value == null ? null : value.toString() + " (the bundled payments spec)";
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The literal {@link Default} of a getter as a command-line string, or {@code null}. */
  static String defaultValue(Method getter) {
    for (Annotation annotation : getter.getAnnotations()) {
      if (annotation instanceof Default.String) {
        return ((Default.String) annotation).value();
      } else if (annotation instanceof Default.Enum) {
        return ((Default.Enum) annotation).value();
      } else if (annotation instanceof Default.Integer) {
        return Integer.toString(((Default.Integer) annotation).value());
      } else if (annotation instanceof Default.Long) {
        return Long.toString(((Default.Long) annotation).value());
      } else if (annotation instanceof Default.Short) {
        return Short.toString(((Default.Short) annotation).value());
      } else if (annotation instanceof Default.Byte) {
        return Byte.toString(((Default.Byte) annotation).value());
      } else if (annotation instanceof Default.Double) {
        return Double.toString(((Default.Double) annotation).value());
      } else if (annotation instanceof Default.Float) {
        return Float.toString(((Default.Float) annotation).value());
      } else if (annotation instanceof Default.Boolean) {
        return Boolean.toString(((Default.Boolean) annotation).value());
      } else if (annotation instanceof Default.Character) {
        return Character.toString(((Default.Character) annotation).value());
      } else if (annotation instanceof Default.Class) {
        return ((Default.Class) annotation).value().getName();
      }
    }
    return null;
  }

  /** Whether {@code value} is an ISO-8601 duration of weeks to seconds (what Joda converts). */
  static boolean isDuration(String value) {
    if (!value.startsWith("P")) {
      return false;
    }
    try {
      ISOPeriodFormat.standard().parsePeriod(value).toStandardDuration();
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  private static boolean isIntegral(Class<?> type) {
    return type == Integer.class
        || type == int.class
        || type == Long.class
        || type == long.class
        || type == Short.class
        || type == short.class
        || type == Byte.class
        || type == byte.class;
  }

  /** The {@code dev.tidemark} interfaces {@code options} extends, depth-first in declared order. */
  static List<Class<?>> ownInterfaces(Class<?> options) {
    Set<Class<?>> found = new LinkedHashSet<>();
    Deque<Class<?>> stack = new ArrayDeque<>();
    stack.push(options);
    while (!stack.isEmpty()) {
      Class<?> current = stack.pop();
      if (current.getName().startsWith(OWN_PACKAGE_PREFIX) && !found.add(current)) {
        continue;
      }
      Class<?>[] parents = current.getInterfaces();
      for (int i = parents.length - 1; i >= 0; i--) {
        stack.push(parents[i]);
      }
    }
    return new ArrayList<>(found);
  }

  private static boolean isGetter(Method method) {
    if (method.isSynthetic()
        || method.isDefault()
        || java.lang.reflect.Modifier.isStatic(method.getModifiers())
        || method.getParameterCount() != 0
        || method.getReturnType() == void.class) {
      return false;
    }
    String name = method.getName();
    boolean get = name.startsWith("get") && name.length() > 3;
    boolean is =
        name.startsWith("is")
            && name.length() > 2
            && (method.getReturnType() == boolean.class || method.getReturnType() == Boolean.class);
    if (!get && !is) {
      return false;
    }
    String suffix = name.substring(get ? 3 : 2);
    try {
      method.getDeclaringClass().getMethod("set" + suffix, method.getReturnType());
      return true;
    } catch (NoSuchMethodException e) {
      return false;
    }
  }

  /** The option name of a getter, as Beam derives it ({@code getKafkaIdleTimeout} -> ...). */
  static String propertyName(Method getter) {
    String name = getter.getName();
    String suffix = name.substring(name.startsWith("get") ? 3 : 2);
    if (suffix.length() > 1
        && Character.isUpperCase(suffix.charAt(0))
        && Character.isUpperCase(suffix.charAt(1))) {
      return suffix;
    }
    return Character.toLowerCase(suffix.charAt(0)) + suffix.substring(1);
  }

  /**
   * {@code kafkaSinkGroupId} -> {@code Kafka sink group ID}; {@code bigQueryDataset} -> {@code
   * BigQuery dataset}.
   */
  static String label(String name) {
    List<String> words = new ArrayList<>();
    for (String word : name.split("(?<=[a-z0-9])(?=[A-Z])")) {
      String lower = word.toLowerCase(Locale.ROOT);
      words.add(ACRONYMS.contains(lower) ? lower.toUpperCase(Locale.ROOT) : lower);
    }
    String first = words.get(0);
    words.set(0, Character.toUpperCase(first.charAt(0)) + first.substring(1));
    return String.join(" ", words)
        .replaceAll("(?i)\\bbig query\\b", "BigQuery")
        .replaceAll("(?i)\\bpubsub\\b", "Pub/Sub");
  }

  private static String group(Class<?> mixin) {
    String name = mixin.getSimpleName();
    if (name.endsWith("Options") && name.length() > "Options".length()) {
      name = name.substring(0, name.length() - "Options".length());
    }
    return label(Character.toLowerCase(name.charAt(0)) + name.substring(1));
  }

  /**
   * Writes (default), prints ({@code --stdout}) or checks ({@code --check}) {@link #METADATA_FILE}
   * under {@code home}; returns 0, or 1 when {@code --check} finds the file out of date.
   */
  public static int run(Path home, List<String> flags) throws IOException {
    String json = generate(home);
    Path file = home.resolve(METADATA_FILE);
    if (flags.contains("--stdout")) {
      System.out.print(json);
    } else if (flags.contains("--check")) {
      String current =
          Files.exists(file) ? new String(Files.readAllBytes(file), StandardCharsets.UTF_8) : "";
      if (!current.equals(json)) {
        System.err.println(file + " is out of date; regenerate it with: " + REGENERATE_COMMAND);
        return 1;
      }
      System.out.println(file + " is up to date");
    } else {
      Files.createDirectories(file.getParent());
      Files.write(file, json.getBytes(StandardCharsets.UTF_8));
      System.out.println("wrote " + file + " (" + parametersOf(json) + " parameters)");
    }
    return 0;
  }

  private static int parametersOf(String json) throws IOException {
    return MAPPER.readTree(json).get("parameters").size();
  }

  /**
   * Where {@code metadata} breaks a rule of Google's template metadata (the Dataflow API's {@code
   * TemplateMetadata} and {@code ParameterMetadata}) that makes one field valid only when another
   * holds; empty when it breaks none. Each message names the field and the rule.
   *
   * <ul>
   *   <li>{@code name} of the template, and {@code name}, {@code label}, {@code helpText} of each
   *       parameter, are required; parameter names are unique.
   *   <li>{@code supportsAtLeastOnce}, {@code supportsExactlyOnce} and {@code defaultStreamingMode}
   *       describe a streaming template; {@code defaultStreamingMode} is valid only when both modes
   *       are supported, and is {@code EXACTLY_ONCE}, {@code AT_LEAST_ONCE} or {@code UNSPECIFIED}.
   *   <li>{@code groupName} is considered only when {@code parentName} is not set; {@code
   *       parentTriggerValues} only when it is; {@code parentName} names another parameter, and the
   *       trigger values are among that parameter's enum values when it has some.
   *   <li>{@code enumOptions} go with {@code paramType} {@code ENUM} and the reverse.
   *   <li>A Cloud Storage picker ({@code paramType} {@code GCS_*}) gets a {@code gs://} default.
   * </ul>
   */
  static List<String> googleRuleViolations(com.fasterxml.jackson.databind.JsonNode metadata) {
    List<String> violations = new ArrayList<>();
    if (!metadata.path("name").isTextual() || metadata.path("name").asText().isEmpty()) {
      violations.add("template: name is required");
    }
    boolean streaming = metadata.path("streaming").asBoolean(false);
    boolean atLeastOnce = metadata.path("supportsAtLeastOnce").asBoolean(false);
    boolean exactlyOnce = metadata.path("supportsExactlyOnce").asBoolean(false);
    if (!streaming && (atLeastOnce || exactlyOnce || metadata.has("defaultStreamingMode"))) {
      violations.add("template: streaming modes on a template that is not streaming");
    }
    if (metadata.has("defaultStreamingMode")) {
      if (!(atLeastOnce && exactlyOnce)) {
        violations.add(
            "template: defaultStreamingMode is valid only when supportsAtLeastOnce and"
                + " supportsExactlyOnce are both true");
      }
      if (!Set.of("EXACTLY_ONCE", "AT_LEAST_ONCE", "UNSPECIFIED")
          .contains(metadata.get("defaultStreamingMode").asText())) {
        violations.add("template: defaultStreamingMode " + metadata.get("defaultStreamingMode"));
      }
    }
    Map<String, com.fasterxml.jackson.databind.JsonNode> byName = new LinkedHashMap<>();
    for (com.fasterxml.jackson.databind.JsonNode p : metadata.path("parameters")) {
      String name = p.path("name").asText("");
      if (name.isEmpty() || byName.put(name, p) != null) {
        violations.add("parameter '" + name + "': name is required and unique");
      }
    }
    for (Map.Entry<String, com.fasterxml.jackson.databind.JsonNode> e : byName.entrySet()) {
      String where = "parameter " + e.getKey() + ": ";
      com.fasterxml.jackson.databind.JsonNode p = e.getValue();
      for (String field : List.of("label", "helpText")) {
        if (p.path(field).asText("").isEmpty()) {
          violations.add(where + field + " is required");
        }
      }
      String paramType = p.path("paramType").asText("TEXT");
      if (p.has("parentName")) {
        if (p.has("groupName")) {
          violations.add(where + "groupName is ignored when parentName is set");
        }
        com.fasterxml.jackson.databind.JsonNode parent = byName.get(p.get("parentName").asText());
        if (parent == null || parent == p) {
          violations.add(where + "parentName " + p.get("parentName") + " names no other parameter");
        } else if (parent.has("enumOptions")) {
          Set<String> values = new LinkedHashSet<>();
          parent.get("enumOptions").forEach(o -> values.add(o.path("value").asText()));
          p.path("parentTriggerValues")
              .forEach(
                  v -> {
                    if (!values.contains(v.asText())) {
                      violations.add(
                          where + "parentTriggerValues " + v + " is not a value of its parent");
                    }
                  });
        }
      } else if (p.has("parentTriggerValues")) {
        violations.add(where + "parentTriggerValues is considered only with parentName");
      }
      if (p.has("enumOptions") != paramType.equals("ENUM")) {
        violations.add(where + "enumOptions go with paramType ENUM, and ENUM with enumOptions");
      }
      if (paramType.startsWith("GCS_")
          && p.has("defaultValue")
          && !p.get("defaultValue").asText().startsWith("gs://")) {
        violations.add(
            where + paramType + " defaults to " + p.get("defaultValue") + ", not a gs:// path");
      }
    }
    return violations;
  }

  /** The parameter names, for tests and messages. */
  static List<String> names(List<Parameter> parameters) {
    List<String> names = new ArrayList<>();
    for (Parameter p : parameters) {
      names.add(p.name);
    }
    return names;
  }

  /** Name to parameter. */
  static Map<String, Parameter> byName(List<Parameter> parameters) {
    Map<String, Parameter> map = new LinkedHashMap<>();
    for (Parameter p : parameters) {
      map.put(p.name, p);
    }
    return map;
  }
}
