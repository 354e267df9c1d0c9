package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.pipelines.io.Sources;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.testkit.OutputFiles;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.testkit.generate.ReplayClock;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The pipeline end to end on the DirectRunner from replay files: every output is written, the
 * accounting identity holds, and a replay is deterministic.
 */
@RunWith(JUnit4.class)
public class TidemarkPipelineIT {
  @ClassRule public static final TemporaryFolder FOLDER = new TemporaryFolder();

  private static Path replay;

  @BeforeClass
  public static void generateReplay() throws IOException {
    Path generated = FOLDER.getRoot().toPath().resolve("generated.ndjson");
    new EventGenerator(
            GeneratorConfig.builder()
                .seed(7)
                .numAccounts(25)
                .numEvents(300)
                .eventsPerSecond(0.05) // 100 minutes of event time: room for too-late events
                .build())
        .writeTo(generated);
    // One replay clock step per ten lines: these tests count records, not early panes.
    replay = FOLDER.getRoot().toPath().resolve("small.ndjson");
    ReplayClock.coarsen(generated, replay, 10);
  }

  @Test
  public void replayIsDeterministicAndAccountsForEveryRecord() throws IOException {
    Path first = FOLDER.getRoot().toPath().resolve("first");
    Path second = FOLDER.getRoot().toPath().resolve("second");
    Summary one = Launch.run(TestReplays.options(replay, first));
    Summary two = Launch.run(TestReplays.options(replay, second));

    assertThat(one.identityViolations().toString(), one.identityHolds(), is(true));
    assertThat(one.droppedByRunner, is(0L));
    assertThat(one.duplicates, greaterThan(0L));
    assertThat(one.deadLetters, greaterThan(0L));
    assertThat(one.decisions, greaterThan(0L));
    for (String name : Outputs.NAMES) {
      assertThat(
          name, TestReplays.stableLines(first, name), is(TestReplays.stableLines(second, name)));
    }
    assertThat(two.toJsonWithoutWallClock(), is(one.toJsonWithoutWallClock()));
    assertThat((long) TestReplays.stableLines(first, "decisions").size(), is(one.decisions));
    assertThat((long) TestReplays.stableLines(first, "dead-letters").size(), is(one.deadLetters));
    assertThat((long) TestReplays.stableLines(first, "duplicates").size(), is(one.duplicates));
  }

  @Test
  public void summaryJsonHasExactlyTheContractKeys() throws IOException {
    Path out = FOLDER.getRoot().toPath().resolve("keys");
    Launch.run(TestReplays.options(replay, out, "--earlyFiringDelay=none"));
    JsonNode summary = Json.MAPPER.readTree(out.resolve("summary.json").toFile());
    List<String> keys = new ArrayList<>();
    for (Iterator<String> it = summary.fieldNames(); it.hasNext(); ) {
      keys.add(it.next());
    }
    assertThat(
        keys,
        contains(
            "spec",
            "outputs",
            "read",
            "valid",
            "deadLetters",
            "deadLettersByReason",
            "unique",
            "duplicates",
            "conflicts",
            "windowed",
            "tooLate",
            "partiallyLate",
            "droppedByRunner",
            "decisionsByTiming",
            "decisions",
            "corrections",
            "models",
            "signals",
            "drift",
            "identityHolds",
            "wallTimeMillis"));
    List<String> spec = new ArrayList<>();
    summary.get("spec").fieldNames().forEachRemaining(spec::add);
    assertThat(spec, contains("name", "key", "labels"));
    assertThat(summary.get("spec").get("key").asText(), is("accountId"));
    List<String> corrections = new ArrayList<>();
    summary.get("corrections").fieldNames().forEachRemaining(corrections::add);
    assertThat(corrections, contains("refined", "reversed"));
    List<String> signals = new ArrayList<>();
    summary.get("signals").fieldNames().forEachRemaining(signals::add);
    assertThat(
        signals,
        contains(
            "liveIdentities",
            "openWindows",
            "lagMillis",
            "watermarkLagMillis",
            "correctionsPerDecision",
            "perMinuteOfProcessing"));
    // Late panes revise the windows they fire for, so there are corrections to count.
    assertThat(
        summary.get("corrections").get("refined").asLong()
            + summary.get("corrections").get("reversed").asLong(),
        greaterThan(0L));
    List<String> timings = new ArrayList<>();
    summary.get("decisionsByTiming").fieldNames().forEachRemaining(timings::add);
    assertThat(timings, contains("EARLY", "ON_TIME", "LATE"));
    assertThat(summary.get("decisionsByTiming").get("EARLY").asLong(), is(0L));
    assertThat(summary.get("identityHolds").asBoolean(), is(true));
  }

  @Test
  public void aSpecNamesTheDirectoriesOfItsFileOutputsAndTheSummarySaysWhere() throws IOException {
    Path spec =
        TestSpecs.paymentsWith(
            FOLDER.getRoot().toPath().resolve("named-files.yaml"),
            "  local:         {sink: files}",
            "  local:\n    sink: files\n    names: {decisions: scored, deadLetters: rejected,"
                + " duplicates: repeated, tooLate: late, drift: alarms}");
    Path out = FOLDER.getRoot().toPath().resolve("named");
    Summary summary =
        Launch.run(
            TestReplays.options(replay, out, "--earlyFiringDelay=none", "--specUri=" + spec));

    assertThat(OutputFiles.records(out.resolve("scored")).size(), is((int) summary.decisions));
    assertThat(OutputFiles.records(out.resolve("rejected")).size(), is((int) summary.deadLetters));
    assertThat(OutputFiles.records(out.resolve("repeated")).size(), is((int) summary.duplicates));
    assertThat(Files.isDirectory(out.resolve("late")), is(true));
    assertThat(Files.isDirectory(out.resolve("alarms")), is(true));
    for (String name : Outputs.NAMES) {
      assertThat(name, Files.exists(out.resolve(name)), is(false));
    }
    assertThat(Files.exists(out.resolve("drift")), is(false));
    JsonNode outputs = Json.MAPPER.readTree(out.resolve("summary.json").toFile()).get("outputs");
    assertThat(
        outputs.toString(),
        is(
            "{\"sink\":\"files\",\"decisions\":\"scored\",\"deadLetters\":\"rejected\","
                + "\"duplicates\":\"repeated\",\"tooLate\":\"late\",\"drift\":\"alarms\"}"));
  }

  /** A valid replay line: one event of {@code amount} for {@code account} at {@code time}. */
  static String event(String id, String account, String amount, String time) {
    return "{\"specversion\":\"1.0\",\"id\":\""
        + id
        + "\",\"source\":\"/tidemark/test\",\"type\":\"payments.transaction.v1\",\"time\":\""
        + time
        + "\",\"data\":{\"accountId\":\""
        + account
        + "\",\"amount\":"
        + amount
        + ",\"currency\":\"GBP\"}}";
  }

  @Test
  public void deadLettersAreCutToTheConfiguredLimitWhereverTheyComeFrom() throws IOException {
    // Not JSON, 20,000 bytes: under --maxEventBytes, so its dead letter would carry all of it.
    String longLine = "not json " + "x".repeat(20_000 - "not json ".length());
    Path input = FOLDER.getRoot().toPath().resolve("long-line.ndjson");
    Files.write(
        input,
        List.of(event("ok-1", "acct-1", "1.00", "2026-01-01T00:00:00Z"), longLine),
        StandardCharsets.UTF_8);
    Path out = FOLDER.getRoot().toPath().resolve("bounded");
    Summary summary =
        Launch.run(TestReplays.options(input, out, "--maxDeadLetterPayloadBytes=1024"));

    assertThat(summary.identityViolations().toString(), summary.identityHolds(), is(true));
    List<JsonNode> deadLetters = OutputFiles.records(out.resolve("dead-letters"));
    assertThat(deadLetters.size(), is(1));
    JsonNode letter = deadLetters.get(0);
    assertThat(letter.get("reason").asText(), is("invalid_json"));
    assertThat(letter.get("payload").asText(), is(longLine.substring(0, 1024)));
    assertThat(letter.get("payloadBytes").asLong(), is(20_000L));
    assertThat(
        letter.get("payloadSha256").asText(),
        is(
            java.util.HexFormat.of()
                .formatHex(
                    dev.tidemark.transforms.util.Sha256.newDigest()
                        .digest(longLine.getBytes(StandardCharsets.UTF_8)))));
    assertThat(letter.get("truncated").asBoolean(), is(true));
  }

  @Test
  public void theDeadLetterLimitIsCheckedAndTheMessageNamesTheOption() {
    for (String bad : List.of("255", "131073")) {
      IllegalArgumentException e =
          org.junit.Assert.assertThrows(
              IllegalArgumentException.class,
              () ->
                  Launch.build(
                      TestReplays.options(
                          replay,
                          FOLDER.getRoot().toPath().resolve("limit-" + bad),
                          "--maxDeadLetterPayloadBytes=" + bad)));
      assertThat(e.getMessage(), containsString("--maxDeadLetterPayloadBytes"));
    }
  }

  @Test
  public void eventsTooFarAheadOfTheirIngestionClockAreDeadLetteredPerMaxFutureSkew()
      throws IOException {
    // The replay clock starts at the first event's time (00:00) and no directive moves it: the
    // second event is 30 minutes ahead of its ingestion time.
    Path input = FOLDER.getRoot().toPath().resolve("skew.ndjson");
    Files.write(
        input,
        List.of(
            event("now-1", "acct-1", "1.00", "2026-01-01T00:00:00Z"),
            event("ahead-1", "acct-1", "2.00", "2026-01-01T00:30:00Z")),
        StandardCharsets.UTF_8);
    Path strict = FOLDER.getRoot().toPath().resolve("skew-default");
    Summary byDefault = Launch.run(TestReplays.options(input, strict));
    assertThat(byDefault.identityHolds(), is(true));
    assertThat(byDefault.deadLettersByReason, is(java.util.Map.of("time_in_future", 1L)));
    assertThat(
        OutputFiles.records(strict.resolve("dead-letters")).get(0).get("message").asText(),
        containsString("--maxFutureSkew"));

    Path lenient = FOLDER.getRoot().toPath().resolve("skew-hour");
    Summary withAnHour = Launch.run(TestReplays.options(input, lenient, "--maxFutureSkew=PT1H"));
    assertThat(withAnHour.deadLetters, is(0L));
    assertThat(withAnHour.valid, is(2L));
  }

  @Test
  public void rejectsReplayOnOtherRunnersWithAFix() {
    IllegalArgumentException e =
        org.junit.Assert.assertThrows(
            IllegalArgumentException.class,
            () ->
                Sources.read(
                    org.apache.beam.sdk.Pipeline.create(),
                    TestReplays.options(
                        replay,
                        FOLDER.getRoot().toPath(),
                        "--runner=org.apache.beam.sdk.testing.CrashingRunner")));
    assertThat(e.getMessage(), containsString("use --runner=DirectRunner"));
  }
}
