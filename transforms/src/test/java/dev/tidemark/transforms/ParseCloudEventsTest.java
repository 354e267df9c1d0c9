package dev.tidemark.transforms;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThanOrEqualTo;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertThrows;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.spec.FieldParser;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.DeadLetterReason;
import dev.tidemark.transforms.values.Event;
import dev.tidemark.transforms.values.RawRecord;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.InstantCoder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.MetricNameFilter;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.Flatten;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.SerializableFunction;
import org.apache.beam.sdk.transforms.WithFailures;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionList;
import org.apache.beam.sdk.values.TimestampedValue;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * {@link ParseCloudEvents}: one test per dead-letter reason it can produce, each with records as a
 * source would deliver them and both outputs checked; the exact fields of a valid event; the
 * dead-letter JSON; builder validation; and a seeded fuzz run checking that every record is counted
 * exactly once.
 */
@RunWith(JUnit4.class)
public class ParseCloudEventsTest {
  @Rule public final transient TestPipeline p = TestPipeline.create();

  private static final Instant INGESTED = Instant.parse("2026-01-01T00:10:00Z");
  private static final String EVENT_TIME_TEXT = "2026-01-01T00:05:00Z";
  private static final Instant EVENT_TIME = Instant.parse(EVENT_TIME_TEXT);
  private static final String GOOD_ID = "good-1";
  private static final String GOOD_ORIGIN = "replay:line 1";

  /** Dead-letter messages are one line for a human; none needs more than this. */
  private static final int MAX_MESSAGE_LENGTH = 1000;

  /** The namespace of this test's own counters, kept apart from Tidemark's. */
  private static final String TEST_NAMESPACE = "tidemark-test";

  // ---------------------------------------------------------------------------------------------
  // Fixtures

  /** A valid payments.transaction.v1 event, as an editable JSON tree. */
  private static ObjectNode validEvent(String id) {
    ObjectNode event = Json.MAPPER.createObjectNode();
    event.put("specversion", "1.0");
    event.put("id", id);
    event.put("source", TestEvents.SOURCE);
    event.put("type", ParseCloudEvents.DEFAULT_TYPE);
    event.put("time", EVENT_TIME_TEXT);
    event.put("datacontenttype", "application/json");
    ObjectNode data = event.putObject("data");
    data.put("accountId", TestEvents.Account.ALICE.id);
    data.put("amount", new BigDecimal("12.30"));
    data.put("currency", "GBP");
    data.put("merchantId", "m1");
    data.put("country", "GB");
    return event;
  }

  private static ObjectNode data(ObjectNode event) {
    return (ObjectNode) event.get("data");
  }

  private static byte[] bytes(JsonNode json) {
    try {
      return Json.MAPPER.writeValueAsBytes(json);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static RawRecord record(String origin, byte[] payload) {
    return RawRecord.of(payload, INGESTED, origin);
  }

  private static RawRecord goodRecord() {
    return record(GOOD_ORIGIN, bytes(validEvent(GOOD_ID)));
  }

  /** A bad record and what its dead letter must say. */
  private static final class Bad implements Serializable {
    final String origin;
    final byte[] payload;
    final String messageFragment;
    final @Nullable DeadLetterReason sourceError;

    private Bad(
        String origin,
        byte[] payload,
        String messageFragment,
        @Nullable DeadLetterReason sourceError) {
      this.origin = origin;
      this.payload = payload;
      this.messageFragment = messageFragment;
      this.sourceError = sourceError;
    }

    RawRecord toRecord() {
      return sourceError == null
          ? record(origin, payload)
          : RawRecord.rejected(payload, INGESTED, origin, sourceError, messageFragment);
    }
  }

  private static Bad bad(String origin, byte[] payload, String messageFragment) {
    return new Bad(origin, payload, messageFragment, null);
  }

  private static Bad bad(String origin, JsonNode event, String messageFragment) {
    return bad(origin, bytes(event), messageFragment);
  }

  /**
   * Checks the failures output: exactly one dead letter per bad record, each with the expected
   * reason, step, origin, original bytes and a message naming the problem.
   */
  private static final class ExpectDeadLetters
      implements SerializableFunction<Iterable<DeadLetter>, Void> {
    private final DeadLetterReason reason;
    private final String step;
    private final List<Bad> expected;

    ExpectDeadLetters(DeadLetterReason reason, String step, List<Bad> expected) {
      this.reason = reason;
      this.step = step;
      this.expected = expected;
    }

    @Override
    public Void apply(Iterable<DeadLetter> input) {
      Map<String, DeadLetter> byOrigin = new HashMap<>();
      int count = 0;
      for (DeadLetter deadLetter : input) {
        count++;
        DeadLetter previous = byOrigin.put(deadLetter.origin(), deadLetter);
        assertThat("one dead letter per record: " + deadLetter, previous, nullValue());
      }
      assertThat("dead letters: " + byOrigin.values(), count, is(expected.size()));
      for (Bad bad : expected) {
        DeadLetter deadLetter = byOrigin.get(bad.origin);
        assertThat("dead letter for " + bad.origin, deadLetter, not(nullValue()));
        assertThat(deadLetter.toString(), deadLetter.reason(), is(reason));
        assertThat(deadLetter.toString(), deadLetter.step(), is(step));
        assertThat(
            deadLetter.toString(), deadLetter.message(), containsString(bad.messageFragment));
        assertThat(
            "a message for humans, not a copy of the input",
            deadLetter.message().length(),
            lessThanOrEqualTo(MAX_MESSAGE_LENGTH));
        assertArrayEquals("original bytes of " + bad.origin, bad.payload, deadLetter.payload());
      }
      return null;
    }
  }

  /**
   * Runs the bad records beside one good record through {@code parse} and checks both outputs and
   * the counters.
   */
  private void assertRejected(
      ParseCloudEvents parse, DeadLetterReason reason, String step, Bad... bad) {
    List<RawRecord> records = new ArrayList<>();
    records.add(goodRecord());
    for (Bad b : bad) {
      records.add(b.toRecord());
    }
    WithFailures.Result<PCollection<Event>, DeadLetter> result =
        p.apply(Create.of(records).withCoder(RawRecord.RawRecordCoder.of())).apply(parse);

    PAssert.that(ids(result.output())).containsInAnyOrder(GOOD_ID);
    PAssert.that(result.failures())
        .satisfies(new ExpectDeadLetters(reason, step, new ArrayList<>(Arrays.asList(bad))));

    PipelineResult run = p.run();
    run.waitUntilFinish();
    assertThat(TestEvents.counter(run, TidemarkMetrics.READ), is((long) records.size()));
    assertThat(TestEvents.counter(run, TidemarkMetrics.VALID), is(1L));
    assertThat(TestEvents.counter(run, TidemarkMetrics.DEAD_LETTERS), is((long) bad.length));
    assertThat(
        TestEvents.counter(run, TidemarkMetrics.DEAD_LETTERS_PREFIX + reason.code()),
        is((long) bad.length));
  }

  private void assertRejected(DeadLetterReason reason, Bad... bad) {
    assertRejected(ParseCloudEvents.create(), reason, ParseCloudEvents.STEP, bad);
  }

  private static PCollection<String> ids(PCollection<Event> events) {
    return events.apply("Ids", MapElements.into(TypeDescriptors.strings()).via(Event::id));
  }

  // ---------------------------------------------------------------------------------------------
  // One test per dead-letter reason

  @Test
  public void invalidUtf8IsDeadLettered() {
    byte[] event = bytes(validEvent("utf8-1"));
    // Replace the account id's first letter with the bytes 0xC3 0x28: a two-byte lead followed by
    // a byte that is not a continuation byte, the classic invalid sequence.
    String json = new String(event, StandardCharsets.UTF_8);
    int at = json.indexOf(TestEvents.Account.ALICE.id);
    byte[] invalid = new byte[event.length + 1];
    System.arraycopy(event, 0, invalid, 0, at);
    invalid[at] = (byte) 0xC3;
    invalid[at + 1] = (byte) 0x28;
    System.arraycopy(event, at + 1, invalid, at + 2, event.length - at - 1);

    assertRejected(
        DeadLetterReason.INVALID_UTF8,
        bad("replay:line 2", invalid, "not valid UTF-8"),
        bad("replay:line 3", new byte[] {(byte) 0xC3, (byte) 0x28}, "not valid UTF-8"));
  }

  @Test
  public void oversizedRecordIsDeadLettered() {
    int max = 512;
    ObjectNode padded = validEvent("big-1");
    data(padded).put("label", "x".repeat(600));
    assertRejected(
        ParseCloudEvents.create().withMaxEventBytes(max),
        DeadLetterReason.OVERSIZED_RECORD,
        ParseCloudEvents.STEP,
        bad("replay:line 2", padded, "over the limit of 512"),
        // Size is checked before anything else: bytes that are also invalid UTF-8 are oversized.
        bad("replay:line 3", filled(max + 1, (byte) 0xC3), "is 513 bytes"));
  }

  @Test
  public void aRecordOfExactlyMaxEventBytesIsAcceptedAndOneMoreIsNot() {
    int max = 400;
    ObjectNode atLimit = validEvent("limit-1");
    data(atLimit).put("label", "");
    int padding = max - bytes(atLimit).length;
    data(atLimit).put("label", "x".repeat(padding));
    ObjectNode overLimit = validEvent("limit-2");
    data(overLimit).put("label", "x".repeat(padding + 1));
    assertThat(bytes(atLimit).length, is(max));
    assertThat(bytes(overLimit).length, is(max + 1));

    WithFailures.Result<PCollection<Event>, DeadLetter> result =
        p.apply(
                Create.of(
                        record("replay:line 1", bytes(atLimit)),
                        record("replay:line 2", bytes(overLimit)))
                    .withCoder(RawRecord.RawRecordCoder.of()))
            .apply(ParseCloudEvents.create().withMaxEventBytes(max));
    PAssert.that(ids(result.output())).containsInAnyOrder("limit-1");
    PAssert.that(reasons(result.failures())).containsInAnyOrder("oversized_record");
    p.run().waitUntilFinish();
  }

  @Test
  public void invalidJsonIsDeadLettered() {
    byte[] event = bytes(validEvent("trunc-1"));
    byte[] truncated = Arrays.copyOf(event, event.length / 2);
    assertRejected(
        DeadLetterReason.INVALID_JSON,
        bad("replay:line 2", truncated, "not valid JSON"),
        bad("replay:line 3", new byte[0], "empty"),
        bad("replay:line 4", bytes("   "), "empty"),
        bad("replay:line 5", bytes(validEvent("trailing-1") + " {}"), "not valid JSON"));
  }

  @Test
  public void jsonThatIsNotACloudEventIsDeadLettered() {
    ObjectNode noSpecVersion = validEvent("nospec-1");
    noSpecVersion.remove("specversion");
    assertRejected(
        DeadLetterReason.NOT_A_CLOUDEVENT,
        bad("replay:line 2", bytes("[" + validEvent("array-1") + "]"), "specversion"),
        bad("replay:line 3", noSpecVersion, "specversion"),
        bad("replay:line 4", bytes("\"a string\""), "specversion"));
  }

  @Test
  public void unsupportedSpecVersionIsDeadLettered() {
    ObjectNode v03 = validEvent("v03-1");
    v03.put("specversion", "0.3");
    assertRejected(DeadLetterReason.UNSUPPORTED_SPECVERSION, bad("replay:line 2", v03, "'0.3'"));
  }

  @Test
  public void missingAttributeIsDeadLettered() {
    ObjectNode noId = validEvent("ignored");
    noId.remove("id");
    ObjectNode emptySource = validEvent("empty-source-1");
    emptySource.put("source", "");
    ObjectNode numericId = validEvent("ignored");
    numericId.put("id", 42);
    ObjectNode noTime = validEvent("no-time-1");
    noTime.remove("time");
    assertRejected(
        DeadLetterReason.MISSING_ATTRIBUTE,
        bad("replay:line 2", noId, "'id'"),
        bad("replay:line 3", emptySource, "'source'"),
        bad("replay:line 4", numericId, "'id'"),
        bad("replay:line 5", noTime, "'time'"));
  }

  @Test
  public void controlCharactersAndUnpairedSurrogatesInIdentifiersAreDeadLettered() {
    ObjectNode nulInId = validEvent("a\u0000b");
    ObjectNode escapeInSource = validEvent("ctl-2");
    escapeInSource.put("source", "/web\u001b[31m");
    ObjectNode c1InType = validEvent("ctl-4");
    c1InType.put("type", "payments.transaction.v1\u0085");
    WithFailures.Result<PCollection<Event>, DeadLetter> result =
        p.apply(
                Create.of(
                        record("replay:line 1", bytes(nulInId)),
                        record("replay:line 2", bytes(escapeInSource)),
                        record("replay:line 3", escapedId("x\\ud800")),
                        record("replay:line 4", bytes(c1InType)),
                        record("replay:line 5", escapedId("pay-\\ud83d\\udcb3")))
                    .withCoder(RawRecord.RawRecordCoder.of()))
            .apply(ParseCloudEvents.create());

    PAssert.that(ids(result.output())).containsInAnyOrder("pay-\ud83d\udcb3");
    PAssert.that(messages(result.failures()))
        .containsInAnyOrder(
            "invalid_attribute: attribute 'id' holds the control character U+0000 at index 1;"
                + " identifiers must be plain text",
            "invalid_attribute: attribute 'source' holds the control character U+001B at index 4;"
                + " identifiers must be plain text",
            "invalid_attribute: attribute 'id' holds the unpaired surrogate U+D800 at index 1;"
                + " identifiers must be plain text",
            "invalid_attribute: attribute 'type' holds the control character U+0085 at index 23;"
                + " identifiers must be plain text");
    p.run().waitUntilFinish();
  }

  /** A valid event whose id is written into the JSON text as given (escapes and all). */
  private static byte[] escapedId(String jsonEscapedId) {
    return new String(bytes(validEvent("ID-PLACEHOLDER")), StandardCharsets.UTF_8)
        .replace("ID-PLACEHOLDER", jsonEscapedId)
        .getBytes(StandardCharsets.UTF_8);
  }

  private static PCollection<String> messages(PCollection<DeadLetter> deadLetters) {
    return deadLetters.apply(
        "Messages",
        MapElements.into(TypeDescriptors.strings())
            .via(d -> d.reason().code() + ": " + d.message()));
  }

  @Test
  public void invalidTimeIsDeadLettered() {
    ObjectNode yesterday = validEvent("time-1");
    yesterday.put("time", "yesterday");
    ObjectNode noZone = validEvent("time-2");
    noZone.put("time", "2026-01-01T00:05:00");
    ObjectNode yearZero = validEvent("time-3");
    yearZero.put("time", "0000-06-01T00:00:00Z");
    ObjectNode offsetIntoYearZero = validEvent("time-4");
    offsetIntoYearZero.put("time", "0001-01-01T00:30:00+01:00");
    ObjectNode lastDay = validEvent("time-5");
    lastDay.put("time", "9999-12-31T00:00:00Z");
    assertRejected(
        DeadLetterReason.INVALID_TIME,
        bad("replay:line 2", yesterday, "'yesterday'"),
        bad("replay:line 3", noZone, "RFC 3339"),
        bad("replay:line 4", yearZero, "out of range"),
        bad("replay:line 5", offsetIntoYearZero, "BigQuery TIMESTAMP"),
        bad("replay:line 6", lastDay, "out of range"));
  }

  @Test
  public void anEventTimeMoreThanTheSkewAfterIngestionIsDeadLettered() {
    // INGESTED is 00:10; the default skew of ten minutes accepts up to 00:20 exactly.
    ObjectNode atBound = validEvent("skew-at-bound");
    atBound.put("time", "2026-01-01T00:20:00Z");
    ObjectNode oneMsOver = validEvent("skew-1ms-over");
    oneMsOver.put("time", "2026-01-01T00:20:00.001Z");
    ObjectNode farFuture = validEvent("skew-2099");
    farFuture.put("time", "2099-01-01T00:00:00Z");
    List<RawRecord> records =
        List.of(
            record("replay:line 1", bytes(atBound)),
            record("replay:line 2", bytes(oneMsOver)),
            record("replay:line 3", bytes(farFuture)));
    WithFailures.Result<PCollection<Event>, DeadLetter> result =
        p.apply(Create.of(records).withCoder(RawRecord.RawRecordCoder.of()))
            .apply(ParseCloudEvents.create());

    PAssert.that(ids(result.output())).containsInAnyOrder("skew-at-bound");
    PAssert.that(result.failures())
        .satisfies(
            new ExpectDeadLetters(
                DeadLetterReason.TIME_IN_FUTURE,
                ParseCloudEvents.STEP,
                List.of(
                    bad(
                        "replay:line 2",
                        oneMsOver,
                        "event time 2026-01-01T00:20:00.001Z is more than the allowed skew of"
                            + " PT10M after its ingestion time 2026-01-01T00:10:00.000Z"),
                    bad("replay:line 3", farFuture, "--maxFutureSkew"))));
    PipelineResult run = p.run();
    run.waitUntilFinish();
    assertThat(TestEvents.counter(run, TidemarkMetrics.VALID), is(1L));
    assertThat(
        TestEvents.counter(run, TidemarkMetrics.DEAD_LETTERS_PREFIX + "time_in_future"), is(2L));
  }

  @Test
  public void aConfiguredSkewMovesTheBoundAndTheParserOutsideBeamAppliesIt() {
    ParseCloudEvents.Parser parser =
        ParseCloudEvents.create()
            .withMaxFutureSkew(org.joda.time.Duration.standardSeconds(30))
            .newParser();
    ObjectNode atBound = validEvent("skew-30s");
    atBound.put("time", "2026-01-01T00:10:30Z");
    ObjectNode over = validEvent("skew-30s-over");
    over.put("time", "2026-01-01T00:10:30.001Z");
    List<DeadLetter> deadLetters = new ArrayList<>();

    Event accepted = parser.parse(record("bench:1", bytes(atBound)), deadLetters::add);
    Event rejected = parser.parse(record("bench:2", bytes(over)), deadLetters::add);

    assertThat(accepted == null ? null : accepted.id(), is("skew-30s"));
    assertThat(rejected, nullValue());
    assertThat(deadLetters.size(), is(1));
    assertThat(deadLetters.get(0).reason(), is(DeadLetterReason.TIME_IN_FUTURE));
    assertThat(deadLetters.get(0).origin(), is("bench:2"));
    assertThat(deadLetters.get(0).message(), containsString("PT30S"));
  }

  @Test
  public void repeatedMemberNamesAreInvalidJsonAtAnyDepth() {
    String valid = validEvent("dup-0").toString();
    // The same member twice at the top, inside data, and inside an object nested in data.
    String topLevel = valid.replace("\"id\":\"dup-0\"", "\"id\":\"dup-1\",\"id\":\"dup-2\"");
    String inData =
        validEvent("dup-3")
            .toString()
            .replace("\"accountId\":", "\"accountId\":\"acct-other\",\"accountId\":");
    ObjectNode nestedEvent = validEvent("dup-4");
    data(nestedEvent).putObject("extra").put("k", 1);
    String nested = nestedEvent.toString().replace("{\"k\":1}", "{\"k\":1,\"k\":2}");
    assertThat(topLevel, containsString("\"id\":\"dup-1\",\"id\":\"dup-2\""));
    assertThat(inData, containsString("\"accountId\":\"acct-other\",\"accountId\":"));
    assertThat(nested, containsString("{\"k\":1,\"k\":2}"));
    assertRejected(
        DeadLetterReason.INVALID_JSON,
        bad("replay:line 2", bytes(topLevel), "Duplicate field 'id'"),
        bad("replay:line 3", bytes(inData), "Duplicate field 'accountId'"),
        bad("replay:line 4", bytes(nested), "Duplicate field 'k'"));
  }

  @Test
  public void theParserOutsideBeamRejectsRepeatedMemberNamesToo() {
    String twice =
        validEvent("dup-5")
            .toString()
            .replace("\"currency\":", "\"currency\":\"USD\",\"currency\":");
    List<DeadLetter> deadLetters = new ArrayList<>();
    Event event =
        ParseCloudEvents.create()
            .newParser()
            .parse(record("bench:3", bytes(twice)), deadLetters::add);
    assertThat(event, nullValue());
    assertThat(deadLetters.size(), is(1));
    assertThat(deadLetters.get(0).reason(), is(DeadLetterReason.INVALID_JSON));
    assertThat(deadLetters.get(0).message(), containsString("'currency'"));
  }

  @Test
  public void eventTimeBeforeTheSourceTimestampIsDeadLettered() {
    RawRecord early = record("kafka:payments/0@1", bytes(validEvent("ts-early")));
    RawRecord exact = record("kafka:payments/0@2", bytes(validEvent("ts-exact")));
    WithFailures.Result<PCollection<Event>, DeadLetter> result =
        p.apply(
                Create.timestamped(
                        TimestampedValue.of(early, EVENT_TIME.plus(1)),
                        TimestampedValue.of(exact, EVENT_TIME))
                    .withCoder(RawRecord.RawRecordCoder.of()))
            .apply(ParseCloudEvents.create());
    PAssert.that(ids(result.output())).containsInAnyOrder("ts-exact");
    PAssert.that(result.failures())
        .satisfies(
            new ExpectDeadLetters(
                DeadLetterReason.INVALID_TIME,
                ParseCloudEvents.STEP,
                List.of(bad("kafka:payments/0@1", early.payload(), "is before the timestamp"))));
    p.run().waitUntilFinish();
  }

  @Test
  public void unsupportedTypeIsDeadLettered() {
    ObjectNode refund = validEvent("refund-1");
    refund.put("type", "payments.refund.v1");
    assertRejected(
        DeadLetterReason.UNSUPPORTED_TYPE, bad("replay:line 2", refund, "'payments.refund.v1'"));
  }

  @Test
  public void aSourceTheCloudEventsSdkRejectsIsDeadLettered() {
    // The SDK parses source with java.net.URI: a space or a '|' is not allowed in a URI-reference.
    ObjectNode space = validEvent("uri-1");
    space.put("source", "/tidemark/bad source");
    ObjectNode pipe = validEvent("uri-2");
    pipe.put("source", "http://example.com/a|b");
    assertRejected(
        DeadLetterReason.INVALID_CLOUDEVENT,
        bad("replay:line 2", space, "CloudEvents SDK rejected"),
        bad("replay:line 3", pipe, "CloudEvents SDK rejected"));
  }

  @Test
  public void dataAndDataBase64TogetherAreDeadLettered() {
    // The JSON format allows one of the two; the SDK never sees data, so the parser checks this.
    ObjectNode both = validEvent("both-1");
    both.put("data_base64", "e30=");
    assertRejected(
        DeadLetterReason.INVALID_CLOUDEVENT,
        bad("replay:line 2", both, "both data and data_base64"));
  }

  @Test
  public void invalidDataIsDeadLettered() {
    ObjectNode noData = validEvent("data-1");
    noData.remove("data");
    ObjectNode stringData = validEvent("data-2");
    stringData.put("data", "accountId=acct-alice amount=12.30");
    ObjectNode arrayData = validEvent("data-3");
    arrayData.putArray("data").add(data(validEvent("x")));
    assertRejected(
        DeadLetterReason.INVALID_DATA,
        bad("replay:line 2", noData, "no data"),
        bad("replay:line 3", stringData, "not a JSON object"),
        bad("replay:line 4", arrayData, "not a JSON object"));
  }

  @Test
  public void invalidAccountIdIsDeadLettered() {
    ObjectNode missing = validEvent("acct-1");
    data(missing).remove("accountId");
    ObjectNode tooLong = validEvent("acct-2");
    data(tooLong).put("accountId", "a".repeat(ParseCloudEvents.MAX_ACCOUNT_ID_LENGTH + 1));
    ObjectNode empty = validEvent("acct-3");
    data(empty).put("accountId", "");
    assertRejected(
        DeadLetterReason.INVALID_ACCOUNT_ID,
        bad("replay:line 2", missing, "accountId"),
        bad("replay:line 3", tooLong, "129 characters"),
        bad("replay:line 4", empty, "accountId"));
  }

  @Test
  public void anAccountIdOfExactly128CharactersIsAccepted() {
    String longest = "a".repeat(ParseCloudEvents.MAX_ACCOUNT_ID_LENGTH);
    ObjectNode event = validEvent("acct-128");
    data(event).put("accountId", longest);
    WithFailures.Result<PCollection<Event>, DeadLetter> result =
        p.apply(
                Create.of(record("replay:line 1", bytes(event)))
                    .withCoder(RawRecord.RawRecordCoder.of()))
            .apply(ParseCloudEvents.create());
    PAssert.that(result.output().apply(MapElements.into(TypeDescriptors.strings()).via(Event::key)))
        .containsInAnyOrder(longest);
    PAssert.that(result.failures()).empty();
    p.run().waitUntilFinish();
  }

  @Test
  public void invalidAmountIsDeadLettered() {
    ObjectNode asString = validEvent("amount-1");
    data(asString).put("amount", "12.34");
    ObjectNode negative = validEvent("amount-2");
    data(negative).put("amount", new BigDecimal("-1.00"));
    ObjectNode threeDecimals = validEvent("amount-3");
    data(threeDecimals).put("amount", new BigDecimal("12.345"));
    ObjectNode tooLarge = validEvent("amount-4");
    // Long.MAX_VALUE + 1 minor units.
    data(tooLarge).put("amount", new BigDecimal("92233720368547758.08"));
    ObjectNode missing = validEvent("amount-5");
    data(missing).remove("amount");
    assertRejected(
        DeadLetterReason.INVALID_AMOUNT,
        bad("replay:line 2", asString, "not a JSON number"),
        bad("replay:line 3", negative, "negative"),
        bad("replay:line 4", threeDecimals, "more than 2 decimal places"),
        bad("replay:line 5", tooLarge, "too large"),
        bad("replay:line 6", missing, "data.amount"));
  }

  /**
   * Eleven characters of JSON each, a hundred million digits in plain notation: the parser must
   * neither expand them (minutes of CPU, hundreds of megabytes) nor copy them into the message.
   */
  @Test(timeout = 30_000)
  public void amountsWithHugeExponentsAreDeadLetteredQuicklyWithAShortMessage() {
    ObjectNode tiny = validEvent("amount-tiny");
    data(tiny).put("amount", new BigDecimal("1E-99999999"));
    ObjectNode huge = validEvent("amount-huge");
    data(huge).put("amount", new BigDecimal("1E+99999999"));
    assertThat(new String(bytes(tiny), StandardCharsets.UTF_8), containsString("1E-99999999"));
    assertRejected(
        DeadLetterReason.INVALID_AMOUNT,
        bad("replay:line 2", tiny, "more than 2 decimal places"),
        bad("replay:line 3", huge, "too large"));
  }

  @Test
  public void invalidCurrencyIsDeadLettered() {
    ObjectNode usd = validEvent("ccy-1");
    data(usd).put("currency", "USD");
    ObjectNode missing = validEvent("ccy-2");
    data(missing).remove("currency");
    ObjectNode lower = validEvent("ccy-3");
    data(lower).put("currency", "gbp");
    assertRejected(
        DeadLetterReason.INVALID_CURRENCY,
        bad("replay:line 2", usd, "\"USD\" is not one of [GBP]"),
        bad("replay:line 3", missing, "missing"),
        bad("replay:line 4", lower, "\"gbp\""));
  }

  /** A payments spec with a field rule of its own and a field of its own, checked in order. */
  /** The bundled payments spec with each {@code fromTo} pair's text replaced. */
  private static PipelineSpec paymentsWith(String... fromTo) throws IOException {
    String yaml = SpecLoader.bundledText("payments");
    for (int i = 0; i < fromTo.length; i += 2) {
      assertThat(yaml, containsString(fromTo[i]));
      yaml = yaml.replace(fromTo[i], fromTo[i + 1]);
    }
    return SpecLoader.parse(yaml, "own-payments.yaml");
  }

  private static PipelineSpec.Events ownPaymentsEvents() throws IOException {
    return paymentsWith(
            "accountId:  {type: string, maxLength: 128, reason: invalid_account_id}",
            "accountId:  {type: string, maxLength: 12, reason: invalid_account_id}\n"
                + "    channel:    {type: enum, values: [web, pos], reason: invalid_channel}")
        .events();
  }

  @Test
  public void theSpecsFieldsAreCheckedIncludingFieldsOfItsOwn() throws IOException {
    ObjectNode web = validEvent("own-1");
    data(web).put("channel", "web");
    ObjectNode noChannel = validEvent("own-2");
    ObjectNode phone = validEvent("own-3");
    data(phone).put("channel", "phone");
    // accountId is checked first: a long id and a bad channel fail as the account.
    ObjectNode longAccount = validEvent("own-4");
    data(longAccount).put("accountId", "account-13-ch");
    data(longAccount).put("channel", "phone");

    WithFailures.Result<PCollection<Event>, DeadLetter> result =
        p.apply(
                Create.of(
                        record("replay:line 1", bytes(web)),
                        record("replay:line 2", bytes(noChannel)),
                        record("replay:line 3", bytes(phone)),
                        record("replay:line 4", bytes(longAccount)))
                    .withCoder(RawRecord.RawRecordCoder.of()))
            .apply(ParseCloudEvents.create().withEvents(ownPaymentsEvents()));
    PAssert.that(ids(result.output())).containsInAnyOrder("own-1");
    PAssert.that(
            result
                .failures()
                .apply(
                    MapElements.into(TypeDescriptors.strings())
                        .via(d -> d.origin() + " " + d.reasonCode() + ": " + d.message())))
        .containsInAnyOrder(
            "replay:line 2 invalid_channel: data.channel is missing",
            "replay:line 3 invalid_channel: data.channel \"phone\" is not one of [web, pos]",
            "replay:line 4 invalid_account_id: data.accountId is 13 characters, over the limit of"
                + " 12");
    p.run().waitUntilFinish();
  }

  /** Payments whose event time is {@code data.paidAt}, as {@code clocks.eventTime: paidAt}. */
  private static ParseCloudEvents.Parser paidAtParser() throws IOException {
    String country = "country:    {type: country, optional: true, reason: invalid_country}";
    PipelineSpec spec =
        paymentsWith(
            country,
            country + "\n    paidAt:     {type: timestamp, reason: invalid_paid_at}",
            "eventTime: time",
            "eventTime: paidAt");
    return ParseCloudEvents.create()
        .withEvents(spec.events())
        .withEventTime(spec.clocks().eventTime())
        .newParser();
  }

  @Test
  public void theEventTimeCanBeATimestampFieldOfData() throws IOException {
    ParseCloudEvents.Parser parser = paidAtParser();
    List<DeadLetter> deadLetters = new ArrayList<>();
    // The field, not the attribute, is the event time; the attribute may be left out.
    ObjectNode both = validEvent("paid-1");
    data(both).put("paidAt", "2026-01-01T00:07:30Z");
    ObjectNode fieldOnly = validEvent("paid-2");
    fieldOnly.remove("time");
    data(fieldOnly).put("paidAt", "2026-01-01T00:02:00+01:00");
    Event first = parser.parse(record("replay:line 1", bytes(both)), deadLetters::add);
    Event second = parser.parse(record("replay:line 2", bytes(fieldOnly)), deadLetters::add);
    assertThat(deadLetters.toString(), deadLetters, empty());
    assertThat(first.eventTime(), is(Instant.parse("2026-01-01T00:07:30Z")));
    assertThat(second.eventTime(), is(Instant.parse("2025-12-31T23:02:00Z")));

    // The field's own reason when it is missing or not a timestamp; the attribute, when present,
    // must still be RFC 3339; the field's time is held to the future-skew bound and the limits.
    ObjectNode missing = validEvent("paid-3");
    ObjectNode notATime = validEvent("paid-4");
    data(notATime).put("paidAt", "yesterday");
    ObjectNode badAttribute = validEvent("paid-5");
    badAttribute.put("time", "yesterday");
    data(badAttribute).put("paidAt", "2026-01-01T00:07:30Z");
    ObjectNode future = validEvent("paid-6");
    data(future).put("paidAt", "2026-01-01T00:20:00.001Z");
    ObjectNode ancient = validEvent("paid-7");
    data(ancient).put("paidAt", "0001-01-01T00:00:00Z");
    int line = 3;
    for (ObjectNode event : List.of(missing, notATime, badAttribute, future, ancient)) {
      assertThat(
          parser.parse(record("replay:line " + line++, bytes(event)), deadLetters::add),
          nullValue());
    }
    List<String> letters = new ArrayList<>();
    deadLetters.forEach(d -> letters.add(d.reasonCode() + ": " + d.message()));
    assertThat(
        letters,
        is(
            List.of(
                "invalid_paid_at: data.paidAt is missing",
                "invalid_paid_at: data.paidAt \"yesterday\" is not an RFC 3339 timestamp such as"
                    + " 2026-01-01T00:00:00Z",
                "invalid_time: time 'yesterday' is not an RFC 3339 timestamp such as"
                    + " 2026-01-01T00:00:00Z",
                "time_in_future: event time 2026-01-01T00:20:00.001Z is more than the allowed skew"
                    + " of PT10M after its ingestion time 2026-01-01T00:10:00.000Z (a producer"
                    + " clock ahead?); fix the producer's clock or raise --maxFutureSkew",
                "invalid_time: data.paidAt '0001-01-01T00:00:00Z' is out of range: event times"
                    + " must lie within 0001-01-02T00:00:00.000Z .. 9999-12-30T23:59:59.999Z, so"
                    + " that the event's windows and clocks fit every sink (BigQuery TIMESTAMP"
                    + " holds years 0001-9999)")));
  }

  @Test
  public void anEventTimeThatIsNotARequiredTimestampFieldIsRefused() {
    IllegalArgumentException refused =
        assertThrows(
            IllegalArgumentException.class,
            () -> ParseCloudEvents.create().withEventTime("merchantId").newParser());
    assertThat(
        refused.getMessage(),
        containsString(
            "the event time 'merchantId' is neither the attribute 'time' nor a required"
                + " timestamp field of data"));
  }

  @Test
  public void anotherSpecsEventsCarryItsFieldsAndAreKeyedByItsKey() throws IOException {
    PipelineSpec logins = SpecLoader.loadBundled("logins");
    ParseCloudEvents.Parser parser =
        ParseCloudEvents.create().withEvents(logins.events()).newParser();
    List<DeadLetter> deadLetters = new ArrayList<>();
    String login =
        "{\"specversion\":\"1.0\",\"id\":\"login-1\",\"source\":\"/auth/web\","
            + "\"type\":\"auth.login.v1\",\"time\":\""
            + EVENT_TIME
            + "\","
            + "\"data\":{\"userId\":\"user-7\",\"ip\":\"192.0.2.1\",\"success\":false,"
            + "\"country\":\"FR\"}}";
    Event event =
        parser.parse(
            record("replay:line 1", login.getBytes(StandardCharsets.UTF_8)), deadLetters::add);
    assertThat(deadLetters.toString(), deadLetters.isEmpty(), is(true));
    assertThat(event.key(), is("user-7"));
    FieldParser fields = FieldParser.of(logins.events());
    assertThat(event.fields().getString(fields.indexOf("ip")), is("192.0.2.1"));
    assertThat(event.fields().getLong(fields.indexOf("success")), is(0L));
    assertThat(event.fields().isPresent(fields.indexOf("device")), is(false));
    assertThat(CoderUtils.clone(Event.EventCoder.of(), event), is(event));

    // A payment is not a login: its type, then its fields, are refused with the spec's reasons.
    String noUser = login.replace("\"userId\":\"user-7\",", "");
    assertThat(
        parser.parse(
            record("replay:line 2", noUser.getBytes(StandardCharsets.UTF_8)), deadLetters::add),
        is((Event) null));
    assertThat(deadLetters.get(0).reasonCode(), is("invalid_user_id"));
  }

  @Test
  public void invalidMerchantIdIsDeadLettered() {
    ObjectNode number = validEvent("merchant-1");
    data(number).put("merchantId", 42);
    ObjectNode empty = validEvent("merchant-2");
    data(empty).put("merchantId", "");
    assertRejected(
        DeadLetterReason.INVALID_MERCHANT_ID,
        bad("replay:line 2", number, "merchantId"),
        bad("replay:line 3", empty, "merchantId"));
  }

  @Test
  public void invalidCountryIsDeadLettered() {
    ObjectNode alpha3 = validEvent("country-1");
    data(alpha3).put("country", "GBR");
    ObjectNode unassigned = validEvent("country-2");
    data(unassigned).put("country", "XX");
    ObjectNode lower = validEvent("country-3");
    data(lower).put("country", "gb");
    assertRejected(
        DeadLetterReason.INVALID_COUNTRY,
        bad("replay:line 2", alpha3, "\"GBR\""),
        bad("replay:line 3", unassigned, "\"XX\""),
        bad("replay:line 4", lower, "\"gb\""));
  }

  @Test
  public void aRecordItsSourceRejectedIsDeadLetteredAtTheSource() {
    // A replay-file line that looks like a directive the source could not apply.
    byte[] directive = bytes("#!advanceWatermark to=not-a-time");
    assertRejected(
        ParseCloudEvents.create(),
        DeadLetterReason.INVALID_DIRECTIVE,
        "Source",
        new Bad(
            "replay:line 7",
            directive,
            "cannot parse to=not-a-time",
            DeadLetterReason.INVALID_DIRECTIVE));
  }

  @Test
  public void aSourceRejectionWinsEvenWhenThePayloadIsAValidEvent() {
    byte[] valid = bytes(validEvent("rejected-1"));
    assertRejected(
        ParseCloudEvents.create(),
        DeadLetterReason.INVALID_DIRECTIVE,
        "Source",
        new Bad("replay:line 8", valid, "directive", DeadLetterReason.INVALID_DIRECTIVE));
  }

  /** Checks that each source-rejected record keeps its source's reason and message. */
  private static final class ExpectSourceReasons
      implements SerializableFunction<Iterable<DeadLetter>, Void> {
    @Override
    public Void apply(Iterable<DeadLetter> input) {
      Map<DeadLetterReason, DeadLetter> byReason = new EnumMap<>(DeadLetterReason.class);
      for (DeadLetter deadLetter : input) {
        assertThat(
            deadLetter.toString(), byReason.put(deadLetter.reason(), deadLetter), nullValue());
        assertThat(deadLetter.step(), is("Source"));
        assertThat(deadLetter.origin(), is("source:" + deadLetter.reason().code()));
        assertThat(deadLetter.message(), is("rejected by the source: " + deadLetter.reason()));
        assertArrayEquals(bytes("line for " + deadLetter.reason()), deadLetter.payload());
      }
      assertThat(byReason.keySet(), is(EnumSet.allOf(DeadLetterReason.class)));
      return null;
    }
  }

  @Test
  public void everyReasonASourceGivesIsKeptWithStepSource() {
    List<RawRecord> records = new ArrayList<>();
    records.add(goodRecord());
    for (DeadLetterReason reason : DeadLetterReason.values()) {
      records.add(
          RawRecord.rejected(
              bytes("line for " + reason),
              INGESTED,
              "source:" + reason.code(),
              reason,
              "rejected by the source: " + reason));
    }
    WithFailures.Result<PCollection<Event>, DeadLetter> result =
        p.apply(Create.of(records).withCoder(RawRecord.RawRecordCoder.of()))
            .apply(ParseCloudEvents.create());
    PAssert.that(ids(result.output())).containsInAnyOrder(GOOD_ID);
    PAssert.that(result.failures()).satisfies(new ExpectSourceReasons());

    PipelineResult run = p.run();
    run.waitUntilFinish();
    for (DeadLetterReason reason : DeadLetterReason.values()) {
      assertThat(
          reason.code(),
          TestEvents.counter(run, TidemarkMetrics.DEAD_LETTERS_PREFIX + reason.code()),
          is(1L));
    }
    assertThat(
        TestEvents.counter(run, TidemarkMetrics.DEAD_LETTERS),
        is((long) DeadLetterReason.values().length));
  }

  // ---------------------------------------------------------------------------------------------
  // Valid events

  /** Emits each event's id with the timestamp the parser gave it. */
  private static final class IdAndTimestampFn extends DoFn<Event, KV<String, Instant>> {
    @ProcessElement
    public void processElement(
        @Element Event event,
        @Timestamp Instant timestamp,
        OutputReceiver<KV<String, Instant>> out) {
      out.output(KV.of(event.id(), timestamp));
    }
  }

  /** Checks the single parsed event field by field. */
  private static final class ExpectParsedEvent
      implements SerializableFunction<Iterable<Event>, Void> {
    @Override
    public Void apply(Iterable<Event> input) {
      List<Event> events = new ArrayList<>();
      input.forEach(events::add);
      assertThat(events.toString(), events.size(), is(1));
      Event event = events.get(0);
      assertThat(event.source(), is(TestEvents.SOURCE));
      assertThat(event.id(), is(GOOD_ID));
      assertThat(event.type(), is(ParseCloudEvents.DEFAULT_TYPE));
      assertThat(event.eventTime(), is(EVENT_TIME));
      assertThat(event.ingestionTime(), is(INGESTED));
      assertThat(event.key(), is(TestEvents.Account.ALICE.id));
      assertThat(TestEvents.PAYMENT.amountCents(event), is(1230L));
      assertThat(TestEvents.PAYMENT.currency(event), is("GBP"));
      assertThat(TestEvents.PAYMENT.merchantId(event), is("m1"));
      assertThat(TestEvents.PAYMENT.country(event), is("GB"));
      assertThat(event.fingerprint().length, is(16));
      return null;
    }
  }

  @Test
  public void aValidEventParsesIntoExactFieldsAtItsEventTime() {
    WithFailures.Result<PCollection<Event>, DeadLetter> result =
        p.apply(Create.of(goodRecord()).withCoder(RawRecord.RawRecordCoder.of()))
            .apply(ParseCloudEvents.create());

    PAssert.that(result.output()).satisfies(new ExpectParsedEvent());
    PAssert.that(
            result
                .output()
                .apply(ParDo.of(new IdAndTimestampFn()))
                .setCoder(KvCoder.of(StringUtf8Coder.of(), InstantCoder.of())))
        .containsInAnyOrder(List.of(KV.of(GOOD_ID, EVENT_TIME)));
    PAssert.that(result.failures()).empty();

    PipelineResult run = p.run();
    run.waitUntilFinish();
    assertThat(TestEvents.counter(run, TidemarkMetrics.READ), is(1L));
    assertThat(TestEvents.counter(run, TidemarkMetrics.VALID), is(1L));
    assertThat(TestEvents.counter(run, TidemarkMetrics.DEAD_LETTERS), is(0L));
  }

  @Test
  public void amountsBecomeExactMinorUnitsAndOptionalFieldsMayBeAbsent() {
    ObjectNode integer = validEvent("int-12");
    data(integer).put("amount", 12);
    ObjectNode oneDecimal = validEvent("dec-12.5");
    data(oneDecimal).put("amount", new BigDecimal("12.5"));
    ObjectNode zero = validEvent("zero");
    data(zero).put("amount", 0);
    ObjectNode trailingZeros = validEvent("dec-7.000");
    data(trailingZeros).put("amount", new BigDecimal("7.000"));
    ObjectNode exponent = validEvent("exp-1.5E1");
    ObjectNode labelled = validEvent("labelled");
    data(labelled).put("label", "coffee");
    data(labelled).putObject("meta").put("channel", "web");
    ObjectNode bare = validEvent("bare");
    data(bare).remove("merchantId");
    data(bare).putNull("country");
    ObjectNode offset = validEvent("offset");
    offset.put("time", "2026-01-01T01:05:00+01:00");
    String exponentJson =
        exponent.toString().replace("\"amount\":12.30", "\"amount\":1.5E1"); // 15.00
    assertThat(exponentJson, containsString("1.5E1"));

    WithFailures.Result<PCollection<Event>, DeadLetter> result =
        p.apply(
                Create.of(
                        record("replay:line 1", bytes(integer)),
                        record("replay:line 2", bytes(oneDecimal)),
                        record("replay:line 3", bytes(zero)),
                        record("replay:line 4", bytes(trailingZeros)),
                        record("replay:line 5", bytes(exponentJson)),
                        record("replay:line 6", bytes(labelled)),
                        record("replay:line 7", bytes(bare)),
                        record("replay:line 8", bytes(offset)))
                    .withCoder(RawRecord.RawRecordCoder.of()))
            .apply(ParseCloudEvents.create());

    PAssert.that(
            result
                .output()
                .apply(
                    "Summaries",
                    MapElements.into(TypeDescriptors.strings())
                        .via(
                            e ->
                                e.id()
                                    + " "
                                    + TestEvents.PAYMENT.amountCents(e)
                                    + " "
                                    + TestEvents.PAYMENT.merchantId(e)
                                    + " "
                                    + TestEvents.PAYMENT.country(e)
                                    + " "
                                    + e.eventTime())))
        .containsInAnyOrder(
            "int-12 1200 m1 GB 2026-01-01T00:05:00.000Z",
            "dec-12.5 1250 m1 GB 2026-01-01T00:05:00.000Z",
            "zero 0 m1 GB 2026-01-01T00:05:00.000Z",
            "dec-7.000 700 m1 GB 2026-01-01T00:05:00.000Z",
            "exp-1.5E1 1500 m1 GB 2026-01-01T00:05:00.000Z",
            "labelled 1230 m1 GB 2026-01-01T00:05:00.000Z",
            "bare 1230 null null 2026-01-01T00:05:00.000Z",
            "offset 1230 m1 GB 2026-01-01T00:05:00.000Z");
    PAssert.that(result.failures()).empty();
    p.run().waitUntilFinish();
  }

  /** Collects the fingerprints by id and compares the pairs that must, and must not, match. */
  private static final class ExpectFingerprints
      implements SerializableFunction<Iterable<Event>, Void> {
    @Override
    public Void apply(Iterable<Event> input) {
      Map<String, byte[]> byId = new HashMap<>();
      input.forEach(e -> byId.put(e.id(), e.fingerprint()));
      assertThat(byId.keySet(), is(Set.of("base", "reordered", "zeros", "more", "labelled")));
      assertArrayEquals(
          "same content, different key order", byId.get("base"), byId.get("reordered"));
      assertArrayEquals("12.30 and 12.3 are one amount", byId.get("base"), byId.get("zeros"));
      assertThat("different amount", Arrays.equals(byId.get("base"), byId.get("more")), is(false));
      assertThat(
          "an extra data field is content",
          Arrays.equals(byId.get("base"), byId.get("labelled")),
          is(false));
      return null;
    }
  }

  @Test
  public void fingerprintsFollowContentNotKeyOrderOrIdentity() {
    String base =
        "{\"specversion\":\"1.0\",\"id\":\"base\",\"source\":\"/tidemark/test\","
            + "\"type\":\"payments.transaction.v1\",\"time\":\"2026-01-01T00:05:00Z\","
            + "\"data\":{\"accountId\":\"acct-alice\",\"amount\":12.30,\"currency\":\"GBP\","
            + "\"merchantId\":\"m1\",\"country\":\"GB\"}}";
    // Same content, a different id and source (identity is not content), keys in another order.
    String reordered =
        "{\"data\":{\"country\":\"GB\",\"merchantId\":\"m1\",\"currency\":\"GBP\","
            + "\"amount\":12.30,\"accountId\":\"acct-alice\"},"
            + "\"time\":\"2026-01-01T00:05:00Z\",\"type\":\"payments.transaction.v1\","
            + "\"source\":\"/tidemark/other\",\"id\":\"reordered\",\"specversion\":\"1.0\"}";
    String zeros = base.replace("\"id\":\"base\"", "\"id\":\"zeros\"").replace("12.30", "12.3");
    String more = base.replace("\"id\":\"base\"", "\"id\":\"more\"").replace("12.30", "12.31");
    String labelled =
        base.replace("\"id\":\"base\"", "\"id\":\"labelled\"")
            .replace("\"country\":\"GB\"", "\"country\":\"GB\",\"label\":\"coffee\"");

    WithFailures.Result<PCollection<Event>, DeadLetter> result =
        p.apply(
                Create.of(
                        record("replay:line 1", bytes(base)),
                        record("replay:line 2", bytes(reordered)),
                        record("replay:line 3", bytes(zeros)),
                        record("replay:line 4", bytes(more)),
                        record("replay:line 5", bytes(labelled)))
                    .withCoder(RawRecord.RawRecordCoder.of()))
            .apply(ParseCloudEvents.create());
    PAssert.that(result.output()).satisfies(new ExpectFingerprints());
    PAssert.that(result.failures()).empty();
    p.run().waitUntilFinish();
  }

  @Test
  public void configuredTypesAndCurrencyReplaceTheDefaults() {
    ObjectNode refundEur = validEvent("refund-eur");
    refundEur.put("type", "payments.refund.v1");
    data(refundEur).put("currency", "EUR");
    ObjectNode transactionEur = validEvent("transaction-eur");
    data(transactionEur).put("currency", "EUR");
    ObjectNode transactionGbp = validEvent("transaction-gbp");

    WithFailures.Result<PCollection<Event>, DeadLetter> result =
        p.apply(
                Create.of(
                        record("replay:line 1", bytes(refundEur)),
                        record("replay:line 2", bytes(transactionEur)),
                        record("replay:line 3", bytes(transactionGbp)))
                    .withCoder(RawRecord.RawRecordCoder.of()))
            .apply(
                ParseCloudEvents.create()
                    .withAllowedTypes(Set.of(ParseCloudEvents.DEFAULT_TYPE, "payments.refund.v1"))
                    .withCurrency("EUR"));
    PAssert.that(
            result
                .output()
                .apply(
                    MapElements.into(TypeDescriptors.strings())
                        .via(e -> e.id() + " " + e.type() + " " + TestEvents.PAYMENT.currency(e))))
        .containsInAnyOrder(
            "refund-eur payments.refund.v1 EUR", "transaction-eur payments.transaction.v1 EUR");
    PAssert.that(reasons(result.failures())).containsInAnyOrder("invalid_currency");
    p.run().waitUntilFinish();
  }

  // ---------------------------------------------------------------------------------------------
  // Dead-letter JSON

  /** Checks the JSON line of each dead letter against its record. */
  private static final class ExpectDeadLetterJson
      implements SerializableFunction<Iterable<DeadLetter>, Void> {
    private final byte[] truncated;
    private final byte[] invalidUtf8;

    ExpectDeadLetterJson(byte[] truncated, byte[] invalidUtf8) {
      this.truncated = truncated;
      this.invalidUtf8 = invalidUtf8;
    }

    @Override
    public Void apply(Iterable<DeadLetter> input) {
      Map<String, JsonNode> byOrigin = new HashMap<>();
      for (DeadLetter deadLetter : input) {
        try {
          JsonNode json = Json.MAPPER.readTree(deadLetter.toJson());
          byOrigin.put(json.get("origin").asText(), json);
        } catch (JsonProcessingException e) {
          throw new AssertionError("dead letter is not one JSON object: " + deadLetter, e);
        }
      }
      assertThat(byOrigin.keySet(), is(Set.of("replay:line 2", "replay:line 3")));

      JsonNode json = byOrigin.get("replay:line 2");
      assertThat(json.get("reason").asText(), is("invalid_json"));
      assertThat(json.get("message").asText(), containsString("not valid JSON"));
      assertThat(json.get("step").asText(), is(ParseCloudEvents.STEP));
      assertThat(json.get("payload").asText(), is(new String(truncated, StandardCharsets.UTF_8)));
      assertThat(json.has("payloadBase64"), is(false));
      assertThat("the parser exception is kept", json.has("exception"), is(true));

      JsonNode binary = byOrigin.get("replay:line 3");
      assertThat(binary.get("reason").asText(), is("invalid_utf8"));
      assertThat(binary.get("message").asText(), containsString("not valid UTF-8"));
      assertThat(binary.get("step").asText(), is(ParseCloudEvents.STEP));
      assertThat(binary.has("payload"), is(false));
      assertArrayEquals(
          invalidUtf8, Base64.getDecoder().decode(binary.get("payloadBase64").asText()));
      return null;
    }
  }

  @Test
  public void deadLettersRenderAsJsonWithTheOriginalBytes() {
    byte[] truncated = bytes("{\"specversion\":\"1.0\",\"id\":\"é\",\"data\":{\"amount\":1");
    byte[] invalidUtf8 = {'{', '"', 'a', '"', ':', '"', (byte) 0xC3, (byte) 0x28, '"', '}'};
    WithFailures.Result<PCollection<Event>, DeadLetter> result =
        p.apply(
                Create.of(record("replay:line 2", truncated), record("replay:line 3", invalidUtf8))
                    .withCoder(RawRecord.RawRecordCoder.of()))
            .apply(ParseCloudEvents.create());
    PAssert.that(result.output()).empty();
    PAssert.that(result.failures()).satisfies(new ExpectDeadLetterJson(truncated, invalidUtf8));
    p.run().waitUntilFinish();
  }

  // ---------------------------------------------------------------------------------------------
  // Builder validation

  @Test
  public void builderRejectsSettingsItCannotHonourWithTheMethodToFix() {
    IllegalArgumentException currency =
        assertThrows(
            IllegalArgumentException.class, () -> ParseCloudEvents.create().withCurrency("gbp"));
    assertThat(currency.getMessage(), containsString("withCurrency"));
    assertThat(currency.getMessage(), containsString("'gbp'"));
    assertThrows(
        IllegalArgumentException.class, () -> ParseCloudEvents.create().withCurrency("POUND"));
    assertThrows(
        IllegalArgumentException.class, () -> ParseCloudEvents.create().withCurrency(null));

    IllegalArgumentException size =
        assertThrows(
            IllegalArgumentException.class, () -> ParseCloudEvents.create().withMaxEventBytes(1));
    assertThat(size.getMessage(), containsString("withMaxEventBytes"));

    IllegalArgumentException types =
        assertThrows(
            IllegalArgumentException.class,
            () -> ParseCloudEvents.create().withAllowedTypes(Set.of()));
    assertThat(types.getMessage(), containsString("withAllowedTypes"));
    assertThrows(
        IllegalArgumentException.class,
        () -> ParseCloudEvents.create().withAllowedTypes(Set.of("")));
    assertThrows(
        IllegalArgumentException.class, () -> ParseCloudEvents.create().withAllowedTypes(null));

    IllegalArgumentException skew =
        assertThrows(
            IllegalArgumentException.class,
            () -> ParseCloudEvents.create().withMaxFutureSkew(org.joda.time.Duration.millis(-1)));
    assertThat(skew.getMessage(), containsString("withMaxFutureSkew"));
    assertThrows(
        IllegalArgumentException.class, () -> ParseCloudEvents.create().withMaxFutureSkew(null));
  }

  // ---------------------------------------------------------------------------------------------
  // Fuzz: every record is counted exactly once

  private static final int FUZZ_LINES = 3000;
  private static final long FUZZ_SEED = 20260101L;
  private static final int FUZZ_MAX_EVENT_BYTES = 1024;

  /** The corpus's valid event times lie up to a day after {@link #INGESTED}. */
  private static final org.joda.time.Duration FUZZ_MAX_FUTURE_SKEW =
      org.joda.time.Duration.standardDays(2);

  /** Deterministic malformed and valid lines derived from a valid event template. */
  private static final class FuzzCorpus {
    private static final String[] TOP_FIELDS = {
      "specversion", "id", "source", "type", "time", "datacontenttype", "data"
    };
    private static final String[] DATA_FIELDS = {
      "accountId", "amount", "currency", "merchantId", "country"
    };

    /** Strings that are wrong for at least one field: each is valid for some other field. */
    private static final String[] BAD_VALUES = {
      "",
      " ",
      "0.3",
      "1.0",
      "yesterday",
      "USD",
      "XX",
      "GBR",
      "gb",
      "payments.refund.v1",
      "a b",
      "/ok",
      "http://[bad",
      "12.34",
      "-1",
      "2026-13-01T00:00:00Z",
      "+294247-01-01T00:00:00Z",
      "2099-01-01T00:00:00Z",
      "\u00fc".repeat(130),
      "x".repeat(200),
      "\u0000",
      "\uD83D\uDE00"
    };

    final List<RawRecord> records = new ArrayList<>();
    final Set<String> untouchedValidOrigins = new HashSet<>();
    final Set<String> sourceRejectedOrigins = new HashSet<>();
    private final Random random;

    FuzzCorpus(long seed, int lines) {
      random = new Random(seed);
      for (int i = 0; i < lines; i++) {
        String origin = "fuzz:line " + i;
        ObjectNode template = randomValidEvent("fuzz-" + i);
        byte[] line;
        switch (random.nextInt(8)) {
          case 0:
            line = bytes(template);
            untouchedValidOrigins.add(origin);
            break;
          case 1:
            line = mutateBytes(bytes(template));
            break;
          case 2:
            byte[] whole = bytes(template);
            line = Arrays.copyOf(whole, random.nextInt(whole.length));
            break;
          case 3:
            deleteField(template);
            line = bytes(template);
            break;
          case 4:
            swapType(template);
            line = bytes(template);
            break;
          case 5:
            line = new byte[random.nextInt(120)];
            random.nextBytes(line);
            break;
          case 6:
            replaceValue(template);
            line = bytes(template);
            break;
          default:
            if (random.nextBoolean()) {
              data(template).put("label", "x".repeat(FUZZ_MAX_EVENT_BYTES + random.nextInt(500)));
              line = bytes(template);
              break;
            }
            sourceRejectedOrigins.add(origin);
            records.add(
                RawRecord.rejected(
                    bytes("#!pause " + random.nextInt()),
                    INGESTED,
                    origin,
                    DeadLetterReason.INVALID_DIRECTIVE,
                    "unknown directive"));
            continue;
        }
        records.add(record(origin, line));
      }
    }

    private ObjectNode randomValidEvent(String id) {
      ObjectNode event = validEvent(id);
      event.put("time", EVENT_TIME.plus(random.nextInt(86_400_000)).toString());
      ObjectNode data = data(event);
      data.put("accountId", "acct-" + random.nextInt(50));
      data.put("amount", BigDecimal.valueOf(random.nextInt(1_000_000), random.nextInt(3)));
      if (random.nextBoolean()) {
        data.put("label", "note " + random.nextInt(1000));
      }
      return event;
    }

    private byte[] mutateBytes(byte[] line) {
      int mutations = 1 + random.nextInt(4);
      for (int m = 0; m < mutations; m++) {
        line[random.nextInt(line.length)] = (byte) random.nextInt(256);
      }
      return line;
    }

    private ObjectNode randomContainer(ObjectNode event) {
      return random.nextBoolean() ? event : data(event);
    }

    private String randomField(ObjectNode container) {
      String[] fields = container.has("specversion") ? TOP_FIELDS : DATA_FIELDS;
      return fields[random.nextInt(fields.length)];
    }

    private void deleteField(ObjectNode event) {
      ObjectNode container = randomContainer(event);
      container.remove(randomField(container));
    }

    private void swapType(ObjectNode event) {
      ObjectNode container = randomContainer(event);
      String field = randomField(container);
      JsonNode old = container.path(field).deepCopy();
      switch (random.nextInt(7)) {
        case 0:
          container.put(field, random.nextInt(1000) - 500);
          break;
        case 1:
          container.put(field, new BigDecimal("1e" + (random.nextInt(40) - 20)));
          break;
        case 2:
          container.put(field, old.toString());
          break;
        case 3:
          container.put(field, random.nextBoolean());
          break;
        case 4:
          container.putNull(field);
          break;
        case 5:
          container.putArray(field).add(old);
          break;
        default:
          container.putObject(field).set("value", old);
          break;
      }
    }

    private void replaceValue(ObjectNode event) {
      ObjectNode container = randomContainer(event);
      container.put(randomField(container), BAD_VALUES[random.nextInt(BAD_VALUES.length)]);
    }
  }

  /** Counts each outcome ("valid" or a reason code) in this test's own namespace. */
  private static final class CountOutcomeFn extends DoFn<String, Void> {
    @ProcessElement
    public void processElement(@Element String outcome) {
      Counter counter = Metrics.counter(TEST_NAMESPACE, "outcome." + outcome);
      counter.inc();
    }
  }

  /** Checks each dead letter against the line it came from. */
  private static final class ExpectFuzzDeadLetters
      implements SerializableFunction<Iterable<DeadLetter>, Void> {
    private final Map<String, byte[]> payloadsByOrigin;
    private final Set<String> untouchedValidOrigins;
    private final Set<String> sourceRejectedOrigins;

    ExpectFuzzDeadLetters(
        Map<String, byte[]> payloadsByOrigin,
        Set<String> untouchedValidOrigins,
        Set<String> sourceRejectedOrigins) {
      this.payloadsByOrigin = payloadsByOrigin;
      this.untouchedValidOrigins = untouchedValidOrigins;
      this.sourceRejectedOrigins = sourceRejectedOrigins;
    }

    @Override
    public Void apply(Iterable<DeadLetter> input) {
      Set<String> seen = new HashSet<>();
      List<String> unexpected = new ArrayList<>();
      for (DeadLetter deadLetter : input) {
        assertThat("one dead letter per line", seen.add(deadLetter.origin()), is(true));
        assertThat(
            "a valid line was rejected: " + deadLetter,
            untouchedValidOrigins.contains(deadLetter.origin()),
            is(false));
        byte[] payload = payloadsByOrigin.get(deadLetter.origin());
        assertThat("unknown origin " + deadLetter.origin(), payload, not(nullValue()));
        assertArrayEquals(deadLetter.toString(), payload, deadLetter.payload());
        boolean atSource = sourceRejectedOrigins.contains(deadLetter.origin());
        assertThat(deadLetter.step(), is(atSource ? "Source" : ParseCloudEvents.STEP));
        assertThat(
            deadLetter.toString(),
            deadLetter.reason() == DeadLetterReason.INVALID_DIRECTIVE,
            is(atSource));
        assertThat(deadLetter.message().length(), lessThanOrEqualTo(MAX_MESSAGE_LENGTH));
        if (deadLetter.message().startsWith("unexpected parser error")) {
          unexpected.add(deadLetter.toString());
        }
        // Every dead letter renders as one JSON line.
        assertThat(deadLetter.toJson(), not(containsString("\n")));
      }
      assertThat("records the parser failed on instead of classifying", unexpected, is(empty()));
      return null;
    }
  }

  @Test
  public void fuzzedRecordsAreEachCountedExactlyOnce() {
    FuzzCorpus corpus = new FuzzCorpus(FUZZ_SEED, FUZZ_LINES);
    Map<String, byte[]> payloadsByOrigin = new HashMap<>();
    Set<String> untouchedValidIds = new HashSet<>();
    for (RawRecord record : corpus.records) {
      payloadsByOrigin.put(record.origin(), record.payload());
      if (corpus.untouchedValidOrigins.contains(record.origin())) {
        untouchedValidIds.add("fuzz-" + record.origin().substring("fuzz:line ".length()));
      }
    }
    assertThat(payloadsByOrigin.size(), is(FUZZ_LINES));

    WithFailures.Result<PCollection<Event>, DeadLetter> result =
        p.apply(Create.of(corpus.records).withCoder(RawRecord.RawRecordCoder.of()))
            .apply(
                ParseCloudEvents.create()
                    .withMaxEventBytes(FUZZ_MAX_EVENT_BYTES)
                    .withMaxFutureSkew(FUZZ_MAX_FUTURE_SKEW));

    PCollection<String> outcomes =
        PCollectionList.of(
                result
                    .output()
                    .apply(
                        "ValidOutcome",
                        MapElements.into(TypeDescriptors.strings()).via(e -> "valid")))
            .and(reasons(result.failures()))
            .apply(Flatten.pCollections());
    outcomes.apply(ParDo.of(new CountOutcomeFn()));
    PAssert.thatSingleton(outcomes.apply("CountOutcomes", Count.globally()))
        .isEqualTo((long) FUZZ_LINES);
    PAssert.that(result.failures())
        .satisfies(
            new ExpectFuzzDeadLetters(
                payloadsByOrigin,
                new HashSet<>(corpus.untouchedValidOrigins),
                new HashSet<>(corpus.sourceRejectedOrigins)));
    PAssert.that(ids(result.output())).satisfies(new ContainsAll(new HashSet<>(untouchedValidIds)));

    PipelineResult run = p.run();
    run.waitUntilFinish();

    long read = TestEvents.counter(run, TidemarkMetrics.READ);
    long valid = TestEvents.counter(run, TidemarkMetrics.VALID);
    long deadLetters = TestEvents.counter(run, TidemarkMetrics.DEAD_LETTERS);
    assertThat("read", read, is((long) FUZZ_LINES));
    assertThat("read = valid + deadLetters", valid + deadLetters, is(read));
    assertThat("valid equals the events output", testCounter(run, "outcome.valid"), is(valid));

    long perReasonTotal = 0;
    Set<DeadLetterReason> reasonsSeen = EnumSet.noneOf(DeadLetterReason.class);
    for (DeadLetterReason reason : DeadLetterReason.values()) {
      long count = TestEvents.counter(run, TidemarkMetrics.DEAD_LETTERS_PREFIX + reason.code());
      assertThat(
          "deadLetters." + reason.code() + " equals the failures output with that reason",
          testCounter(run, "outcome." + reason.code()),
          is(count));
      perReasonTotal += count;
      if (count > 0) {
        reasonsSeen.add(reason);
      }
    }
    assertThat("sum of deadLetters.<reason> = deadLetters", perReasonTotal, is(deadLetters));

    // The corpus must exercise both outputs and many reasons, or the identity proves little.
    assertThat(valid, greaterThanOrEqualTo((long) untouchedValidIds.size()));
    assertThat((long) untouchedValidIds.size(), greaterThanOrEqualTo(FUZZ_LINES / 10L));
    assertThat(deadLetters, greaterThanOrEqualTo(FUZZ_LINES / 2L));
    Set<DeadLetterReason> reachable =
        EnumSet.range(DeadLetterReason.INVALID_UTF8, DeadLetterReason.INVALID_COUNTRY);
    reachable.add(DeadLetterReason.INVALID_DIRECTIVE); // from the source-rejected lines
    assertThat("the corpus reaches every reason the parser gives", reasonsSeen, is(reachable));
    assertThat(
        TestEvents.counter(run, TidemarkMetrics.DEAD_LETTERS_PREFIX + "invalid_directive"),
        is((long) corpus.sourceRejectedOrigins.size()));
  }

  /** Checks that a collection contains every expected string (and possibly others). */
  private static final class ContainsAll implements SerializableFunction<Iterable<String>, Void> {
    private final Set<String> expected;

    ContainsAll(Set<String> expected) {
      this.expected = expected;
    }

    @Override
    public Void apply(Iterable<String> input) {
      Set<String> actual = new HashSet<>();
      input.forEach(actual::add);
      for (String id : expected) {
        assertThat(actual, hasItem(id));
      }
      return null;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers

  private static PCollection<String> reasons(PCollection<DeadLetter> failures) {
    return failures.apply(
        "Reasons", MapElements.into(TypeDescriptors.strings()).via(DeadLetter::reasonCode));
  }

  private static byte[] filled(int length, byte value) {
    byte[] bytes = new byte[length];
    Arrays.fill(bytes, value);
    return bytes;
  }

  /** A counter of this test's own namespace. */
  private static long testCounter(PipelineResult result, String name) {
    long total = 0;
    for (MetricResult<Long> counter :
        result
            .metrics()
            .queryMetrics(
                MetricsFilter.builder()
                    .addNameFilter(MetricNameFilter.named(TEST_NAMESPACE, name))
                    .build())
            .getCounters()) {
      total += counter.getAttempted();
    }
    return total;
  }
}
