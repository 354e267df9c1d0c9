package dev.tidemark.tools.train;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import dev.tidemark.spec.SpecLoader;
import dev.tidemark.transforms.values.Label;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

@RunWith(JUnit4.class)
public class DecisionExamplesTest {
  @Rule public final TemporaryFolder temp = new TemporaryFolder();

  private static String decision(
      String id, String account, String start, String timing, int version, int txnCount) {
    Instant windowStart = Instant.parse("2026-01-01T" + start + "Z");
    return "{\"decisionId\":\""
        + id
        + "\",\"version\":"
        + version
        + ",\"accountId\":\""
        + account
        + "\",\"windowStart\":\""
        + windowStart
        + "\",\"windowEnd\":\""
        + windowStart.plus(300_000)
        + "\",\"pane\":{\"timing\":\""
        + timing
        + "\",\"index\":"
        + version
        + "},\"features\":{\"txnCount\":"
        + txnCount
        + ",\"amountSum\":10.5,\"amountMax\":10.5,\"distinctMerchants\":1,"
        + "\"distinctCountries\":1},\"clocks\":{\"eventTime\":\"2026-01-01T00:01:00Z\","
        + "\"decisionTime\":\"2026-01-02T00:00:0"
        + version
        + "Z\"},\"score\":0.1}";
  }

  private static String label(String id, String account, String eventTime, String value) {
    return new Label(
            "/labels",
            id,
            Instant.parse("2026-01-01T05:00:00Z"),
            "/pos",
            "txn-" + id,
            account,
            account == null ? null : Instant.parse("2026-01-01T" + eventTime + "Z"),
            value)
        .toJsonLine();
  }

  @Test
  public void eachWindowsEditionInForceIsLabelledByTheLabelsOfItsEvents() throws IOException {
    Path decisions = temp.newFolder("decisions").toPath();
    Files.write(
        decisions.resolve("decisions-00000-of-00002.ndjson"),
        List.of(
            decision("A", "acct-1", "00:00:00", "EARLY", 0, 1),
            decision("A", "acct-1", "00:00:00", "ON_TIME", 1, 2),
            decision("B", "acct-1", "00:00:30", "LATE", 1, 4),
            decision("C", "acct-2", "00:00:00", "EARLY", 0, 1)));
    Files.write(
        decisions.resolve("decisions-00001-of-00002.ndjson"),
        List.of(
            decision("A", "acct-1", "00:00:00", "LATE", 2, 3),
            decision("B", "acct-1", "00:00:30", "LATE", 0, 5),
            decision("D", "acct-3", "00:00:00", "ON_TIME", 0, 1)));
    Path labels = temp.newFile("labels.ndjson").toPath();
    Files.write(
        labels,
        List.of(
            label("1", "acct-1", "00:01:00", "fraud"),
            label("1", "acct-1", "00:01:00", "fraud"),
            label("1", "acct-1", "00:01:00", "legit"),
            label("2", "acct-1", "00:05:10", "legit"),
            label("3", "acct-2", "00:01:00", "legit"),
            label("4", null, null, "fraud"),
            "{not a label"));

    DecisionExamples.Result result =
        DecisionExamples.read(
            SpecLoader.loadBundled("payments"), decisions, labels, Set.of("fraud"));

    // A: its on-time edition (version 1); B: no on-time pane, its first late one (version 0).
    assertThat(
        result.examples().stream().map(e -> e.decisionId() + "@" + e.version()).toList(),
        contains("B@0", "A@1"));
    assertThat(result.examples().get(0).row().features()[0], is(5f));
    assertThat(result.examples().get(1).row().features()[0], is(2f));
    assertThat(result.examples().get(1).row().positive(), is(true));
    // B holds the fraud at 00:01 and the legit event at 00:05:10: positive.
    assertThat(result.examples().get(0).row().positive(), is(true));
    assertThat(result.examples().get(0).decisionTime(), is(Instant.parse("2026-01-02T00:00:00Z")));
    assertThat(result.decisionLines(), is(7L));
    assertThat(result.windows(), is(4L));
    assertThat(result.onTimeEditions(), is(1L));
    assertThat(result.lateEditions(), is(1L));
    assertThat("C: early panes only", result.withoutEdition(), is(1L));
    assertThat("D: no label reached it", result.unlabelledWindows(), is(1L));
    assertThat(result.labelLines(), is(7L));
    assertThat(result.repeatedLabels(), is(2L));
    assertThat(result.conflictingLabels(), is(1L));
    assertThat(result.rejectedLabels(), is(Map.of("not JSON", 1L)));
    assertThat(result.labelsWithoutKeyOrTime(), is(1L));
    assertThat("3: its window has no final edition", result.unmatchedLabels(), is(1L));
    assertThat(result.labelValues(), is(Map.of("fraud", 2L, "legit", 2L)));
  }

  @Test
  public void aRecordThatIsNotADecisionOfTheSpecIsNamed() throws IOException {
    Path decisions = temp.newFile("decisions.ndjson").toPath();
    Files.write(
        decisions,
        List.of(
            decision("A", "acct-1", "00:00:00", "ON_TIME", 0, 1).replace("accountId", "userId")));
    Path labels = temp.newFile("labels.ndjson").toPath();
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                DecisionExamples.read(
                    SpecLoader.loadBundled("payments"), decisions, labels, Set.of("fraud")));
    assertThat(e.getMessage(), containsString("decisions.ndjson:1 has no 'accountId'"));
  }
}
