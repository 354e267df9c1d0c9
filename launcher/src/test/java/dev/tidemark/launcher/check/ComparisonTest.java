package dev.tidemark.launcher.check;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.launcher.LiveRun;
import dev.tidemark.transforms.util.Json;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Consumer;
import org.joda.time.Duration;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The comparison counts exactly what differs, key by key and category by category. */
@RunWith(JUnit4.class)
public class ComparisonTest {
  private static final Duration SIZE = Duration.standardMinutes(5);

  /**
   * The expected outputs of 10 records: decisions of two tiling windows (3 + 2 events) and one
   * overlapping window, two dead letters, one duplicate (a conflict), one too-late event and one
   * partially late event whose missed window is a tiling one (so it is windowed, 3+2+1 = 6).
   */
  private static OutputView expected() {
    OutputView view = new OutputView();
    decision(view, "a", 0, "00:00:00", "00:05:00", 2, "t1");
    decision(view, "a", 1, "00:00:00", "00:05:00", 3, "t1");
    decision(view, "b", 0, "00:05:00", "00:10:00", 2, "t2");
    decision(view, "c", 0, "00:00:30", "00:05:30", 4, "t1");
    view.addDeadLetter(
        letter("malformed_json", "{\"specversion\":\"1.0\",\"id\":\"bad-1\"", "f:1"));
    view.addDeadLetter(
        letter("invalid_currency", "{\"id\":\"bad-2\",\"source\":\"/s\",\"data\":{}}", "f:2"));
    view.addDuplicate(duplicate("txn-1", false, "00:01:00"));
    view.addTooLate(tooLate("txn-9", false, "00:20:00"));
    view.addTooLate(tooLate("txn-8", true, "00:20:00"));
    return view;
  }

  /** The same outputs as a streaming run commits them: other versions, clocks and origins. */
  private static OutputView observed(Consumer<OutputView> change) {
    OutputView view = new OutputView();
    decision(view, "a", 0, "00:00:00", "00:05:00", 1, "t1");
    decision(view, "a", 1, "00:00:00", "00:05:00", 2, "t1");
    decision(view, "a", 2, "00:00:00", "00:05:00", 3, "t1");
    decision(view, "b", 0, "00:05:00", "00:10:00", 2, "t2");
    decision(view, "c", 0, "00:00:30", "00:05:30", 4, "t1");
    view.addDeadLetter(
        letter("malformed_json", "{\"specversion\":\"1.0\",\"id\":\"bad-1\"", "k:0@1"));
    view.addDeadLetter(
        letter("invalid_currency", "{\"source\":\"/s\",\"id\":\"bad-2\",\"data\":{}}", "k:1@4"));
    view.addDeadLetter(letter("unsupported_type", marker(0), "k:0@9"));
    view.addDeadLetter(letter("unsupported_type", marker(1), "k:1@9"));
    view.addDuplicate(duplicate("txn-1", false, "00:01:00"));
    view.addTooLate(tooLate("txn-9", false, "00:31:00"));
    view.addTooLate(tooLate("txn-8", true, "00:29:00"));
    change.accept(view);
    return view;
  }

  private static Comparison compare(OutputView observed, Comparison.Delivery delivery) {
    return Comparison.compare(expected(), List.of(), observed, 10, 2, SIZE, delivery);
  }

  @Test
  public void equalOutputsMatchAndAccountForEveryRecord() {
    Comparison comparison = compare(observed(v -> {}), Comparison.Delivery.EXACTLY_ONCE);
    assertThat(comparison.describe(), comparison.passed(), is(true));
    assertThat(comparison.identityViolations(), is(empty()));
    assertThat(comparison.decisionsCommitted(), is(5L));
    assertThat(comparison.accounting().get("windowed"), is(6L));
    assertThat(comparison.accounting().get("endMarkers"), is(2L));
    JsonNode json = Json.MAPPER.valueToTree(comparison.toJsonNode());
    assertThat(json.get("finalStateMismatches").asInt(), is(0));
    assertThat(json.get("identityHolds").asBoolean(), is(true));
  }

  @Test
  public void eachFaultCountsOnceInItsCategory() {
    OutputView observed = new OutputView();
    decision(observed, "a", 0, "00:00:00", "00:05:00", 1, "t1");
    decision(observed, "a", 1, "00:00:00", "00:05:00", 2, "t1");
    decision(observed, "a", 1, "00:00:00", "00:05:00", 2, "t1"); // a version twice
    decision(observed, "a", 2, "00:00:00", "00:05:00", 3, "t1");
    decision(observed, "b", 1, "00:05:00", "00:10:00", 2, "t2"); // version 0 missing
    decision(observed, "c", 0, "00:00:30", "00:05:30", 5, "t1"); // a changed decision
    // The dead letter bad-2 is missing.
    observed.addDeadLetter(
        letter("malformed_json", "{\"specversion\":\"1.0\",\"id\":\"bad-1\"", "k:0@1"));
    observed.addDeadLetter(letter("unsupported_type", marker(0), "k:0@9"));
    observed.addDeadLetter(letter("unsupported_type", marker(1), "k:1@9"));
    observed.addDuplicate(duplicate("txn-1", true, "00:01:00")); // no longer a conflict
    observed.addTooLate(tooLate("txn-9", false, "00:31:00"));
    observed.addTooLate(tooLate("txn-8", true, "00:29:00"));
    observed.addTooLate(tooLate("txn-7", true, "00:29:00", "00:00:30")); // an extra one

    Comparison comparison = compare(observed, Comparison.Delivery.EXACTLY_ONCE);
    assertThat(comparison.mismatches().get("duplicateVersions"), contains(id("a") + "@1"));
    assertThat(comparison.mismatches().get("missingVersions"), contains(id("b") + "@0"));
    assertThat(comparison.mismatches().get("finalStateMismatches"), contains(id("c")));
    assertThat(comparison.deadLetterMismatches(), is(1));
    assertThat(comparison.duplicateMismatches(), is(1));
    assertThat(comparison.tooLateMismatches(), is(1));
    // 10 fed + 2 markers, but 3 dead letters + 1 duplicate + 1 too late + 6 windowed.
    assertThat(comparison.identityHolds(), is(false));
    assertThat(comparison.passed(), is(false));
    JsonNode json = Json.MAPPER.valueToTree(comparison.toJsonNode());
    assertThat(json.get("duplicateVersions").asInt(), is(1));
    assertThat(json.get("missingVersions").asInt(), is(1));
    assertThat(json.get("finalStateMismatches").asInt(), is(1));
    assertThat(json.get("deadLetterMismatches").asInt(), is(1));
    assertThat(json.get("duplicateMismatches").asInt(), is(1));
    assertThat(json.get("tooLateMismatches").asInt(), is(1));
    assertThat(json.get("identityHolds").asBoolean(), is(false));
  }

  @Test
  public void anAtLeastOnceSinkMayRepeatRecordsButNotChangeThem() {
    OutputView observed =
        observed(
            v -> {
              decision(v, "a", 2, "00:00:00", "00:05:00", 3, "t1");
              v.addDeadLetter(
                  letter(
                      "invalid_currency",
                      "{\"source\":\"/s\",\"id\":\"bad-2\",\"data\":{}}",
                      "k:1@4"));
              v.addDuplicate(duplicate("txn-1", false, "00:01:00"));
              v.addTooLate(tooLate("txn-8", true, "00:29:00"));
            });
    Comparison atLeastOnce = compare(observed, Comparison.Delivery.AT_LEAST_ONCE);
    assertThat(atLeastOnce.describe(), atLeastOnce.passed(), is(true));
    assertThat(atLeastOnce.duplicateVersions(), is(1));

    Comparison exactlyOnce = compare(observed, Comparison.Delivery.EXACTLY_ONCE);
    assertThat(exactlyOnce.duplicateVersions(), is(1));
    assertThat(exactlyOnce.deadLetterMismatches(), is(1));
    assertThat(exactlyOnce.duplicateMismatches(), is(1));
    assertThat(exactlyOnce.tooLateMismatches(), is(1));
    assertThat(exactlyOnce.identityHolds(), is(false));
    assertThat(exactlyOnce.passed(), is(false));
  }

  @Test
  public void aMissingEndMarkerBreaksTheIdentity() {
    Comparison comparison =
        Comparison.compare(
            expected(),
            List.of(),
            observed(v -> {}),
            10,
            3,
            SIZE,
            Comparison.Delivery.EXACTLY_ONCE);
    assertThat(comparison.identityHolds(), is(false));
  }

  @Test
  public void outputsAccountForTheirInputWithoutAReference() {
    assertThat(
        Comparison.accountsFor(observed(v -> {}), 10, 2, SIZE, Comparison.Delivery.EXACTLY_ONCE),
        is(true));
    assertThat(
        Comparison.accountsFor(observed(v -> {}), 11, 2, SIZE, Comparison.Delivery.EXACTLY_ONCE),
        is(false));
    assertThat(
        Comparison.accountsFor(observed(v -> {}), 10, 3, SIZE, Comparison.Delivery.EXACTLY_ONCE),
        is(false));
  }

  @Test
  public void aCutPayloadStillNamesItsEvent() {
    JsonNode cut =
        Json.MAPPER
            .createObjectNode()
            .put(
                "payload",
                "{\"specversion\":\"1.0\",\"id\":\"bad-3\",\"source\":\"/s\",\"data\":{\"pad\":\"xx")
            .put("payloadSha256", "ab");
    assertThat(OutputView.identity(cut), is("/s|bad-3"));
    JsonNode broken =
        Json.MAPPER.createObjectNode().put("payload", "{\"id\":").put("payloadSha256", "cd");
    assertThat(OutputView.identity(broken), is("sha256:cd"));
  }

  private static String id(String account) {
    return "id-" + account;
  }

  private static void decision(
      OutputView view,
      String account,
      long version,
      String start,
      String end,
      int count,
      String at) {
    String json =
        "{\"decisionId\":\""
            + id(account)
            + "\",\"version\":"
            + version
            + ",\"accountId\":\""
            + account
            + "\",\"windowStart\":\"2026-01-01T"
            + start
            + "Z\",\"windowEnd\":\"2026-01-01T"
            + end
            + "Z\",\"pane\":{\"index\":"
            + version
            + "},\"features\":{\"txnCount\":"
            + count
            + "},\"clocks\":{\"eventTime\":\""
            + at
            + "\",\"processingTime\":\"p"
            + version
            + "\",\"decisionTime\":\"d"
            + version
            + "\"},\"score\":0."
            + count
            + "}";
    view.addDecision(json.getBytes(StandardCharsets.UTF_8));
  }

  private static byte[] letter(String reason, String payload, String origin) {
    return Json.MAPPER
        .createObjectNode()
        .put("reason", reason)
        .put("origin", origin)
        .put("payload", payload)
        .put("payloadSha256", Integer.toHexString(payload.hashCode()))
        .toString()
        .getBytes(StandardCharsets.UTF_8);
  }

  private static String marker(int partition) {
    return "{\"specversion\":\"1.0\",\"id\":\"end-of-stream-"
        + partition
        + "\",\"source\":\""
        + LiveRun.END_MARKER_SOURCE
        + "\",\"type\":\""
        + LiveRun.END_OF_STREAM_TYPE
        + "\"}";
  }

  private static byte[] duplicate(String id, boolean identical, String ingestion) {
    return ("{\"source\":\"/s\",\"id\":\""
            + id
            + "\",\"identicalPayload\":"
            + identical
            + ",\"ingestionTime\":\""
            + ingestion
            + "\"}")
        .getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] tooLate(String id, boolean partial, String watermark) {
    return tooLate(id, partial, watermark, "00:00:00");
  }

  private static byte[] tooLate(String id, boolean partial, String watermark, String missed) {
    return ("{\"source\":\"/s\",\"id\":\""
            + id
            + "\",\"partiallyLate\":"
            + partial
            + ",\"missedWindows\":[{\"start\":\"2026-01-01T"
            + missed
            + "Z\"}]"
            + ",\"watermark\":\""
            + watermark
            + "\"}")
        .getBytes(StandardCharsets.UTF_8);
  }
}
