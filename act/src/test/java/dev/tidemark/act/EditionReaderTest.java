package dev.tidemark.act;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

import dev.tidemark.act.Edition.Correction;
import dev.tidemark.act.Edition.Verdict;
import dev.tidemark.act.EditionReader.Read;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** Decision records in, editions or reasoned rejections out; what the fingerprint covers. */
@RunWith(JUnit4.class)
public class EditionReaderTest {
  private static final Instant MONDAY = Instant.parse("2026-03-02T09:00:00Z");
  private static final Instant TUESDAY = Instant.parse("2026-03-03T09:00:00Z");

  private static Read read(String key, String json) {
    return EditionReader.read(
        "tidemark.decisions",
        key == null ? null : key.getBytes(StandardCharsets.UTF_8),
        json.getBytes(StandardCharsets.UTF_8),
        new RecordHeaders());
  }

  private static Edition edition(String json) {
    Read read = read(null, json);
    assertThat(read.toString(), read.edition().isPresent(), is(true));
    return read.edition().get();
  }

  private static String reason(String key, String json) {
    Read read = read(key, json);
    assertThat(read.toString(), read.rejection().isPresent(), is(true));
    return read.rejection().get().reason();
  }

  @Test
  public void readsAReversalWithWhatItSupersedes() {
    Edition edition =
        edition(
            Editions.json("d1", "acct-1", 2, 0.9, "review", "reversed", 1, 0.2, "allow", MONDAY));
    assertThat(edition.decisionId(), is("d1"));
    assertThat(edition.version(), is(2L));
    assertThat(edition.accountId(), is("acct-1"));
    assertThat(edition.verdict(), is(Verdict.REVIEW));
    assertThat(edition.correction(), is(Correction.REVERSED));
    assertThat(edition.supersedes().orElseThrow().version(), is(1L));
    assertThat(edition.supersedes().orElseThrow().verdict(), is(Verdict.ALLOW));
    assertThat(
        read("d1", Editions.first("d1", "acct-1", 0.1, "allow")).edition().isPresent(), is(true));
  }

  @Test
  public void theFingerprintIgnoresTheWallClocksAndArrivalOrderAndCoversTheContent() {
    String monday = Editions.json("d1", "a", 1, 0.7, "review", "refined", 0, 0.6, "review", MONDAY);
    String tuesday =
        Editions.json("d1", "a", 1, 0.7, "review", "refined", 0, 0.6, "review", TUESDAY);
    assertThat(monday.equals(tuesday), is(false));
    assertThat(edition(monday).fingerprint(), is(edition(tuesday).fingerprint()));
    // The same edition compared with another predecessor: another run's pane order.
    String otherBefore =
        Editions.json("d1", "a", 1, 0.7, "review", "reversed", 0, 0.3, "allow", MONDAY);
    assertThat(edition(otherBefore).fingerprint(), is(edition(monday).fingerprint()));

    String otherScore =
        Editions.json("d1", "a", 1, 0.71, "review", "refined", 0, 0.6, "review", MONDAY);
    String otherAccount =
        Editions.json("d1", "b", 1, 0.7, "review", "refined", 0, 0.6, "review", MONDAY);
    String otherVerdict =
        Editions.json("d1", "a", 1, 0.7, "allow", "reversed", 0, 0.6, "review", MONDAY);
    for (String other : new String[] {otherScore, otherAccount, otherVerdict}) {
      assertThat(edition(other).fingerprint(), is(not(edition(monday).fingerprint())));
    }
  }

  @Test
  public void aDecisionWithoutCorrectionIsRefusedWithItsReason() {
    // Discarding accumulation mode: correction and supersedes are absent.
    String discarding = Editions.json("d1", "a", 0, 0.9, "review", null, -1, 0, null, MONDAY);
    Read read = read("d1", discarding);
    assertThat(read.rejection().orElseThrow().reason(), is(EditionReader.NO_CORRECTION));
    assertThat(read.rejection().orElseThrow().detail(), containsString("discarding"));
  }

  @Test
  public void everyOtherUnusableRecordHasAReason() {
    assertThat(reason("d1", "not json"), is(EditionReader.INVALID_JSON));
    assertThat(reason("d1", "[1,2]"), is(EditionReader.INVALID_JSON));
    assertThat(reason("d1", "{\"a\":1,\"a\":2}"), is(EditionReader.INVALID_JSON));
    assertThat(
        reason("d1", Editions.first("d1", "a", 0.9, "review").replace("\"review\"", "\"block\"")),
        is(EditionReader.NOT_A_DECISION));
    assertThat(
        reason(
            "d1",
            Editions.first("d1", "a", 0.9, "review").replace("\"version\":0", "\"version\":-1")),
        is(EditionReader.NOT_A_DECISION));
    assertThat(
        reason(
            "d1",
            Editions.first("d1", "a", 0.9, "review")
                .replace(Editions.WINDOW_END.toString(), "yesterday")),
        is(EditionReader.NOT_A_DECISION));
    assertThat(
        reason("d2", Editions.first("d1", "a", 0.9, "review")), is(EditionReader.KEY_MISMATCH));
    // reversed, but the verdict stayed; refined, but it changed; a first edition superseding one.
    assertThat(
        reason(
            "d1", Editions.json("d1", "a", 1, 0.9, "review", "reversed", 0, 0.8, "review", MONDAY)),
        is(EditionReader.INCONSISTENT_CORRECTION));
    assertThat(
        reason(
            "d1", Editions.json("d1", "a", 1, 0.9, "review", "refined", 0, 0.1, "allow", MONDAY)),
        is(EditionReader.INCONSISTENT_CORRECTION));
    assertThat(
        reason("d1", Editions.json("d1", "a", 1, 0.9, "review", "none", 0, 0.1, "allow", MONDAY)),
        is(EditionReader.INCONSISTENT_CORRECTION));
    assertThat(
        reason("d1", Editions.json("d1", "a", 1, 0.9, "review", "reversed", -1, 0, null, MONDAY)),
        is(EditionReader.INCONSISTENT_CORRECTION));
  }

  @Test
  public void readsBothCloudEventsModes() {
    String decision = Editions.first("d1", "acct-1", 0.9, "review");
    RecordHeaders binary = new RecordHeaders();
    binary.add("ce_specversion", bytes("1.0"));
    binary.add("ce_id", bytes("d1/0"));
    binary.add("ce_source", bytes("/tidemark/tidemark.decisions"));
    binary.add("ce_type", bytes(EditionReader.DECISION_EVENT_TYPE));
    binary.add("content-type", bytes("application/json"));
    Read fromBinary = EditionReader.read("t", bytes("d1"), bytes(decision), binary);
    assertThat(fromBinary.toString(), fromBinary.edition().orElseThrow().decisionId(), is("d1"));

    RecordHeaders structured = new RecordHeaders();
    structured.add("content-type", bytes("application/cloudevents+json; charset=utf-8"));
    String event =
        "{\"specversion\":\"1.0\",\"id\":\"d1/0\",\"source\":\"/tidemark/t\",\"type\":\""
            + EditionReader.DECISION_EVENT_TYPE
            + "\",\"datacontenttype\":\"application/json\",\"data\":"
            + decision
            + "}";
    Read fromStructured = EditionReader.read("t", bytes("d1"), bytes(event), structured);
    assertThat(
        fromStructured.toString(), fromStructured.edition().orElseThrow().decisionId(), is("d1"));

    RecordHeaders otherType = new RecordHeaders();
    otherType.add("content-type", bytes("application/cloudevents+json"));
    Read payment =
        EditionReader.read(
            "t",
            bytes("d1"),
            bytes(event.replace(EditionReader.DECISION_EVENT_TYPE, "payments.transaction.v1")),
            otherType);
    assertThat(payment.rejection().orElseThrow().reason(), is(EditionReader.UNSUPPORTED_EVENT));
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
