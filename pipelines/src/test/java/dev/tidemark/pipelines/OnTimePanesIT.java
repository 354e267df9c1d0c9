package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsInAnyOrder;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.testkit.OutputFiles;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The on-time pane fires when the watermark reaches the window's end, through the whole pipeline
 * and its too-late gate, exactly as Beam fires it without one.
 */
@RunWith(JUnit4.class)
public class OnTimePanesIT {
  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  private static final Instant BASE = Instant.parse("2026-01-01T00:00:00Z");
  private static final Duration TEAM_WINDOW = Duration.standardMinutes(20);
  private static final Duration ALLOWED_LATENESS = Duration.standardHours(1);

  private static Instant at(Duration offset) {
    return BASE.plus(offset);
  }

  private static Duration minutes(long minutes) {
    return Duration.standardMinutes(minutes);
  }

  /**
   * Beam's {@code LeaderBoardTest.testTeamScoresDroppablyLate}, with a team as an account and a
   * score as an amount: {@code CalculateTeamScores}' windows, early and late firing delays and
   * lateness. The watermark stops one millisecond before the window's end, more events arrive, it
   * moves to exactly the end, then past the end plus the allowed lateness, and two droppably late
   * events follow. Beam fires one on-time pane per team at the move to the end: first, not last
   * (the window is still open for late data), red 3 + 4 = 7, blue 12 + 3 + 3 = 18; the late events
   * change nothing.
   */
  @Test
  public void leaderBoardsDroppablyLateCaseGivesBeamsPanes() throws IOException {
    Instant windowEnd = at(TEAM_WINDOW);
    Path replay =
        new TestReplays()
            .event("blue-one-1", "team-blue", "12", "blue-one", at(Duration.ZERO))
            .event("red-one-1", "team-red", "3", "red-one", at(Duration.ZERO))
            .advanceWatermarkTo(windowEnd.minus(Duration.millis(1)))
            .event("red-one-2", "team-red", "4", "red-one", at(minutes(2)))
            .event("blue-two-1", "team-blue", "3", "blue-two", at(Duration.ZERO))
            .event("blue-one-2", "team-blue", "3", "blue-one", at(minutes(3)))
            .advanceWatermarkTo(windowEnd)
            .advanceWatermarkTo(at(ALLOWED_LATENESS.plus(TEAM_WINDOW).plus(minutes(1))))
            .event(
                "blue-two-2",
                "team-blue",
                "3",
                "blue-two",
                at(TEAM_WINDOW.minus(Duration.standardSeconds(5))))
            .event("red-one-3", "team-red", "7", "red-one", at(minutes(4)))
            .advanceWatermarkToInfinity()
            .writeTo(folder.getRoot().toPath().resolve("leader-board.ndjson"));
    Path output = folder.newFolder("out").toPath();

    Summary summary =
        Launch.run(
            TestReplays.options(
                replay,
                output,
                "--windowSize=PT20M",
                "--windowPeriod=PT20M",
                "--earlyFiringDelay=PT5M",
                "--lateFiringDelay=PT10M",
                "--allowedLateness=PT1H"));

    assertThat(summary.identityViolations().toString(), summary.identityHolds(), is(true));
    assertThat(summary.deadLetters, is(0L));
    assertThat(
        panes(output),
        containsInAnyOrder(
            "team-red 2026-01-01T00:00:00.000Z..2026-01-01T00:20:00.000Z ON_TIME index=0"
                + " first=true last=false txnCount=2 amountSum=7",
            "team-blue 2026-01-01T00:00:00.000Z..2026-01-01T00:20:00.000Z ON_TIME index=0"
                + " first=true last=false txnCount=3 amountSum=18"));
    assertThat(summary.tooLate, is(2L));
    assertThat(summary.droppedByRunner, is(0L));
    // Both droppable events are too late, not dead letters from a clock in the future: the
    // replay clock follows the watermark directives (here to 01:21, past both event times).
    List<String> tooLate = new ArrayList<>();
    for (JsonNode record : OutputFiles.records(output.resolve("too-late"))) {
      tooLate.add(record.get("id").asText());
    }
    assertThat(tooLate, containsInAnyOrder("blue-two-2", "red-one-3"));
  }

  /**
   * One event, then only watermark moves: to exactly the end of its window, then past the end plus
   * the allowed lateness. The on-time decision comes at the first move, so it is not the last pane;
   * were it held back to the second, it would be.
   */
  @Test
  public void aSparseStreamGetsItsOnTimeDecisionWhenTheWatermarkReachesTheWindowEnd()
      throws IOException {
    Path replay =
        new TestReplays()
            .event("only", "acct-sparse", "25.50", "m-1", at(minutes(1)))
            .advanceWatermarkTo(at(minutes(5)))
            .advanceWatermarkTo(at(minutes(5).plus(ALLOWED_LATENESS).plus(minutes(1))))
            .advanceWatermarkToInfinity()
            .writeTo(folder.getRoot().toPath().resolve("sparse.ndjson"));
    Path output = folder.newFolder("sparse-out").toPath();

    Summary summary =
        Launch.run(
            TestReplays.options(
                replay,
                output,
                "--windowSize=PT5M",
                "--windowPeriod=PT5M",
                "--allowedLateness=PT1H"));

    assertThat(summary.identityViolations().toString(), summary.identityHolds(), is(true));
    assertThat(
        panes(output),
        containsInAnyOrder(
            "acct-sparse 2026-01-01T00:00:00.000Z..2026-01-01T00:05:00.000Z ON_TIME index=0"
                + " first=true last=false txnCount=1 amountSum=25.5"));
  }

  /** Each decision as its account, window, pane and the features the tests above check. */
  private static List<String> panes(Path output) throws IOException {
    List<String> panes = new ArrayList<>();
    for (JsonNode decision : OutputFiles.records(output.resolve("decisions"))) {
      JsonNode pane = decision.get("pane");
      JsonNode features = decision.get("features");
      panes.add(
          decision.get("accountId").asText()
              + " "
              + decision.get("windowStart").asText()
              + ".."
              + decision.get("windowEnd").asText()
              + " "
              + pane.get("timing").asText()
              + " index="
              + pane.get("index").asLong()
              + " first="
              + pane.get("isFirst").asBoolean()
              + " last="
              + pane.get("isLast").asBoolean()
              + " txnCount="
              + features.get("txnCount").asLong()
              + " amountSum="
              + features.get("amountSum").decimalValue().stripTrailingZeros().toPlainString());
    }
    return panes;
  }
}
