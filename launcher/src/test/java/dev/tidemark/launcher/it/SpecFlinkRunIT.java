package dev.tidemark.launcher.it;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.launcher.Tidemark;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.testkit.OutputFiles;
import dev.tidemark.transforms.util.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The logins spec on the embedded Flink profile, as a user types it: {@code run --profile=flink
 * --spec=specs/logins.yaml} starts a broker in the JVM, feeds it the spec's own sample, runs the
 * FlinkRunner with checkpoints and the transactional sink to the topics the spec names for the
 * profile, and reads them back into files.
 */
@RunWith(JUnit4.class)
public class SpecFlinkRunIT {
  private static final Path HOME =
      Paths.get(System.getProperty("tidemark.home", "..")).toAbsolutePath().normalize();

  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  @Test
  public void theLoginsSpecRunsOnEmbeddedFlinkToItsOwnTopics() throws IOException {
    Path out = folder.getRoot().toPath().resolve("run");
    PrintStream originalOut = System.out;
    PrintStream originalErr = System.err;
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    PrintStream both = new PrintStream(printed, true, StandardCharsets.UTF_8);
    int exit;
    System.setOut(both);
    System.setErr(both);
    try {
      exit =
          Tidemark.execute(
              "run",
              "--profile=flink",
              "--spec=" + HOME.resolve("specs/logins.yaml"),
              "--output=" + out);
    } finally {
      System.setOut(originalOut);
      System.setErr(originalErr);
    }
    String stdout = printed.toString(StandardCharsets.UTF_8);
    originalOut.print(stdout);
    assertThat(exit, is(0));
    assertThat(stdout, containsString("logins-replay.ndjson"));
    for (String topic :
        List.of(
            "logins.decisions", "logins.dead-letters", "logins.duplicates", "logins.too-late")) {
      assertThat(stdout, containsString("from " + topic));
    }

    JsonNode summary = Json.MAPPER.readTree(out.resolve("summary.json").toFile());
    assertThat(summary.toString(), summary.get("identityHolds").asBoolean(), is(true));
    // The sample's 2,000 logins and 60 re-sent copies, every copy recognised.
    assertThat(summary.get("unique").asLong(), is(2000L));
    assertThat(summary.get("duplicates").asLong(), is(60L));
    assertThat(summary.get("deadLettersByReason").has("invalid_user_id"), is(true));
    // The scoring step counts each decision under the spec's label; the summary reads them so.
    assertThat(summary.get("spec").get("key").asText(), is("userId"));
    assertThat(summary.get("outputs").get("decisions").asText(), is("logins.decisions"));
    JsonNode byLabel = summary.get("models").get("tidemark-logins-xgb:1").get("byLabel");
    assertThat(
        byLabel.toString(),
        byLabel.get("challenge").asLong() + byLabel.get("allow").asLong(),
        greaterThan(0L));

    PipelineSpec logins = SpecLoader.load(HOME.resolve("specs/logins.yaml"));
    List<JsonNode> decisions = OutputFiles.records(out.resolve("decisions"));
    assertThat(decisions.isEmpty(), is(false));
    for (JsonNode decision : decisions) {
      assertThat(decision.toString(), decision.get("userId").isTextual(), is(true));
      List<String> names = new ArrayList<>();
      decision.get("features").fieldNames().forEachRemaining(names::add);
      assertThat(names, equalTo(logins.featureNames()));
      String verdict = decision.get("decision").asText();
      assertThat(verdict, verdict.equals("challenge") || verdict.equals("allow"), is(true));
    }
  }
}
