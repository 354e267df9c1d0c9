package dev.tidemark.spec;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;
import static org.junit.Assert.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import org.junit.BeforeClass;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The published JSON Schema accepts every bundled spec, and refuses the broken specs the loader
 * refuses that a schema can see (keys, types, names, enumerations, duration syntax).
 */
@RunWith(JUnit4.class)
public class SpecSchemaTest {
  static final String SCHEMA = "/dev/tidemark/spec/spec-1.schema.json";
  private static final ObjectMapper YAML = new YAMLMapper();
  private static Schema schema;

  @BeforeClass
  public static void loadSchema() throws IOException {
    try (InputStream in = SpecSchemaTest.class.getResourceAsStream(SCHEMA)) {
      JsonNode node = new ObjectMapper().readTree(in);
      schema =
          SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(node);
    }
  }

  static List<Error> validate(String yaml) throws IOException {
    return schema.validate(YAML.readTree(yaml));
  }

  @Test
  public void everyBundledSpecMatchesTheSchema() throws IOException {
    List<Path> specs = BundledSpecs.all();
    assertThat(specs.size() >= 2, is(true));
    for (Path spec : specs) {
      String yaml = java.nio.file.Files.readString(spec);
      assertThat(spec + ": " + validate(yaml), validate(yaml), is(empty()));
      SpecLoader.parse(yaml, spec.toString());
    }
  }

  /** (bundled spec, text to find, replacement): each gives a spec both must refuse. */
  static final String[][] BROKEN = {
    {"payments", "spec: 1", "spec: 2"},
    {"payments", "name: payments", "name: Payments"},
    {"payments", "description: Card", "descripton: Card"},
    {"payments", "  horizon: PT24H", "  horizn: PT24H"},
    {"payments", "  horizon: PT24H", "  horizon: 24h"},
    {"payments", "allowedLateness: PT1H", "allowedLateness: -PT1H"},
    {"payments", "accumulation: accumulating", "accumulation: sometimes"},
    {"payments", "types: [payments.transaction.v1]", "types: []"},
    {"payments", "maxEventBytes: 65536", "maxEventBytes: 10"},
    {"payments", "{type: string, maxLength: 128,", "{type: string, scale: 2,"},
    {"payments", "{type: decimal, scale: 2,", "{type: decimal,"},
    {"payments", "{type: enum, values: [GBP],", "{type: enum,"},
    {"payments", "{type: country, optional: true,", "{type: nation, optional: true,"},
    {"payments", "optional: true, reason: invalid_country", "optional: yes please"},
    {"payments", "reason: invalid_amount}", "reason: invalid_json}"},
    {"payments", "aggregate: count}", "aggregate: median}"},
    {"payments", "aggregate: count}", "aggregate: count, maxDistinct: 5}"},
    {"payments", "aggregate: sum,      of: amount}", "aggregate: sum}"},
    {"payments", "aggregate: sum,      of: amount}", "aggregate: sum, of: amount, type: double}"},
    {"payments", "{name: txnCount,", "{name: txn-count,"},
    {"payments", "threshold: 0.5", "threshold: 2"},
    {"payments", "threshold: 0.5", "threshold: high"},
    {"payments", "labels: {atOrAbove: review, below: allow}", "labels: {above: review}"},
    {"payments", "local:         {sink: files}", "local:         {sink: s3}"},
    {"payments", "local:         {sink: files}", "Local:         {sink: files}"},
    {"payments", "deadLetters: dead_letters,", "deadLetters: dead letters,"},
    {"logins", "where: {success: false}", "where: {}"},
    {"logins", "maxDistinct: 1000}", "maxDistinct: 0}"},
    {"logins", "key: userId", "key: 42"},
    {"logins", "earlyFiring: PT10S", "earlyFiring: never"},
  };

  @Test
  public void theSchemaAndTheLoaderRefuseTheSameBrokenSpecs() throws IOException {
    for (String[] broken : BROKEN) {
      String text = BundledSpecs.text(broken[0]);
      assertThat(broken[1] + " is in " + broken[0], text.contains(broken[1]), is(true));
      String yaml = text.replace(broken[1], broken[2]);
      String what = broken[0] + " with '" + broken[2] + "'";
      assertThat(what + " passes the schema", validate(yaml), is(not(empty())));
      SpecException e = assertThrows(what, SpecException.class, () -> SpecLoader.parse(yaml, what));
      assertThat(e.problems(), is(not(empty())));
    }
  }
}
