package dev.tidemark.pipelines.dataflow;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.endsWith;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.dataflow.FlexTemplateMetadata.Parameter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.options.Validation;
import org.joda.time.format.ISOPeriodFormat;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The checked-in Flex Template metadata is the one generated from {@link TidemarkOptions}, and its
 * regexes accept every default and reject bad values.
 */
@RunWith(JUnit4.class)
public class FlexTemplateMetadataTest {
  private static final Path HOME = Paths.get(System.getProperty("tidemark.home", ".."));
  private static final ObjectMapper MAPPER = new ObjectMapper();

  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  private static final Map<String, String> PROFILE = FlexTemplateMetadata.profileOptions(HOME);
  private static final List<Parameter> PARAMETERS =
      FlexTemplateMetadata.parameters(TidemarkOptions.class, PROFILE);
  private static final Map<String, Parameter> BY_NAME = FlexTemplateMetadata.byName(PARAMETERS);

  private static boolean matches(String name, String value) {
    Parameter parameter = BY_NAME.get(name);
    if (parameter == null) {
      throw new AssertionError("no template parameter " + name);
    }
    return Pattern.compile(parameter.regex).matcher(value).matches();
  }

  private static void accepts(String name, String... values) {
    for (String value : values) {
      assertTrue(name + " should accept '" + value + "'", matches(name, value));
    }
  }

  private static void rejects(String name, String... values) {
    for (String value : values) {
      assertFalse(name + " should reject '" + value + "'", matches(name, value));
    }
  }

  @Test
  public void checkedInMetadataIsTheGeneratedOne() throws IOException {
    Path file = HOME.resolve(FlexTemplateMetadata.METADATA_FILE);
    String generated = FlexTemplateMetadata.generate(HOME);
    if (Boolean.getBoolean(FlexTemplateMetadata.REGENERATE_PROPERTY)) {
      Files.createDirectories(file.getParent());
      Files.write(file, generated.getBytes(StandardCharsets.UTF_8));
    }
    String checkedIn =
        Files.exists(file) ? new String(Files.readAllBytes(file), StandardCharsets.UTF_8) : "";
    assertEquals(
        FlexTemplateMetadata.METADATA_FILE
            + " differs from the options (or the '"
            + FlexTemplateLauncher.PROFILE
            + "' profile); regenerate it from the project root with: "
            + FlexTemplateMetadata.REGENERATE_COMMAND,
        generated,
        checkedIn);
  }

  @Test
  public void checkModeFailsOnAStaleFileAndWriteModeFixesIt() throws IOException {
    Path home = folder.newFolder("home").toPath();
    Path file = home.resolve(FlexTemplateMetadata.METADATA_FILE);
    Files.createDirectories(file.getParent());
    Files.write(file, "{}\n".getBytes(StandardCharsets.UTF_8));
    assertEquals(1, FlexTemplateMetadata.run(home, List.of("--check")));
    assertEquals(0, FlexTemplateMetadata.run(home, List.of()));
    assertEquals(0, FlexTemplateMetadata.run(home, List.of("--check")));
  }

  @Test
  public void generationIsStablePrettyJsonWithATrailingNewline() throws IOException {
    String json = FlexTemplateMetadata.generate(HOME);
    assertEquals(json, FlexTemplateMetadata.generate(HOME));
    assertThat(json, endsWith("}\n"));
    assertThat(json.contains("\r"), is(false));
    JsonNode root = MAPPER.readTree(json);
    assertEquals(FlexTemplateMetadata.TEMPLATE_NAME, root.get("name").asText());
    assertThat(root.get("description").asText().isBlank(), is(false));
    assertEquals(PARAMETERS.size(), root.get("parameters").size());
  }

  @Test
  public void everyParameterHasALabelHelpTextAndACompilingRegex() throws IOException {
    JsonNode parameters = MAPPER.readTree(FlexTemplateMetadata.generate(HOME)).get("parameters");
    List<String> names = new ArrayList<>();
    for (JsonNode p : parameters) {
      String name = p.get("name").asText();
      names.add(name);
      assertThat(name, p.get("label").asText().isBlank(), is(false));
      assertThat(name, p.get("helpText").asText().isBlank(), is(false));
      assertThat(name, p.get("isOptional").isBoolean(), is(true));
      assertThat(name, p.get("regexes").size() >= 1, is(true));
      for (JsonNode regex : p.get("regexes")) {
        Pattern.compile(regex.asText());
        assertThat(name, regex.asText().startsWith("^") && regex.asText().endsWith("$"), is(true));
      }
      if ("ENUM".equals(p.get("paramType").asText())) {
        assertThat(name, p.get("enumOptions").size() >= 1, is(true));
      }
    }
    assertEquals("parameter names are unique", names.size(), names.stream().distinct().count());
  }

  @Test
  public void parametersAreTidemarkOptionsAndNotBeamOnes() {
    List<String> names = FlexTemplateMetadata.names(PARAMETERS);
    assertThat(
        names,
        hasItems(
            "source",
            "maxOutOfOrderness",
            "dedupHorizon",
            "windowSize",
            "earlyFiringDelay",
            "accumulationMode",
            "modelUri",
            "decisionThreshold",
            "kafkaBootstrapServers",
            "kafkaIdleTimeout",
            "bigQueryDataset",
            "pubsubSubscription"));
    for (String beam :
        List.of("runner", "project", "region", "tempLocation", "jobName", "streaming")) {
      assertThat(names.contains(beam), is(false));
    }
    // Meaningless on Dataflow: not offered.
    for (String option :
        List.of(
            "input", "output", "sink", "kafkaPasswordFile", "kafkaMaxRecords", "kafkaSinkMode")) {
      assertThat(option, names.contains(option), is(false));
    }
    // Every parameter is a real option: Beam parses it for TidemarkOptions.
    PipelineOptionsFactory.register(TidemarkOptions.class);
    for (Parameter p : PARAMETERS) {
      String sample = p.profileValue != null ? p.profileValue : p.interfaceDefault;
      if (sample != null) {
        PipelineOptionsFactory.fromArgs("--" + p.name + "=" + sample).as(TidemarkOptions.class);
      }
    }
  }

  /** The checked-in metadata breaks none of Google's rules that tie one field to another. */
  @Test
  public void theMetadataFollowsGooglesFieldRules() throws IOException {
    JsonNode metadata = MAPPER.readTree(HOME.resolve(FlexTemplateMetadata.METADATA_FILE).toFile());
    assertThat(FlexTemplateMetadata.googleRuleViolations(metadata), is(List.of()));
    assertThat(metadata.has("defaultStreamingMode"), is(false));
  }

  /** Each rule, broken once in a copy of the real metadata, is reported. */
  @Test
  public void eachBrokenRuleIsReported() throws IOException {
    String json = FlexTemplateMetadata.generate(HOME);
    Map<String, java.util.function.Consumer<com.fasterxml.jackson.databind.node.ObjectNode>>
        breaks = new java.util.LinkedHashMap<>();
    breaks.put(
        "defaultStreamingMode is valid only when",
        root -> root.put("defaultStreamingMode", "EXACTLY_ONCE"));
    breaks.put(
        "groupName is ignored when parentName is set",
        root -> parameter(root, "kafkaInputTopic").put("groupName", "Kafka"));
    breaks.put(
        "parentTriggerValues is considered only with parentName",
        root -> parameter(root, "currency").putArray("parentTriggerValues").add("kafka"));
    breaks.put(
        "names no other parameter",
        root -> parameter(root, "kafkaInputTopic").put("parentName", "sources"));
    breaks.put(
        "is not a value of its parent",
        root ->
            ((com.fasterxml.jackson.databind.node.ArrayNode)
                    parameter(root, "kafkaInputTopic").get("parentTriggerValues"))
                .add("replay"));
    breaks.put(
        "enumOptions go with paramType ENUM",
        root -> parameter(root, "accumulationMode").put("paramType", "TEXT"));
    breaks.put(
        "not a gs:// path",
        root ->
            parameter(root, "modelUri")
                .put("paramType", "GCS_READ_FILE")
                .put("defaultValue", "default"));
    breaks.put("helpText is required", root -> parameter(root, "windowSize").remove("helpText"));
    for (Map.Entry<
            String, java.util.function.Consumer<com.fasterxml.jackson.databind.node.ObjectNode>>
        b : breaks.entrySet()) {
      com.fasterxml.jackson.databind.node.ObjectNode root =
          (com.fasterxml.jackson.databind.node.ObjectNode) MAPPER.readTree(json);
      b.getValue().accept(root);
      List<String> violations = FlexTemplateMetadata.googleRuleViolations(root);
      assertThat(b.getKey() + ": " + violations, violations.size(), is(1));
      assertThat(violations.get(0), org.hamcrest.Matchers.containsString(b.getKey()));
    }
  }

  private static com.fasterxml.jackson.databind.node.ObjectNode parameter(
      com.fasterxml.jackson.databind.node.ObjectNode root, String name) {
    for (JsonNode p : root.get("parameters")) {
      if (p.get("name").asText().equals(name)) {
        return (com.fasterxml.jackson.databind.node.ObjectNode) p;
      }
    }
    throw new AssertionError("no parameter " + name);
  }

  @Test
  public void everyDefaultAndProfileValueMatchesItsRegex() {
    int checked = 0;
    for (Parameter p : PARAMETERS) {
      if (p.defaultValue() != null && !p.defaultValue().contains("${")) {
        assertTrue(
            p.name + " default '" + p.defaultValue() + "' fails " + p.regex,
            Pattern.compile(p.regex).matcher(p.defaultValue()).matches());
        checked++;
      }
      String specDefault = FlexTemplateMetadata.specDefault(getter(p.name).orElseThrow());
      if (specDefault != null) {
        String value = specDefault.substring(0, specDefault.indexOf(" (the bundled"));
        assertTrue(
            p.name + " spec default '" + value + "' fails " + p.regex,
            Pattern.compile(p.regex).matcher(value).matches());
        checked++;
      }
      if (p.profileValue != null && !p.profileValue.contains("${")) {
        assertTrue(
            p.name + " profile value '" + p.profileValue + "' fails " + p.regex,
            Pattern.compile(p.regex).matcher(p.profileValue).matches());
      }
    }
    assertThat(checked > 20, is(true));
  }

  @Test
  public void badValuesAreRejectedAndGoodOnesAccepted() {
    accepts("windowSize", "PT5M", "PT1H30M", "PT0.5S", "PT0S", "P1D", "P1DT12H", "P2W");
    rejects("windowSize", "PT5X", "P", "PT", "-PT5M", "PT-5M", "5m", "pt5m", "P1Y", "P1M", "");
    accepts("earlyFiringDelay", "PT10S", "none", "NONE");
    rejects("earlyFiringDelay", "never", "PT5X");
    accepts("maxEventBytes", "65536", "0");
    rejects("maxEventBytes", "-1", "1.5", "64k", "");
    accepts("scoringBatchSize", "256");
    rejects("scoringBatchSize", "-1");
    accepts("scoringMaxBatchWait", "PT0.005S", "PT1S", "none", "NONE");
    rejects("scoringMaxBatchWait", "5ms", "never", "");
    accepts("decisionThreshold", "0.5", "1", "0.75");
    rejects("decisionThreshold", "-0.5", "abc", ".", "");
    accepts("source", "pubsub", "kafka");
    rejects("source", "replay", "backfill", "unknown", "Kafka", "", "kafka|pubsub");
    accepts("modelUri", "default", "gs://bucket/models/m.ubj", "classpath:/models/m.ubj");
    rejects("modelUri", "/tmp/m.ubj", "models/m.ubj", "");
    accepts("accumulationMode", "ACCUMULATING", "DISCARDING");
    rejects("accumulationMode", "accumulating");
    accepts("bigQueryValidate", "true", "false");
    rejects("bigQueryValidate", "yes", "1", "");
    accepts("kafkaBootstrapServers", "broker-1:9092", "a:9092,b.example.com:9093");
    rejects("kafkaBootstrapServers", "embedded", "broker", "a:9092,", "");
    accepts("kafkaInputTopic", "tidemark.events", "a_b-c");
    rejects("kafkaInputTopic", "has space", "a/b", "");
    accepts("kafkaSecurityProtocol", "SASL_SSL");
    rejects("kafkaSecurityProtocol", "TLS");
    accepts("modelEngine", "XGBoost", "OnnxRuntime");
    rejects("modelEngine", "TensorFlow");
    accepts("currency", "GBP", "EUR");
    rejects("currency", "gbp", "POUND");
    accepts("eventTypes", "payments.transaction.v1", "a.v1,b.v2");
    rejects("eventTypes", "a,,b", "a, b", "");
    accepts("pubsubIdAttribute", "tidemark-id", "ce", "cex-id", "id");
    rejects("pubsubIdAttribute", "ce-id", "CE-ID", "Ce-source", "");
    accepts(
        "kafkaPasswordSecret",
        "projects/my-project/secrets/kafka-password/versions/latest",
        "projects/123456789/secrets/kafka_password/versions/7");
    rejects(
        "kafkaPasswordSecret",
        "projects/p/secrets/s",
        "projects/p/secrets/s/versions/0",
        "projects/p/secrets/s/versions/newest",
        "s3cr3t",
        "");
  }

  /**
   * What the regex accepts, the pipeline's parser ({@code Durations.parse}: Joda's ISO period, then
   * a standard duration) accepts too. The regex is stricter on purpose: no sign, no empty {@code
   * P}, upper case, digits on both sides of a decimal point.
   */
  @Test
  public void theDurationRegexAcceptsOnlyWhatTheParserAccepts() {
    Pattern duration = Pattern.compile(FlexTemplateMetadata.DURATION_REGEX);
    List<String> canonical =
        List.of(
            "PT5M",
            "PT30S",
            "PT1H",
            "PT1H30M",
            "PT0.5S",
            "PT0,5S",
            "PT0S",
            "P1D",
            "P1W",
            "P1W2D",
            "P1DT1S",
            "PT1H1M1S",
            "PT24H",
            "P0D");
    List<String> stricter = List.of("P", "pt5m", "PT1.S", "PT.5S", "PT-5M");
    List<String> invalid =
        List.of("PT", "P1Y", "P1M", "PT5X", "-PT5M", "P1DT", "PT1M1H", "5M", "T5M", "PT 5M", "");
    for (String value : canonical) {
      assertTrue(value, duration.matcher(value).matches());
      ISOPeriodFormat.standard().parsePeriod(value).toStandardDuration();
    }
    for (String value : stricter) {
      assertFalse(value, duration.matcher(value).matches());
    }
    for (String value : invalid) {
      assertFalse(value, duration.matcher(value).matches());
      try {
        ISOPeriodFormat.standard().parsePeriod(value).toStandardDuration();
        throw new AssertionError("the parser accepts '" + value + "'; move it to 'stricter'");
      } catch (IllegalArgumentException | ArithmeticException | UnsupportedOperationException e) {
        // expected: invalid for both
      }
    }
  }

  @Test
  public void durationOptionsAreRecognisedFromTheirDefaultOrDescription() {
    for (String name :
        List.of(
            "maxOutOfOrderness",
            "dedupHorizon",
            "windowSize",
            "windowPeriod",
            "lateFiringDelay",
            "allowedLateness",
            "kafkaIdleTimeout")) {
      assertEquals(name, FlexTemplateMetadata.DURATION_REGEX, BY_NAME.get(name).regex);
    }
  }

  @Test
  public void everySpecificRegexNamesAnExistingOption() {
    List<String> missing = new ArrayList<>(FlexTemplateMetadata.SPECIFIC_REGEXES.keySet());
    missing.removeAll(BY_NAME.keySet());
    assertThat(
        "FlexTemplateMetadata.SPECIFIC_REGEXES names options that no longer exist: " + missing,
        missing,
        empty());
  }

  @Test
  public void enumsListTheirConstants() {
    Parameter mode = BY_NAME.get("accumulationMode");
    assertEquals("ENUM", mode.paramType);
    assertEquals(List.of("ACCUMULATING", "DISCARDING"), mode.enumValues);
    // The sources a streaming job can read, not the replay and backfill files.
    assertEquals(List.of("kafka", "pubsub"), BY_NAME.get("source").enumValues);
  }

  /**
   * As Google's own streaming templates write it: streaming, required parameters, the job's
   * defaults, source-specific parameters shown for their source.
   */
  @Test
  public void theTemplateIsStreamingWithTheJobsDefaults() throws IOException {
    JsonNode root = MAPPER.readTree(FlexTemplateMetadata.generate(HOME));
    assertThat(root.get("streaming").asBoolean(), is(true));
    assertThat(root.get("supportsExactlyOnce").asBoolean(), is(true));
    Map<String, JsonNode> byName = new java.util.TreeMap<>();
    root.get("parameters").forEach(p -> byName.put(p.get("name").asText(), p));
    assertThat(byName.get("bigQueryDataset").get("isOptional").asBoolean(), is(false));
    assertThat(byName.get("source").get("defaultValue").asText(), is("pubsub"));
    assertThat(byName.get("pubsubSubscription").get("parentName").asText(), is("source"));
    assertThat(
        byName.get("pubsubSubscription").get("parentTriggerValues").get(0).asText(), is("pubsub"));
    assertThat(
        byName.get("kafkaInputTopic").get("parentTriggerValues").get(0).asText(), is("kafka"));
    assertThat(byName.get("kafkaInputTopic").get("paramType").asText(), is("KAFKA_READ_TOPIC"));
    assertThat(byName.get("modelUri").get("paramType").asText(), is("TEXT"));
    assertThat(byName.get("kafkaClientProperties").get("paramType").asText(), is("GCS_READ_FILE"));
    assertThat(byName.get("modelEngine").has("defaultValue"), is(false));
    // What the spec decides has no defaultValue, which a launch would pass and so override the
    // launch's specUri; the help text gives the bundled payments spec's value.
    assertThat(byName.get("specUri").get("defaultValue").asText(), is("payments"));
    assertThat(byName.get("windowSize").has("defaultValue"), is(false));
    assertThat(
        byName.get("windowSize").get("helpText").asText(),
        containsString("Default: PT5M (the bundled payments spec)."));

    // Each default is what the job gets without the parameter: the template's launcher
    // options (the profile, then the options' defaults), read back through Beam.
    PipelineOptionsFactory.register(TidemarkOptions.class);
    List<String> args = new ArrayList<>();
    FlexTemplateMetadata.profileOptions(HOME).entrySet().stream()
        .filter(option -> !option.getKey().equals("runner"))
        .forEach(option -> args.add("--" + option.getKey() + "=" + option.getValue()));
    TidemarkOptions job =
        PipelineOptionsFactory.fromArgs(args.toArray(new String[0]))
            .withoutStrictParsing()
            .as(TidemarkOptions.class);
    int checked = 0;
    for (Map.Entry<String, JsonNode> e : byName.entrySet()) {
      Object value = readOption(job, e.getKey());
      if (e.getValue().has("defaultValue")) {
        assertThat(
            e.getKey(), String.valueOf(value), is(e.getValue().get("defaultValue").asText()));
        checked++;
      } else if (!hasComputedDefault(e.getKey())) {
        assertThat(e.getKey() + " has a value but no defaultValue", value, is((Object) null));
      }
    }
    assertThat(checked > 10, is(true));
  }

  /** The getter of option {@code name}, named as the metadata names it; empty if none. */
  private static java.util.Optional<java.lang.reflect.Method> getter(String name) {
    return java.util.Arrays.stream(TidemarkOptions.class.getMethods())
        .filter(m -> m.getParameterCount() == 0)
        .filter(m -> m.getName().startsWith("get") || m.getName().startsWith("is"))
        .filter(m -> FlexTemplateMetadata.propertyName(m).equals(name))
        .findFirst();
  }

  /** The value of option {@code name} through its getter. */
  private static Object readOption(TidemarkOptions options, String name) {
    java.lang.reflect.Method m =
        getter(name).orElseThrow(() -> new IllegalArgumentException("no option " + name));
    try {
      Object value = m.invoke(options);
      return value instanceof Enum ? ((Enum<?>) value).name() : value;
    } catch (ReflectiveOperationException ex) {
      throw new IllegalStateException(ex);
    }
  }

  @Test
  public void everyOptionLeftOutNamesAnOption() {
    List<String> all =
        FlexTemplateMetadata.names(
            FlexTemplateMetadata.parameters(TidemarkOptions.class, Map.of()));
    for (String name : FlexTemplateMetadata.NOT_ON_DATAFLOW.keySet()) {
      assertThat(name + " is both left out and offered", all.contains(name), is(false));
      assertThat("NOT_ON_DATAFLOW names no option: " + name, getter(name).isPresent(), is(true));
    }
  }

  /** A mixin such as the Pub/Sub and BigQuery ones being added, to pin the rules down. */
  public interface FakeCloudOptions extends PipelineOptions {
    @Description("Subscription to read.")
    @Validation.Required
    String getInputSubscription();

    void setInputSubscription(String subscription);

    @Description("Table to write.")
    @Validation.Required
    String getDecisionsTable();

    void setDecisionsTable(String table);

    @Description("Topic for dead letters.")
    String getPubsubDeadLetterTopic();

    void setPubsubDeadLetterTopic(String topic);

    @Description("A flag.")
    @Default.Boolean(false)
    boolean isQuiet();

    void setQuiet(boolean quiet);

    /** Not an option: no setter. */
    String getComputed();
  }

  /** The composed options of the fake mixin. */
  public interface FakeOptions extends FakeCloudOptions, TidemarkOptions {}

  @Test
  public void requiredMeansValidationRequiredAndNotSetByTheProfile() {
    Map<String, Parameter> fake =
        FlexTemplateMetadata.byName(
            FlexTemplateMetadata.parameters(FakeOptions.class, Map.of("decisionsTable", "p:d.t")));
    assertThat(fake.get("inputSubscription").optional, is(false));
    assertThat(fake.get("decisionsTable").optional, is(true));
    assertThat(fake.get("pubsubDeadLetterTopic").optional, is(true));
    assertThat(fake.get("source").optional, is(true));
    assertThat(fake.containsKey("computed"), is(false));
    assertEquals(Boolean.TRUE, fake.get("quiet").type == boolean.class);
    assertEquals("Fake cloud", fake.get("inputSubscription").group);
    assertThat(fake.get("decisionsTable").helpText, endsWith("Default (dataflow profile): p:d.t."));
    // Mixins in declared order (the fake one first), options sorted by name within each.
    List<String> names =
        FlexTemplateMetadata.names(FlexTemplateMetadata.parameters(FakeOptions.class, Map.of()));
    assertEquals(
        List.of("decisionsTable", "inputSubscription", "pubsubDeadLetterTopic", "quiet"),
        names.subList(0, 4));
    assertEquals("accumulationMode", names.get(names.indexOf("allowedLateness") - 1));
  }

  @Test
  public void namingConventionsGiveCloudResourceRegexes() {
    Map<String, Parameter> fake =
        FlexTemplateMetadata.byName(FlexTemplateMetadata.parameters(FakeOptions.class, Map.of()));
    Parameter subscription = fake.get("inputSubscription");
    assertEquals("PUBSUB_SUBSCRIPTION", subscription.paramType);
    assertTrue(Pattern.matches(subscription.regex, "projects/p/subscriptions/tidemark-events"));
    assertFalse(Pattern.matches(subscription.regex, "tidemark-events"));
    assertFalse(Pattern.matches(subscription.regex, "projects/p/topics/t"));
    Parameter table = fake.get("decisionsTable");
    assertEquals("BIGQUERY_TABLE", table.paramType);
    for (String ok : List.of("project:dataset.table", "project.dataset.table", "dataset.table")) {
      assertTrue(ok, Pattern.matches(table.regex, ok));
    }
    for (String bad : List.of("table", "project:dataset", "a.b.c.d", "")) {
      assertFalse(bad, Pattern.matches(table.regex, bad));
    }
    Parameter topic = fake.get("pubsubDeadLetterTopic");
    assertEquals("PUBSUB_TOPIC", topic.paramType);
    assertTrue(Pattern.matches(topic.regex, "projects/p/topics/dead-letters"));
    assertEquals("BOOLEAN", fake.get("quiet").paramType);
    assertThat(fake.get("quiet").label, not(""));
  }

  @Test
  public void labelsReadAsWords() {
    assertEquals("Kafka sink group ID", FlexTemplateMetadata.label("kafkaSinkGroupId"));
    assertEquals("Model URI", FlexTemplateMetadata.label("modelUri"));
    assertEquals("Max out of orderness", FlexTemplateMetadata.label("maxOutOfOrderness"));
    assertEquals("BigQuery dataset", FlexTemplateMetadata.label("bigQueryDataset"));
    assertEquals("Pub/Sub subscription", FlexTemplateMetadata.label("pubsubSubscription"));
  }

  /** An option whose default the job computes (Beam's {@code @Default.InstanceFactory}). */
  private static boolean hasComputedDefault(String name) {
    String getter = "get" + Character.toUpperCase(name.charAt(0)) + name.substring(1);
    for (java.lang.reflect.Method method : TidemarkOptions.class.getMethods()) {
      if (method.getName().equals(getter)
          && method.isAnnotationPresent(
              org.apache.beam.sdk.options.Default.InstanceFactory.class)) {
        return true;
      }
    }
    return false;
  }
}
