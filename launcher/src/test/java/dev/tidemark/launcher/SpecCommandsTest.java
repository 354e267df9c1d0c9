package dev.tidemark.launcher;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.anyOf;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.notNullValue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.model.ModelMetadata;
import dev.tidemark.pipelines.launch.ExitCodes;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.testkit.OutputFiles;
import dev.tidemark.tools.train.SpecTrainingFeatures;
import dev.tidemark.tools.train.TrainingRow;
import dev.tidemark.transforms.util.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * {@code generate}, {@code train}, {@code schemas} and {@code run} with {@code --spec}, as a user
 * types them.
 */
@RunWith(JUnit4.class)
public class SpecCommandsTest {
  private static final Path HOME =
      Paths.get(System.getProperty("tidemark.home", "..")).toAbsolutePath().normalize();

  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  private String spec(String name) {
    return "--spec=" + HOME.resolve("specs/" + name + ".yaml");
  }

  @Test
  public void generateForTheLoginsSpecWritesTheBundledSample() throws IOException {
    Path out = folder.getRoot().toPath().resolve("logins.ndjson");
    assertThat(
        Tidemark.execute(
            "generate",
            spec("logins"),
            "--output=" + out,
            "--labels=" + out.resolveSibling("logins-labels.ndjson"),
            "--no-inlineLabels",
            "--events=2000",
            "--accounts=200",
            "--eventsPerSecond=0.3",
            "--takeoverBurstsPerThousand=3"),
        is(0));
    assertThat(Files.mismatch(out, HOME.resolve("samples/logins-replay.ndjson")), is(-1L));
    assertThat(
        Files.mismatch(
            out.resolveSibling("logins-labels.ndjson"),
            HOME.resolve("samples/logins-labels.ndjson")),
        is(-1L));
  }

  @Test
  public void generateForThePaymentsSpecIsTheDefaultStream() throws IOException {
    Path plain = folder.getRoot().toPath().resolve("plain.ndjson");
    Path withSpec = folder.getRoot().toPath().resolve("spec.ndjson");
    assertThat(Tidemark.execute("generate", "--output=" + plain, "--events=300"), is(0));
    assertThat(
        Tidemark.execute("generate", spec("payments"), "--output=" + withSpec, "--events=300"),
        is(0));
    assertThat(Files.mismatch(plain, withSpec), is(-1L));
    // A bundled spec is also named by its name, as run's --spec names it.
    Path byName = folder.getRoot().toPath().resolve("by-name.ndjson");
    assertThat(
        Tidemark.execute("generate", "--spec=payments", "--output=" + byName, "--events=300"),
        is(0));
    assertThat(Files.mismatch(plain, byName), is(-1L));
  }

  @Test
  public void aSpecWithoutAGeneratorOrThatCannotBeReadIsAUsageError() throws IOException {
    Path sensors = folder.getRoot().toPath().resolve("sensors.yaml");
    Files.writeString(
        sensors,
        Files.readString(HOME.resolve("specs/logins.yaml"))
            .replace("name: logins", "name: sensors"));
    Path out = folder.getRoot().toPath().resolve("x.ndjson");
    String err = stderr(() -> Tidemark.execute("generate", "--spec=" + sensors, "--output=" + out));
    assertThat(err, containsString("for the bundled specs [payments, logins]"));
    assertThat(
        Tidemark.execute("generate", "--spec=" + sensors, "--output=" + out),
        is(ExitCodes.USAGE_ERROR));
    assertThat(
        Tidemark.execute("generate", "--spec=no/such.yaml", "--output=" + out),
        is(ExitCodes.USAGE_ERROR));
    assertThat(Tidemark.execute("train", "--spec=no/such.yaml"), is(ExitCodes.USAGE_ERROR));
    assertThat(Files.exists(out), is(false));
  }

  @Test
  public void trainFromDecisionsTakesBothDecisionsAndLabelsAndNamesWhatItLacks()
      throws IOException {
    Path labels = folder.newFile("labels.ndjson").toPath();
    String err = stderr(() -> Tidemark.execute("train", "--decisions=" + labels.getParent()));
    assertThat(err, containsString("both --decisions and --labels"));
    assertThat(
        Tidemark.execute("train", "--labels=" + labels, "--input=" + labels),
        is(ExitCodes.USAGE_ERROR));
    Path nowhere = folder.getRoot().toPath().resolve("no-decisions");
    err = stderr(() -> Tidemark.execute("train", "--decisions=" + nowhere, "--labels=" + labels));
    assertThat(err, containsString("no decisions at " + nowhere));
  }

  @Test
  public void trainForTheLoginsSpecWritesModelsTheSpecAccepts() throws IOException {
    Path dir = folder.getRoot().toPath().resolve("model");
    // The bundled sample's labels are a stream apart; train --input reads them in data.label.
    Path labelled = folder.getRoot().toPath().resolve("labelled-logins.ndjson");
    assertThat(
        Tidemark.execute(
            "generate",
            spec("logins"),
            "--output=" + labelled,
            "--events=2000",
            "--accounts=200",
            "--eventsPerSecond=0.3",
            "--takeoverBurstsPerThousand=3"),
        is(0));
    assertThat(
        Tidemark.execute("train", spec("logins"), "--input=" + labelled, "--output=" + dir), is(0));
    PipelineSpec logins = SpecLoader.load(HOME.resolve("specs/logins.yaml"));
    for (String model :
        new String[] {"tidemark-logins-xgb-v1.ubj", "tidemark-logins-logreg-v1.onnx"}) {
      ModelMetadata metadata =
          ModelMetadata.parse(
              Files.readAllBytes(ModelMetadata.sidecarOf(dir.resolve(model))), model);
      assertThat(metadata.featureNames(), equalTo(logins.featureNames()));
    }
    assertThat(
        Files.readString(dir.resolve("tidemark-logins-v1.md")),
        containsString("Retrain: `./tidemark train --spec="));
  }

  @Test
  public void schemasWritesTheSpecsColumnsAndTheTableNamesOfItsDataflowProfile()
      throws IOException {
    Path renamed = folder.getRoot().toPath().resolve("logins.yaml");
    Files.writeString(
        renamed,
        Files.readString(HOME.resolve("specs/logins.yaml"))
            .replace(
                "dataflow:      {sink: bigquery}",
                "dataflow:\n    sink: bigquery\n    names: {decisions: login_decisions,"
                    + " deadLetters: login_dead_letters, duplicates: login_duplicates,"
                    + " tooLate: login_too_late}"));
    Path out = folder.getRoot().toPath().resolve("schemas");
    assertThat(Tidemark.execute("schemas", "--spec=" + renamed, "--output=" + out), is(0));

    JsonNode tables = Json.MAPPER.readTree(out.resolve("tables.json").toFile());
    assertThat(tables.get("decisions").asText(), is("login_decisions"));
    assertThat(tables.get("dead_letters").asText(), is("login_dead_letters"));
    assertThat(tables.get("duplicates").asText(), is("login_duplicates"));
    assertThat(tables.get("too_late").asText(), is("login_too_late"));
    // Schema files keep the names Terraform's resources read, whatever the tables are called.
    List<String> columns = new ArrayList<>();
    Json.MAPPER
        .readTree(out.resolve("decisions.json").toFile())
        .forEach(c -> columns.add(c.get("name").asText()));
    assertThat(columns.contains("user_id"), is(true));
    assertThat(columns.contains("distinct_ips"), is(true));
    assertThat(columns.contains("account_id"), is(false));
    for (String role : List.of("dead_letters", "duplicates", "too_late")) {
      assertThat(role, Files.isRegularFile(out.resolve(role + ".json")), is(true));
    }
    // The model loop's tables: the spec leaves their names at BigQuery's defaults.
    for (String role :
        List.of(
            "evaluations",
            "unmatched_labels",
            "label_duplicates",
            "label_dead_letters",
            "drift_alarms")) {
      assertThat(role, Files.isRegularFile(out.resolve(role + ".json")), is(true));
      assertThat(role, tables.get(role).asText(), is(role));
    }
    // The unmatched labels' key column is the spec's key too.
    List<String> labelColumns = new ArrayList<>();
    Json.MAPPER
        .readTree(out.resolve("unmatched_labels.json").toFile())
        .forEach(c -> labelColumns.add(c.get("name").asText()));
    assertThat(labelColumns.contains("user_id"), is(true));
  }

  @Test
  public void runForTheLoginsSpecScoresUsersWithTheirOwnFeaturesAndModel() throws IOException {
    // A fifth of the bundled sample's events (the bundled sample itself runs on Flink in
    // SpecFlinkRunIT), over two hours of event time so that some arrive too late.
    Path input = folder.getRoot().toPath().resolve("logins.ndjson");
    assertThat(
        Tidemark.execute(
            "generate",
            spec("logins"),
            "--events=400",
            "--eventsPerSecond=0.05",
            "--malformedFraction=0.04",
            "--tooLateFraction=0.03",
            "--output=" + input),
        is(0));
    Path out = folder.getRoot().toPath().resolve("run");
    assertThat(
        Tidemark.execute("run", spec("logins"), "--input=" + input, "--output=" + out), is(0));
    PipelineSpec logins = SpecLoader.load(HOME.resolve("specs/logins.yaml"));

    // The generator planted 16 malformed records, 12 duplicates and 12 too-late events.
    JsonNode summary = Json.MAPPER.readTree(out.resolve("summary.json").toFile());
    assertThat(summary.get("read").asLong(), is(428L));
    assertThat(summary.get("deadLetters").asLong(), is(16L));
    assertThat(summary.get("duplicates").asLong(), is(12L));
    assertThat(summary.get("tooLate").asLong(), is(12L));
    assertThat(summary.get("deadLettersByReason").has("invalid_user_id"), is(true));
    assertThat(summary.get("spec").get("name").asText(), is("logins"));
    assertThat(summary.get("spec").get("key").asText(), is("userId"));
    assertThat(summary.get("spec").get("labels").get("atOrAbove").asText(), is("challenge"));
    JsonNode byLabel = summary.get("models").get("tidemark-logins-xgb:1").get("byLabel");
    assertThat(
        byLabel.toString(),
        byLabel.get("challenge").asLong() + byLabel.get("allow").asLong(),
        is(summary.get("decisions").asLong()));

    // (userId, window) pairs a too-late event missed: their final panes lack it.
    Set<String> missed = new HashSet<>();
    for (JsonNode record : OutputFiles.records(out.resolve("too-late"))) {
      assertThat(record.toString(), record.get("userId").isTextual(), is(true));
      for (JsonNode window : record.get("missedWindows")) {
        missed.add(
            record.get("userId").asText()
                + " "
                + Instant.parse(window.get("start").asText())
                + " "
                + Instant.parse(window.get("end").asText()));
      }
    }
    Map<String, JsonNode> latest = new HashMap<>();
    for (JsonNode decision : OutputFiles.records(out.resolve("decisions"))) {
      assertThat(decision.toString(), decision.has("accountId"), is(false));
      List<String> names = new ArrayList<>();
      decision.get("features").fieldNames().forEachRemaining(names::add);
      assertThat(names, equalTo(logins.featureNames()));
      assertThat(decision.get("decision").asText(), anyOf(is("challenge"), is("allow")));
      assertThat(decision.get("model").get("name").asText(), is("tidemark-logins-xgb"));
      String key =
          decision.get("userId").asText()
              + " "
              + Instant.parse(decision.get("windowStart").asText())
              + " "
              + Instant.parse(decision.get("windowEnd").asText());
      JsonNode before = latest.get(key);
      if (before == null || before.get("version").asLong() < decision.get("version").asLong()) {
        latest.put(key, decision);
      }
    }
    // The trainer computes the same features in the JVM, without Beam: each window's final
    // edition holds what it holds, unless a too-late event missed the window.
    int compared = 0;
    Set<String> trained = new HashSet<>();
    for (TrainingRow row : SpecTrainingFeatures.compute(logins, input).rows()) {
      String key = row.key() + " " + row.windowStart() + " " + row.windowEnd();
      trained.add(key);
      if (missed.contains(key)) {
        continue;
      }
      JsonNode decision = latest.get(key);
      assertThat(key, decision, notNullValue());
      for (int i = 0; i < row.features().length; i++) {
        String name = logins.featureNames().get(i);
        assertThat(
            key + " " + name,
            decision.get("features").get(name).asDouble(),
            is((double) row.features()[i]));
      }
      compared++;
    }
    assertThat(compared > 1000, is(true));
    for (String key : latest.keySet()) {
      assertThat(
          key + " has no trainer row", trained.contains(key) || missed.contains(key), is(true));
    }
  }

  private static String stderr(Runnable command) {
    PrintStream original = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      command.run();
    } finally {
      System.setErr(original);
    }
    return captured.toString(StandardCharsets.UTF_8);
  }
}
