package dev.tidemark.pipelines.io.bigquery;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import com.google.api.services.bigquery.model.TableFieldSchema;
import com.google.api.services.bigquery.model.TableRow;
import dev.tidemark.spec.FeatureSchema;
import dev.tidemark.spec.FieldParser;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecFeaturesFn;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.PaymentFeatures;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The table definitions and the files generated from them: the Terraform schema files and the
 * schema reference cannot drift from the code, and the decision columns mirror the decision JSON.
 */
@RunWith(JUnit4.class)
public class BigQueryTablesTest {
  /** The project directory (tests run in pipelines/). */
  static Path home() {
    Path here = Paths.get("").toAbsolutePath();
    return Files.exists(here.resolve("terraform")) ? here : here.getParent();
  }

  /**
   * The schema files and the schema page are generated from {@link BigQueryTables}: this test fails
   * when they drift, and rewrites them with {@code -Dtidemark.regenerate=true} ({@code mvn -B -q -o
   * -pl pipelines test -Dtest=BigQueryTablesTest -Dtidemark.regenerate=true}).
   */
  @Test
  public void generatedFilesAreUpToDate() throws IOException {
    boolean regenerate = Boolean.getBoolean("tidemark.regenerate");
    for (Map.Entry<Path, String> file : BigQueryTables.generatedFiles().entrySet()) {
      Path path = home().resolve(file.getKey());
      if (regenerate) {
        Files.createDirectories(path.getParent());
        Files.writeString(path, file.getValue(), StandardCharsets.UTF_8);
      }
      String actual =
          Files.exists(path) ? Files.readString(path, StandardCharsets.UTF_8) : "(missing)";
      assertThat(
          file.getKey()
              + " differs from BigQueryTables; regenerate it: mvn -B -q -o -pl pipelines test"
              + " -Dtest=BigQueryTablesTest -Dtidemark.regenerate=true",
          actual,
          is(file.getValue()));
    }
  }

  /** Every leaf of the decision JSON, in snake_case, as BigQuery flattens it. */
  private static List<String> flattenedJsonFields(Decision decision) throws IOException {
    List<String> names = new ArrayList<>();
    flatten(Json.MAPPER.readTree(decision.toJson()), "", names);
    return names;
  }

  /** Nested objects become prefixed names ({@code shadow.model.name}: shadow_model_name). */
  private static void flatten(
      com.fasterxml.jackson.databind.JsonNode node, String prefix, List<String> names) {
    for (Iterator<Map.Entry<String, com.fasterxml.jackson.databind.JsonNode>> it = node.fields();
        it.hasNext(); ) {
      var field = it.next();
      if (field.getValue().isObject()) {
        String inner =
            "clocks".equals(field.getKey()) || "features".equals(field.getKey())
                ? prefix
                : prefix + field.getKey() + "_";
        flatten(field.getValue(), inner, names);
      } else {
        names.add(snake(prefix + field.getKey()));
      }
    }
  }

  private static String snake(String camel) {
    return camel.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toLowerCase(java.util.Locale.ROOT);
  }

  @Test
  public void decisionColumnsMirrorTheDecisionJson() throws IOException {
    Instant start = Instant.parse("2026-01-01T00:00:00Z");
    Decision decision =
        Decision.unscored(
                "acct-1",
                start,
                start.plus(Duration.standardMinutes(5)),
                "EARLY",
                0,
                true,
                false,
                PaymentFeatures.of(2, 1234, 1000, 1, 1, start, start),
                start)
            .withScore(0.25, "allow", new Decision.ModelRef("m", "1", "OnnxRuntime"), start)
            .withCorrection(new Decision.Supersedes(3, 0.75, "review"))
            .withShadow(
                new Decision.Shadow(0.625, "review", new Decision.ModelRef("s", "2", "XGBoost")));
    List<String> fromJson = flattenedJsonFields(decision);
    // pane.index is the version; pane.isFirst/isLast become pane_is_first/pane_is_last.
    fromJson.remove("pane_index");
    List<String> columns = new ArrayList<>();
    BigQueryTables.DECISIONS.columns().forEach(c -> columns.add(c.name()));
    assertThat(new java.util.TreeSet<>(columns), is(new java.util.TreeSet<>(fromJson)));

    TableRow row = BigQueryTables.DECISIONS.row(decision);
    assertThat(row.get("decision_id"), is(decision.decisionId()));
    assertThat(row.get("amount_sum"), is("12.34"));
    assertThat(row.get("window_end"), is("2026-01-01T00:05:00.000Z"));
    assertThat(row.get("model_engine"), is("OnnxRuntime"));
    assertThat(row.get("correction"), is("reversed"));
    assertThat(row.get("supersedes_version"), is(3L));
    assertThat(row.get("supersedes_score"), is(0.75));
    assertThat(row.get("supersedes_decision"), is("review"));
    assertThat(row.get("shadow_score"), is(0.625));
    assertThat(row.get("shadow_decision"), is("review"));
    assertThat(row.get("shadow_model_name"), is("s"));
    assertThat(row.get("shadow_model_version"), is("2"));
    assertThat(row.get("shadow_model_engine"), is("XGBoost"));
    for (TableFieldSchema field : BigQueryTables.DECISIONS.schema().getFields()) {
      if ("REQUIRED".equals(field.getMode())) {
        assertThat(field.getName() + " is required", row.containsKey(field.getName()), is(true));
      }
    }
  }

  /** Sensor readings: a spec whose features have every value type. */
  private static final String SENSORS =
      String.join(
          "\n",
          "spec: 1",
          "name: sensors",
          "events:",
          "  types: [sensor.reading.v1]",
          "  key: sensorId",
          "  fields:",
          "    sensorId: {type: string}",
          "    reading:  {type: decimal, scale: 1, integerDigits: 6}",
          "    ok:       {type: boolean}",
          "    checkedAt: {type: timestamp, optional: true}",
          "windows: {size: PT10M, period: PT1M}",
          "features:",
          "  - {name: readings,   aggregate: count}",
          "  - {name: readingSum, aggregate: sum,  of: reading}",
          "  - {name: readingMean, aggregate: mean, of: reading}",
          "  - {name: lastOk,     aggregate: last, of: ok}",
          "  - {name: lastCheck,  aggregate: max,  of: checkedAt}",
          "  - {name: faults,     aggregate: count, where: {ok: false}}",
          "model: {uri: default}",
          "");

  @Test
  public void anotherSpecsDecisionsHaveItsKeyAndFeatureColumns() throws Exception {
    PipelineSpec spec = SpecLoader.parse(SENSORS, "sensors.yaml");
    FieldParser parser = FieldParser.of(spec);
    SpecFeaturesFn combine = SpecFeaturesFn.of(spec);
    SpecFeaturesFn.Accumulator acc = combine.createAccumulator();
    Instant start = Instant.parse("2026-01-01T00:00:00Z");
    List<String> readings =
        List.of(
            "{\"sensorId\":\"s-1\",\"reading\":12.5,\"ok\":true}",
            "{\"sensorId\":\"s-1\",\"reading\":3.0,\"ok\":false}");
    for (int i = 0; i < readings.size(); i++) {
      long at = start.getMillis() + 1000L * i;
      combine.addInput(acc, parser.parse(Json.MAPPER.readTree(readings.get(i)), at, at));
    }
    Decision decision =
        Decision.unscored(
            "s-1",
            start,
            start.plus(Duration.standardMinutes(10)),
            "ON_TIME",
            0,
            true,
            true,
            new Features(FeatureSchema.of(spec), combine.extractOutput(acc)),
            start);
    BigQueryTables.Table<Decision> table = BigQueryTables.decisions(spec);
    List<String> fromJson = flattenedJsonFields(decision);
    fromJson.remove("pane_index");
    List<String> columns = new ArrayList<>();
    table.columns().forEach(c -> columns.add(c.name()));
    // Every JSON leaf is a column (an unscored decision has no score, model or shadow leaves).
    assertThat(columns.containsAll(fromJson), is(true));
    Map<String, String> types = new java.util.TreeMap<>();
    Map<String, String> modes = new java.util.TreeMap<>();
    for (TableFieldSchema field : table.schema().getFields()) {
      types.put(field.getName(), field.getType());
      modes.put(field.getName(), field.getMode());
    }
    assertThat(types.get("sensor_id"), is("STRING"));
    assertThat(types.get("reading_sum"), is("NUMERIC"));
    assertThat(types.get("reading_mean"), is("FLOAT"));
    assertThat(types.get("last_ok"), is("BOOLEAN"));
    assertThat(types.get("last_check"), is("TIMESTAMP"));
    assertThat(modes.get("last_check"), is("NULLABLE"));
    assertThat(modes.get("reading_mean"), is("REQUIRED"));
    assertThat(types.get("reading_sum_saturated"), is("BOOLEAN"));

    TableRow row = table.row(decision);
    assertThat(row.get("sensor_id"), is("s-1"));
    assertThat(row.get("readings"), is(2L));
    assertThat(row.get("reading_sum"), is("15.5"));
    assertThat(row.get("reading_mean"), is(7.75));
    assertThat(row.get("last_ok"), is(false));
    assertThat(row.containsKey("last_check"), is(false));
    assertThat(row.get("faults"), is(1L));
    assertThat(BigQueryTables.tooLate(spec).columns().get(3).name(), is("sensor_id"));
  }

  @Test
  public void theFourClocksAreTimestamps() {
    for (String clock :
        List.of("event_time", "ingestion_time", "processing_time", "decision_time")) {
      String type =
          BigQueryTables.DECISIONS.schema().getFields().stream()
              .filter(f -> f.getName().equals(clock))
              .findFirst()
              .orElseThrow()
              .getType();
      assertThat(clock, type, is("TIMESTAMP"));
    }
  }

  private static String dataset(String value) {
    dev.tidemark.pipelines.TidemarkOptions options =
        org.apache.beam.sdk.options.PipelineOptionsFactory.as(
            dev.tidemark.pipelines.TidemarkOptions.class);
    options.setBigQueryDataset(value);
    return BigQuerySinks.dataset(options);
  }

  @Test
  public void datasetIsProjectColonDatasetOrADatasetOfTheJobsProject() {
    assertThat(dataset("p:d"), is("p:d"));
    assertThat(dataset("my-project.tidemark_1"), is("my-project:tidemark_1"));
    assertThat(dataset("tidemark"), is("tidemark"));
    for (String bad : List.of("", "p:d.x", "p:d-x", "a b:c")) {
      IllegalArgumentException e =
          org.junit.Assert.assertThrows(IllegalArgumentException.class, () -> dataset(bad));
      assertThat(e.getMessage().contains("--bigQueryDataset=PROJECT:DATASET"), is(true));
    }
  }
}
