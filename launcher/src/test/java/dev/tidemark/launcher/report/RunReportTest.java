package dev.tidemark.launcher.report;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

import dev.tidemark.launcher.CliRun;
import dev.tidemark.pipelines.launch.ExitCodes;
import dev.tidemark.tools.report.ReportSettings;
import dev.tidemark.tools.report.RunReport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The report from hand-written outputs: the page, the identity table, the recorded options and the
 * errors of {@code tidemark report}. RunReportBrowserIT renders a real run's page in Chromium.
 */
@RunWith(JUnit4.class)
public class RunReportTest {
  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  private static final String SUMMARY =
      "{\"read\": 10, \"valid\": 9, \"deadLetters\": 1, \"deadLettersByReason\":"
          + " {\"invalid_json\": 1}, \"unique\": 8, \"duplicates\": 1, \"conflicts\": 0,"
          + " \"windowed\": 7, \"tooLate\": 1, \"partiallyLate\": 0, \"droppedByRunner\": 0,"
          + " \"decisionsByTiming\": {\"EARLY\": 0, \"ON_TIME\": 1, \"LATE\": 1},"
          + " \"decisions\": 2, \"corrections\": {\"refined\": 0, \"reversed\": 1},"
          + " \"identityHolds\": true, \"wallTimeMillis\": 1234}";

  private static String decision(int version, String timing, String correction, double score) {
    return "{\"decisionId\":\"d1\",\"version\":"
        + version
        + ",\"accountId\":\"acct-1\",\"windowStart\":\"2026-01-01T00:00:00.000Z\","
        + "\"windowEnd\":\"2026-01-01T00:05:00.000Z\",\"pane\":{\"timing\":\""
        + timing
        + "\",\"index\":"
        + version
        + ",\"isFirst\":true,\"isLast\":false},\"features\":{},\"clocks\":{"
        + "\"eventTime\":\"2026-01-01T00:04:00.000Z\",\"ingestionTime\":\"2026-01-01T00:04:02.000Z\","
        + "\"processingTime\":\"2026-12-04T10:00:00.000Z\","
        + "\"decisionTime\":\"2026-12-04T10:00:00.100Z\"},\"score\":"
        + score
        + ",\"decision\":\"allow\",\"model\":{\"name\":\"tidemark-xgb\",\"version\":\"1\","
        + "\"engine\":\"XGBoost\"},\"correction\":\""
        + correction
        + "\"}";
  }

  private Path outputs(String summary) throws IOException {
    Path out = folder.newFolder("out").toPath();
    Files.writeString(out.resolve("summary.json"), summary, StandardCharsets.UTF_8);
    for (String name : List.of("decisions", "dead-letters", "duplicates", "too-late")) {
      Files.createDirectories(out.resolve(name));
    }
    Files.write(
        out.resolve("decisions/decisions-00000-of-00001.ndjson"),
        List.of(decision(0, "ON_TIME", "none", 0.2), decision(1, "LATE", "reversed", 0.7)),
        StandardCharsets.UTF_8);
    Files.write(
        out.resolve("too-late/too-late-00000-of-00001.ndjson"),
        List.of(
            "{\"source\":\"/s\",\"id\":\"e9\",\"accountId\":\"acct-1\",\"eventTime\":"
                + "\"2026-01-01T00:01:00.000Z\",\"missedWindows\":[],\"partiallyLate\":false,"
                + "\"ingestionTime\":\"2026-01-01T02:30:00.000Z\",\"watermark\":"
                + "\"2026-01-01T02:29:00.000Z\"}"),
        StandardCharsets.UTF_8);
    Files.createFile(out.resolve("dead-letters/dead-letters-00000-of-00001.ndjson"));
    Files.createFile(out.resolve("duplicates/duplicates-00000-of-00001.ndjson"));
    return out;
  }

  @Test
  public void theReportCommandDrawsEveryChartAndTheIdentity() throws IOException {
    Path out = outputs(SUMMARY);
    new ReportSettings(Duration.ofMinutes(30), 0.6, "ACCUMULATING").writeTo(out);

    CliRun run = CliRun.of("report", "--input=" + out);

    assertThat(run.err, run.exit, is(ExitCodes.DONE));
    String page = Files.readString(out.resolve(RunReport.FILE_NAME), StandardCharsets.UTF_8);
    for (String id : List.of("clocks", "lateness", "panes", "corrections", "scores")) {
      assertThat(page, containsString("id=\"chart-" + id + "\""));
    }
    assertThat(page, not(containsString("chart empty")));
    // The recorded options, not the defaults.
    assertThat(page, containsString("allowed lateness PT30M"));
    assertThat(page, containsString("threshold 0.6"));
    assertThat(page, containsString("tidemark-xgb:1"));
    assertThat(page, containsString("summary.json corrections: 0 refined, 1 reversed"));
    assertThat(
        page,
        containsString(
            "<td class=\"left\" data-key=\"unique\">8</td><td class=\"right\"><span class=\"term\""
                + " data-key=\"windowed\">7</span> + <span class=\"term\" data-key=\"tooLate\">1"
                + "</span> + <span class=\"term\" data-key=\"droppedByRunner\">0</span></td>"
                + "<td class=\"sum\">8</td><td class=\"holds-yes\">yes</td>"));
    // Nothing that a browser would fetch (the SVG namespace is a name, not a fetch).
    String fetchable = page.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assertThat(fetchable, not(containsString("http://")));
    assertThat(fetchable, not(containsString("https://")));
    assertThat(fetchable, not(containsString("src=")));
    assertThat(fetchable, not(containsString("href=")));
    assertThat(fetchable, not(containsString("<script")));
  }

  @Test
  public void theReportReadsTheOutputsWhereSummaryJsonSaysAndTheSpecsLabels() throws IOException {
    Path out = outputs(SUMMARY);
    for (String name : List.of("decisions", "dead-letters", "duplicates", "too-late")) {
      Files.move(out.resolve(name), out.resolve("logins-" + name));
    }
    Files.writeString(
        out.resolve("summary.json"),
        SUMMARY.replace(
            "{\"read\"",
            "{\"spec\": {\"name\": \"logins\", \"key\": \"userId\", \"labels\":"
                + " {\"atOrAbove\": \"challenge\", \"below\": \"allow\"}},"
                + " \"outputs\": {\"sink\": \"files\", \"decisions\": \"logins-decisions\","
                + " \"deadLetters\": \"logins-dead-letters\", \"duplicates\":"
                + " \"logins-duplicates\", \"tooLate\": \"logins-too-late\"}, \"read\""),
        StandardCharsets.UTF_8);

    CliRun run = CliRun.of("report", "--input=" + out);

    assertThat(run.err, run.exit, is(ExitCodes.DONE));
    String page = Files.readString(out.resolve(RunReport.FILE_NAME), StandardCharsets.UTF_8);
    assertThat(page, containsString("tidemark-xgb:1"));
    assertThat(page, containsString("the decision is challenge, below it allow"));
    assertThat(page, not(containsString("chart empty")));
  }

  @Test
  public void aRunWithLabelsShowsTheEvaluationPerModelVersion() throws IOException {
    Path out =
        outputs(
            SUMMARY.replace(
                "\"identityHolds\"",
                "\"labels\": {\"read\": 7, \"deadLetters\": 1, \"duplicates\": 1,"
                    + " \"unmatched\": 1, \"withoutKeyOrTime\": 1, \"byModel\": {\"deciding\":"
                    + " {\"m:1\": {\"labels\": 12, \"positives\": 3, \"flagged\": 4,"
                    + " \"truePositives\": 3, \"precision\": 0.75, \"recall\": 1.0,"
                    + " \"reviewRate\": 0.333333}}, \"shadow\": {\"s:2\": {\"labels\": 12,"
                    + " \"positives\": 3, \"flagged\": 0, \"truePositives\": 0, \"precision\":"
                    + " null, \"recall\": 0.0, \"reviewRate\": 0.0}}}}, \"identityHolds\""));
    RunReport.write(out, ReportSettings.DEFAULTS);
    String page = Files.readString(out.resolve(RunReport.FILE_NAME), StandardCharsets.UTF_8);
    assertThat(page, containsString("Online evaluation per model version"));
    assertThat(page, containsString("labels read 7, dead-lettered 1, repeated 1, unmatched 2"));
    assertThat(
        page,
        containsString(
            "<tr data-model=\"m:1\"><td>deciding</td><td>m:1</td><td>12</td><td>3</td><td>4</td>"
                + "<td>3</td><td>0.750</td><td>1.000</td><td>0.333</td></tr>"));
    assertThat(page, containsString("<td>shadow</td><td>s:2</td>"));
    assertThat(page, containsString("<td>n/a</td>"));
    // A run without labels has no evaluation section.
    Path plain = withoutLabels();
    RunReport.write(plain, ReportSettings.DEFAULTS);
    assertThat(
        Files.readString(plain.resolve(RunReport.FILE_NAME), StandardCharsets.UTF_8),
        not(containsString("Online evaluation")));
  }

  @Test
  public void eachDriftAlarmIsARowMarkedAsAnAlarm() throws IOException {
    Path out =
        outputs(
            SUMMARY.replace(
                "\"identityHolds\"",
                "\"drift\": {\"alarms\": 1, \"firstAlarmTime\": \"2026-01-01T01:00:00.000Z\","
                    + " \"byModel\": {\"deciding\": {\"m:1\": {\"score\": 1}}}},"
                    + " \"identityHolds\""));
    Files.createDirectories(out.resolve("drift"));
    Files.writeString(
        out.resolve("drift").resolve("drift-00000-of-00001.ndjson"),
        "{\"model\":{\"name\":\"m\",\"version\":\"1\",\"role\":\"deciding\"},"
            + "\"kind\":\"score\",\"direction\":\"up\",\"at\":\"2026-01-01T01:00:00.000Z\","
            + "\"statistic\":50.4,\"threshold\":50.0,\"observations\":1320,"
            + "\"referenceMean\":0.0131,\"observedMean\":0.071}\n",
        StandardCharsets.UTF_8);

    RunReport.write(out, ReportSettings.DEFAULTS);

    String page = Files.readString(out.resolve(RunReport.FILE_NAME), StandardCharsets.UTF_8);
    assertThat(page, containsString("1 alarms, first at 2026-01-01T01:00:00.000Z"));
    assertThat(
        page,
        containsString(
            "<tr class=\"drift-alarm\" data-model=\"m:1\" data-kind=\"score\"><td"
                + " class=\"holds-no\">&#9650; alarm</td><td>2026-01-01T01:00:00.000Z</td>"
                + "<td>deciding</td><td>m:1</td><td>score up</td><td>50.40 / 50.00</td>"
                + "<td>1,320</td><td>0.0131</td><td>0.0710</td></tr>"));
    // A run without a drift output says it had no alarm.
    Path plain = withoutLabels();
    RunReport.write(plain, ReportSettings.DEFAULTS);
    String plainPage = Files.readString(plain.resolve(RunReport.FILE_NAME), StandardCharsets.UTF_8);
    assertThat(plainPage, containsString("no drift alarm"));
    assertThat(plainPage, not(containsString("class=\"drift-alarm\"")));
  }

  private Path withoutLabels() throws IOException {
    Path out = folder.newFolder("plain").toPath();
    Files.writeString(out.resolve("summary.json"), SUMMARY, StandardCharsets.UTF_8);
    for (String name : List.of("decisions", "dead-letters", "duplicates", "too-late")) {
      Files.createDirectories(out.resolve(name));
      Files.createFile(out.resolve(name).resolve(name + "-00000-of-00001.ndjson"));
    }
    return out;
  }

  @Test
  public void aBrokenIdentityLineSaysNo() throws IOException {
    Path out = outputs(SUMMARY.replace("\"read\": 10", "\"read\": 11"));
    RunReport.write(out, ReportSettings.DEFAULTS);
    String page = Files.readString(out.resolve(RunReport.FILE_NAME), StandardCharsets.UTF_8);
    assertThat(
        page,
        containsString(
            "<td class=\"left\" data-key=\"read\">11</td><td class=\"right\"><span class=\"term\""
                + " data-key=\"valid\">9</span> + <span class=\"term\" data-key=\"deadLetters\">1"
                + "</span></td><td class=\"sum\">10</td><td class=\"holds-no\">no</td>"));
  }

  @Test
  public void allowedLatenessOnTheCommandLineOverridesTheRecordedOne() throws IOException {
    Path out = outputs(SUMMARY);
    new ReportSettings(Duration.ofMinutes(30), 0.5, "ACCUMULATING").writeTo(out);
    CliRun run = CliRun.of("report", "--input=" + out, "--allowedLateness=PT2H");
    assertThat(run.err, run.exit, is(ExitCodes.DONE));
    assertThat(
        Files.readString(out.resolve(RunReport.FILE_NAME), StandardCharsets.UTF_8),
        containsString("allowed lateness PT2H"));
  }

  @Test
  public void aDirectoryWithoutSummaryIsAUsageError() throws IOException {
    Path empty = folder.newFolder("empty").toPath();
    CliRun run = CliRun.of("report", "--input=" + empty);
    assertThat(run.exit, is(ExitCodes.USAGE_ERROR));
    assertThat(run.err, containsString("no summary.json there"));
    assertThat(Files.exists(empty.resolve(RunReport.FILE_NAME)), is(false));
  }

  @Test
  public void aSummaryWithoutOutputsIsAUsageError() throws IOException {
    Path out = folder.newFolder("summary-only").toPath();
    Files.writeString(out.resolve("summary.json"), SUMMARY, StandardCharsets.UTF_8);
    CliRun run = CliRun.of("report", "--input=" + out);
    assertThat(run.exit, is(ExitCodes.USAGE_ERROR));
    assertThat(run.err, containsString("no decisions, dead-letters, duplicates, too-late output"));
  }

  @Test
  public void aMissingDirectoryAndABadLatenessAreUsageErrors() throws IOException {
    Path missing = folder.getRoot().toPath().resolve("nowhere");
    assertThat(CliRun.of("report", "--input=" + missing).exit, is(ExitCodes.USAGE_ERROR));
    Path out = outputs(SUMMARY);
    CliRun run = CliRun.of("report", "--input=" + out, "--allowedLateness=an hour");
    assertThat(run.exit, is(ExitCodes.USAGE_ERROR));
    assertThat(run.err, containsString("--allowedLateness=an hour"));
  }
}
