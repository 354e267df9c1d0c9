package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.testkit.OutputFiles;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Every edition after the first says what it changes, end to end from a replay file: an account
 * whose late events turn {@code allow} into {@code review}, and one whose late event only moves the
 * score.
 */
@RunWith(JUnit4.class)
public class CorrectionsIT {
  @ClassRule public static final TemporaryFolder FOLDER = new TemporaryFolder();

  private static final Instant BASE = Instant.parse("2026-01-01T00:00:00Z");
  private static final String FLIPS = "acct-flips";
  private static final String REFINES = "acct-refines";

  private static Path replay;

  private static Instant at(long seconds) {
    return BASE.plus(Duration.standardSeconds(seconds));
  }

  /**
   * Both accounts pay once, on time; the watermark passes the window's end (the on-time panes fire,
   * both {@code allow}); then, late but within the allowed lateness, one small payment for one
   * account and a burst of large payments at many merchants in many countries for the other, one
   * arrival per second.
   */
  @BeforeClass
  public static void writeReplay() throws IOException {
    TestReplays lines =
        new TestReplays()
            .event("flips-0", FLIPS, "12.00", "m-0", at(60))
            .event("refines-0", REFINES, "20.00", "m-0", at(60))
            .advanceWatermarkTo(at(300))
            .event("refines-1", REFINES, "25.00", "m-1", at(180));
    String[] countries = {"GB", "FR", "DE", "NL", "ES", "IT"};
    for (int i = 1; i <= 12; i++) {
      // One arrival each, so each fires its own late pane and the panes reach the corrections
      // step in version order (see AnnotateCorrections for what happens otherwise).
      lines.advanceProcessingTime(Duration.standardSeconds(1));
      lines.event(
          "flips-" + i, FLIPS, (400 + 37 * i) + ".00", "m-" + i, countries[i % 6], at(60 + 15 * i));
    }
    replay =
        lines
            .advanceWatermarkToInfinity()
            .writeTo(FOLDER.getRoot().toPath().resolve("late.ndjson"));
  }

  private static Summary run(Path output, String... extra) {
    String[] args = new String[extra.length + 4];
    args[0] = "--windowSize=PT5M";
    args[1] = "--windowPeriod=PT5M";
    args[2] = "--earlyFiringDelay=none";
    // The replay clock follows the event times: the late burst is not from a clock in the future.
    args[3] = "--maxFutureSkew=PT1H";
    System.arraycopy(extra, 0, args, 4, extra.length);
    return Launch.run(TestReplays.options(replay, output, args));
  }

  /** One account's decisions, in version order. */
  private static List<JsonNode> editions(Path output, String account) throws IOException {
    return OutputFiles.records(output.resolve("decisions")).stream()
        .filter(d -> d.get("accountId").asText().equals(account))
        .sorted(Comparator.comparingLong(d -> d.get("version").asLong()))
        .collect(Collectors.toList());
  }

  @Test
  public void aLateBurstReversesAllowToReviewAndALatePaymentRefines() throws IOException {
    Path output = FOLDER.newFolder("accumulating").toPath();
    Summary summary = run(output);
    assertThat(summary.identityViolations().toString(), summary.identityHolds(), is(true));

    List<JsonNode> refines = editions(output, REFINES);
    assertThat(refines.toString(), refines.size(), is(2));
    JsonNode first = refines.get(0);
    JsonNode second = refines.get(1);
    assertThat(first.get("correction").asText(), is("none"));
    assertThat(first.has("supersedes"), is(false));
    assertThat(first.get("decision").asText(), is("allow"));
    assertThat(second.get("correction").asText(), is("refined"));
    assertThat(second.get("decision").asText(), is("allow"));
    assertThat(second.get("score").asDouble(), not(first.get("score").asDouble()));
    assertSupersedes(second, first);

    List<JsonNode> flips = editions(output, FLIPS);
    assertThat(flips.get(0).get("correction").asText(), is("none"));
    assertThat(flips.get(0).get("decision").asText(), is("allow"));
    assertThat(flips.get(flips.size() - 1).get("decision").asText(), is("review"));
    long reversals = 0;
    long refinements = 1; // the other account's
    for (int i = 1; i < flips.size(); i++) {
      JsonNode edition = flips.get(i);
      JsonNode previous = flips.get(i - 1);
      assertSupersedes(edition, previous);
      boolean sameVerdict =
          edition.get("decision").asText().equals(previous.get("decision").asText());
      assertThat(edition.get("correction").asText(), is(sameVerdict ? "refined" : "reversed"));
      if (sameVerdict) {
        refinements++;
      } else {
        reversals++;
      }
    }
    assertThat(reversals, is(1L));
    assertThat(summary.reversed, is(reversals));
    assertThat(summary.refined, is(refinements));
  }

  /** Discarding panes are deltas: no edition says what it corrects. */
  @Test
  public void discardingPanesCarryNoCorrections() throws IOException {
    Path output = FOLDER.newFolder("discarding").toPath();
    Summary summary = run(output, "--accumulationMode=DISCARDING");
    List<JsonNode> decisions = OutputFiles.records(output.resolve("decisions"));
    assertThat(decisions.isEmpty(), is(false));
    for (JsonNode decision : decisions) {
      assertThat(decision.toString(), decision.has("correction"), is(false));
      assertThat(decision.toString(), decision.has("supersedes"), is(false));
    }
    assertThat(summary.refined + summary.reversed, is(0L));
  }

  private static void assertSupersedes(JsonNode edition, JsonNode previous) {
    JsonNode supersedes = edition.get("supersedes");
    assertThat(
        edition.toString(),
        supersedes.get("version").asLong(),
        is(previous.get("version").asLong()));
    assertThat(supersedes.get("score").asDouble(), is(previous.get("score").asDouble()));
    assertThat(supersedes.get("decision").asText(), is(previous.get("decision").asText()));
  }
}
