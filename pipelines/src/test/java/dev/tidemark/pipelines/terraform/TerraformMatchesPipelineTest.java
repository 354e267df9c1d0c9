package dev.tidemark.pipelines.terraform;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.pipelines.io.bigquery.BigQueryTables;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Terraform and the pipeline agree: each table Terraform creates has the pipeline's name (from the
 * generated {@code schemas/tables.json}), schema (the generated file, byte for byte) and primary
 * key, and every parameter the Flex Template job passes is a parameter of the template's metadata
 * (so a pipeline option renamed in code fails here, not at launch).
 */
@RunWith(JUnit4.class)
public class TerraformMatchesPipelineTest {
  private static final TerraformConfig CONFIG =
      TerraformConfig.load(TerraformConfig.projectDirectory());

  /** The plan of the README's walk: each table is one instance of a resource with for_each. */
  private static final TerraformPlan PLAN = new TerraformPlan(CONFIG, TerraformPlanTest.defaults());

  private static final String TABLES = "google_bigquery_table.tidemark";

  @Test
  public void everyTableHasThePipelinesSchemaAndPrimaryKey() throws IOException {
    JsonNode names =
        Json.MAPPER.readTree(
            CONFIG
                .directory()
                .resolve("schemas")
                .resolve(BigQueryTables.TABLE_NAMES_FILE)
                .toFile());
    for (BigQueryTables.Table<?> table : BigQueryTables.ALL) {
      assertThat(names.path(table.role()).asText(), is(table.name()));
      Map<String, Object> instance = PLAN.instance(TABLES + "[\"" + table.role() + "\"]");
      assertThat(instance.get("table_id"), is(table.name()));
      assertThat(table.name(), instance.get("schema"), is(table.schemaJson()));
      assertThat(
          table.name(),
          instance.get("table_constraints"),
          is(
              List.of(
                  Map.of("primary_key", List.of(Map.of("columns", List.of(table.primaryKey())))))));
      assertThat(table.name(), instance.get("clustering"), is(List.of(table.primaryKey())));
    }
  }

  @Test
  public void noOtherTableIsCreated() {
    Set<String> tables = new TreeSet<>();
    for (TerraformConfig.Block block : CONFIG.resources()) {
      if (block.labels().get(0).equals("google_bigquery_table")) {
        tables.add(block.labels().get(1));
      }
    }
    assertThat(tables, is(Set.of("tidemark")));
    Set<String> instances = new TreeSet<>();
    for (String address : PLAN.addresses()) {
      if (address.startsWith(TABLES + "[")) {
        instances.add(address);
      }
    }
    Set<String> expected = new TreeSet<>();
    BigQueryTables.ALL.forEach(t -> expected.add(TABLES + "[\"" + t.role() + "\"]"));
    assertThat(instances, is(expected));
  }

  private static final Pattern MAP_KEY = Pattern.compile("(?m)^\\s*([A-Za-z][A-Za-z0-9]*)\\s*=");

  @Test
  public void theJobsParametersAreTemplateParameters() throws IOException {
    JsonNode metadata =
        Json.MAPPER.readTree(
            CONFIG
                .directory()
                .getParent()
                .resolve("pipelines/flex-template/metadata.json")
                .toFile());
    Set<String> parameters = new TreeSet<>();
    metadata.get("parameters").forEach(p -> parameters.add(p.get("name").asText()));

    List<String> passed = new ArrayList<>();
    String jobParameters =
        CONFIG
            .resource("google_dataflow_flex_template_job", "tidemark")
            .attribute("parameters")
            .orElseThrow();
    collectKeys(jobParameters, passed);
    for (TerraformConfig.Block locals : CONFIG.blocks()) {
      if (locals.type().equals("locals")) {
        for (String local : List.of("source_parameters", "kafka_login", "job_parameters")) {
          locals.attribute(local).ifPresent(text -> collectKeys(text, passed));
        }
      }
    }
    assertThat(passed, hasItem("bigQueryDataset"));
    assertThat(passed, hasItem("pubsubSubscription"));
    assertThat(passed, hasItem("pubsubLabelsSubscription"));
    assertThat(passed, hasItem("kafkaPasswordSecret"));
    assertThat(passed, hasItem("kafkaUsernameSecret"));
    assertThat(passed, hasItem("kafkaOauthLoginCallbackHandler"));
    for (String name : passed) {
      assertThat(name + " is not a template parameter", parameters.contains(name), is(true));
    }
  }

  private static void collectKeys(String expression, List<String> keys) {
    Matcher m = MAP_KEY.matcher(expression);
    while (m.find()) {
      keys.add(m.group(1));
    }
  }
}
