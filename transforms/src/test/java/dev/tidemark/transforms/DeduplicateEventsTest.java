package dev.tidemark.transforms;

import static dev.tidemark.transforms.TestEvents.minutes;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsInAnyOrder;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.DuplicateRecord;
import dev.tidemark.transforms.values.Event;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.InstantCoder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.Flatten;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.reflect.DoFnSignature;
import org.apache.beam.sdk.transforms.reflect.DoFnSignatures;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionList;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * {@link DeduplicateEvents}: first copies pass, identical and conflicting copies are diverted with
 * the right flag, identities never collide, and state expires with the event-time horizon. Every
 * arrival is its own {@link TestStream} step, so "first" is well defined.
 */
@RunWith(JUnit4.class)
public class DeduplicateEventsTest {
  @Rule public final transient TestPipeline p = TestPipeline.create();

  private static final String BANK_A = "/bank/a";
  private static final String BANK_B = "/bank/b";
  private static final Duration ONE_HOUR = Duration.standardHours(1);
  private static final Duration ONE_MS = Duration.millis(1);

  /**
   * An event whose identity, content and clocks the test controls: {@code content} stands for the
   * CloudEvent content and becomes the fingerprint, so equal content means an identical copy.
   */
  private static Event event(
      String source, String id, String content, Instant eventTime, Instant ingestionTime) {
    return TestEvents.PAYMENT.event(
        source,
        id,
        ParseCloudEvents.DEFAULT_TYPE,
        eventTime,
        ingestionTime,
        TestEvents.Account.ALICE.id,
        1000,
        "GBP",
        "m1",
        "GB",
        Arrays.copyOf(content.getBytes(StandardCharsets.UTF_8), 16));
  }

  private static DuplicateRecord diverted(
      Event copy, boolean identicalPayload, Instant firstEventTime) {
    return new DuplicateRecord(
        copy.source(),
        copy.id(),
        copy.eventTime(),
        identicalPayload,
        firstEventTime,
        copy.ingestionTime());
  }

  private static TestStream.Builder<Event> stream() {
    return TestStream.create(Event.EventCoder.of());
  }

  /** An event as it arrives, timestamped with its event time. */
  private static TimestampedValue<Event> ts(Event event) {
    return TimestampedValue.of(event, event.eventTime());
  }

  /** Adds each event as its own arrival, in order. */
  private static TestStream.Builder<Event> arrive(
      TestStream.Builder<Event> builder, Event... events) {
    for (Event event : events) {
      builder = builder.addElements(ts(event));
    }
    return builder;
  }

  private PipelineResult runAndCheckCounters(long unique, long duplicates, long conflicts) {
    PipelineResult result = p.run();
    result.waitUntilFinish();
    assertThat("unique", TestEvents.counter(result, TidemarkMetrics.UNIQUE), is(unique));
    assertThat(
        "duplicates", TestEvents.counter(result, TidemarkMetrics.DUPLICATES), is(duplicates));
    assertThat("conflicts", TestEvents.counter(result, TidemarkMetrics.CONFLICTS), is(conflicts));
    assertThat("runner late-data drops", TestEvents.runnerDropped(result), is(0L));
    return result;
  }

  /** Emits each element's id with the timestamp it carries. */
  private static final class IdAndTimestampFn extends DoFn<Event, KV<String, Instant>> {
    @ProcessElement
    public void processElement(
        @Element Event event,
        @Timestamp Instant timestamp,
        OutputReceiver<KV<String, Instant>> out) {
      out.output(KV.of(event.id(), timestamp));
    }
  }

  @Test
  public void anExactDuplicateIsDivertedAndTheFirstCopyPassesAtItsEventTime() {
    Event first = event(BANK_A, "p1", "content-1", minutes(1), minutes(1.5));
    Event redelivered = event(BANK_A, "p1", "content-1", minutes(1), minutes(3));
    DeduplicateEvents.Result result =
        p.apply(arrive(stream(), first, redelivered).advanceWatermarkToInfinity())
            .apply(DeduplicateEvents.create());

    PAssert.that(result.events()).containsInAnyOrder(first);
    PAssert.that(result.duplicates())
        .containsInAnyOrder(diverted(redelivered, true, first.eventTime()));
    PAssert.that(
            result
                .events()
                .apply(ParDo.of(new IdAndTimestampFn()))
                .setCoder(KvCoder.of(StringUtf8Coder.of(), InstantCoder.of())))
        .containsInAnyOrder(List.of(KV.of("p1", minutes(1))));
    runAndCheckCounters(1, 1, 0);
  }

  @Test
  public void aConflictingCopyIsCountedAndNeverPassesAndCopiesCompareWithTheFirst() {
    Event first = event(BANK_A, "p1", "content-1", minutes(1), minutes(1.5));
    Event conflicting = event(BANK_A, "p1", "content-2", minutes(2), minutes(4));
    Event sameAsFirst = event(BANK_A, "p1", "content-1", minutes(1), minutes(5));
    DeduplicateEvents.Result result =
        p.apply(arrive(stream(), first, conflicting, sameAsFirst).advanceWatermarkToInfinity())
            .apply(DeduplicateEvents.create());

    PAssert.that(result.events()).containsInAnyOrder(first);
    PAssert.that(result.duplicates())
        .containsInAnyOrder(
            diverted(conflicting, false, minutes(1)), diverted(sameAsFirst, true, minutes(1)));
    runAndCheckCounters(1, 2, 1);
  }

  @Test
  public void theSameIdUnderAnotherSourceIsAnotherEvent() {
    Event fromA = event(BANK_A, "p1", "content-1", minutes(1), minutes(1));
    Event fromB = event(BANK_B, "p1", "content-1", minutes(1), minutes(2));
    DeduplicateEvents.Result result =
        p.apply(arrive(stream(), fromA, fromB).advanceWatermarkToInfinity())
            .apply(DeduplicateEvents.create());

    PAssert.that(result.events()).containsInAnyOrder(fromA, fromB);
    PAssert.that(result.duplicates()).empty();
    runAndCheckCounters(2, 0, 0);
  }

  @Test
  public void identitiesThatCollideUnderNaiveConcatenationStayApart() {
    Event colonInSource = event("a:b", "c", "content-1", minutes(1), minutes(1));
    Event colonInId = event("a", "b:c", "content-1", minutes(1), minutes(2));
    Event longSource = event("ab", "c", "content-1", minutes(1), minutes(3));
    Event longId = event("a", "bc", "content-1", minutes(1), minutes(4));
    DeduplicateEvents.Result result =
        p.apply(
                arrive(stream(), colonInSource, colonInId, longSource, longId)
                    .advanceWatermarkToInfinity())
            .apply(DeduplicateEvents.create());

    PAssert.that(result.events()).containsInAnyOrder(colonInSource, colonInId, longSource, longId);
    PAssert.that(result.duplicates()).empty();
    runAndCheckCounters(4, 0, 0);
  }

  @Test
  public void aCopyArrivingAfterTheHorizonPassesAgain() {
    Instant t = minutes(0);
    Event first = event(BANK_A, "p1", "content-1", t, t);
    Event muchLater = event(BANK_A, "p1", "content-1", t, t.plus(Duration.standardHours(3)));
    DeduplicateEvents.Result result =
        p.apply(
                stream()
                    .addElements(ts(first))
                    .advanceWatermarkTo(t.plus(ONE_HOUR).plus(ONE_HOUR))
                    .addElements(ts(muchLater)) // behind the watermark: the global window keeps it
                    .advanceWatermarkToInfinity())
            .apply(DeduplicateEvents.create().withHorizon(ONE_HOUR));

    PAssert.that(result.events()).containsInAnyOrder(first, muchLater);
    PAssert.that(result.duplicates()).empty();
    runAndCheckCounters(2, 0, 0);
  }

  @Test
  public void inABoundedInputEveryCopyIsDivertedHoweverFarApartInEventTime() {
    // A bounded input has no arrival order: whichever copy a runner reads first passes.
    Instant t = minutes(0);
    Instant twoDaysLater = t.plus(Duration.standardDays(2));
    Event first = event(BANK_A, "p1", "content-1", t, t);
    Event replayed = event(BANK_A, "p1", "content-1", twoDaysLater, twoDaysLater);
    Event other = event(BANK_B, "p1", "content-1", twoDaysLater, twoDaysLater);
    DeduplicateEvents.Result result =
        p.apply(
                Create.timestamped(ts(first), ts(replayed), ts(other))
                    .withCoder(Event.EventCoder.of()))
            .apply(DeduplicateEvents.create().withHorizon(ONE_HOUR));

    PAssert.that(result.events())
        .satisfies(
            passed -> {
              List<String> sources = new ArrayList<>();
              passed.forEach(e -> sources.add(e.source()));
              sources.sort(null);
              assertThat(sources, is(List.of(BANK_A, BANK_B)));
              return null;
            });
    PAssert.that(result.duplicates())
        .satisfies(
            diverted -> {
              List<DuplicateRecord> all = new ArrayList<>();
              diverted.forEach(all::add);
              assertThat(all.size(), is(1));
              DuplicateRecord copy = all.get(0);
              assertThat(copy.source(), is(BANK_A));
              assertThat(copy.identicalPayload(), is(true));
              assertThat(
                  "the first seen and the diverted copy are the two copies",
                  List.of(copy.firstEventTime(), copy.eventTime()),
                  containsInAnyOrder(t, twoDaysLater));
              return null;
            });
    runAndCheckCounters(2, 1, 0);
  }

  @Test
  public void onlyAnUnboundedInputSetsExpiryTimersAndABoundedOneKeepsStatePerBucket() {
    Pipeline pipeline = Pipeline.create();
    Instant t = minutes(0);
    Event first = event(BANK_A, "p1", "content-1", t, t);
    pipeline
        .apply("Bounded", Create.timestamped(ts(first)).withCoder(Event.EventCoder.of()))
        .apply("DedupBounded", DeduplicateEvents.create());
    pipeline
        .apply("Unbounded", arrive(stream(), first).advanceWatermarkToInfinity())
        .apply("DedupUnbounded", DeduplicateEvents.create());

    Map<String, List<String>> stateful = new HashMap<>();
    pipeline.traverseTopologically(
        new Pipeline.PipelineVisitor.Defaults() {
          @Override
          public void visitPrimitiveTransform(TransformHierarchy.Node node) {
            if (node.getTransform() instanceof ParDo.MultiOutput<?, ?> parDo) {
              DoFnSignature signature = DoFnSignatures.getSignature(parDo.getFn().getClass());
              if (!signature.stateDeclarations().isEmpty()) {
                List<String> fn = new ArrayList<>(signature.stateDeclarations().keySet());
                fn.add("timers=" + signature.timerDeclarations().size());
                fn.add(0, parDo.getFn().getClass().getSimpleName());
                stateful.put(node.getFullName().split("/")[0], fn);
              }
            }
          }
        });
    assertThat(
        stateful,
        is(
            Map.of(
                "DedupBounded",
                List.of("DeduplicateBoundedFn", "firstSeenInBucket", "timers=0"),
                "DedupUnbounded",
                List.of("DeduplicateFn", "firstSeen", "timers=1"))));
  }

  @Test
  public void identitiesSharingABucketStayApart() {
    // "Aa" and "BB" have the same String.hashCode, so both land in one bucket of a bounded input.
    assertThat("Aa".hashCode(), is("BB".hashCode()));
    Event aa = event(BANK_A, "Aa", "content-1", minutes(1), minutes(1));
    Event bb = event(BANK_A, "BB", "content-2", minutes(2), minutes(2));
    Event bbCopy = event(BANK_A, "BB", "content-2", minutes(2), minutes(3));
    DeduplicateEvents.Result result =
        p.apply(Create.timestamped(ts(aa), ts(bb), ts(bbCopy)).withCoder(Event.EventCoder.of()))
            .apply(DeduplicateEvents.create());

    PAssert.that(result.events())
        .satisfies(
            passed -> {
              List<String> ids = new ArrayList<>();
              passed.forEach(e -> ids.add(e.id()));
              assertThat(ids, containsInAnyOrder("Aa", "BB"));
              return null;
            });
    PAssert.that(result.duplicates())
        .satisfies(
            diverted -> {
              List<String> ids = new ArrayList<>();
              diverted.forEach(d -> ids.add(d.id() + ":" + d.identicalPayload()));
              assertThat(ids, is(List.of("BB:true")));
              return null;
            });
    runAndCheckCounters(2, 1, 0);
  }

  /** Each passed copy as (identity, "passed " + its ingestion time, which names the copy here). */
  private static final class PassedFn extends DoFn<Event, KV<String, String>> {
    @ProcessElement
    public void processElement(@Element Event e, OutputReceiver<KV<String, String>> out) {
      out.output(KV.of(e.source() + " " + e.id(), "passed " + e.ingestionTime().getMillis()));
    }
  }

  /** Each diverted copy as (identity, "diverted" + its ingestion time, flag, first event time). */
  private static final class DivertedFn extends DoFn<DuplicateRecord, KV<String, String>> {
    @ProcessElement
    public void processElement(@Element DuplicateRecord d, OutputReceiver<KV<String, String>> out) {
      out.output(
          KV.of(
              d.source() + " " + d.id(),
              "diverted "
                  + d.ingestionTime().getMillis()
                  + " "
                  + d.identicalPayload()
                  + " "
                  + d.firstEventTime().getMillis()));
    }
  }

  @Test
  public void aBoundedSeededMixPassesOneCopyPerIdentityAndFlagsTheRestAgainstIt() {
    Random random = new Random(43);
    List<TimestampedValue<Event>> input = new ArrayList<>();
    // Every copy has its own ingestion time, which names it; the test keeps its content and time.
    HashMap<Long, String> contentOf = new HashMap<>();
    HashMap<Long, Long> eventTimeOf = new HashMap<>();
    HashMap<String, Integer> copies = new HashMap<>();
    for (int i = 0; i < 400; i++) {
      String id = "p" + random.nextInt(150);
      String source = random.nextInt(4) == 0 ? BANK_B : BANK_A;
      String content = random.nextInt(5) == 0 ? "other-" + i : "content-" + id;
      Event event = event(source, id, content, minutes(random.nextInt(3000)), minutes(i));
      input.add(ts(event));
      contentOf.put(event.ingestionTime().getMillis(), content);
      eventTimeOf.put(event.ingestionTime().getMillis(), event.eventTime().getMillis());
      copies.merge(source + " " + id, 1, Integer::sum);
    }
    DeduplicateEvents.Result result =
        p.apply(Create.timestamped(input).withCoder(Event.EventCoder.of()))
            .apply(DeduplicateEvents.create());

    PAssert.that(
            PCollectionList.of(result.events().apply("Passed", ParDo.of(new PassedFn())))
                .and(result.duplicates().apply("Diverted", ParDo.of(new DivertedFn())))
                .apply(Flatten.pCollections())
                .apply(GroupByKey.create()))
        .satisfies(
            groups -> {
              int identities = 0;
              for (KV<String, Iterable<String>> group : groups) {
                identities++;
                List<String[]> outcomes = new ArrayList<>();
                group.getValue().forEach(o -> outcomes.add(o.split(" ")));
                List<String[]> passed =
                    outcomes.stream().filter(o -> o[0].equals("passed")).toList();
                assertThat(group.getKey() + " passes once", passed.size(), is(1));
                assertThat(
                    group.getKey() + " every copy is accounted for",
                    outcomes.size(),
                    is(copies.get(group.getKey())));
                long first = Long.parseLong(passed.get(0)[1]);
                for (String[] o : outcomes) {
                  if (o[0].equals("diverted")) {
                    long copy = Long.parseLong(o[1]);
                    assertThat(
                        group.getKey() + " identical exactly when the content is the first's",
                        Boolean.parseBoolean(o[2]),
                        is(contentOf.get(copy).equals(contentOf.get(first))));
                    assertThat(Long.parseLong(o[3]), is(eventTimeOf.get(first)));
                  }
                }
              }
              assertThat(identities, is(copies.size()));
              return null;
            });
    PipelineResult run = p.run();
    run.waitUntilFinish();
    assertThat(TestEvents.counter(run, TidemarkMetrics.UNIQUE), is((long) copies.size()));
    assertThat(TestEvents.counter(run, TidemarkMetrics.DUPLICATES), is(400L - copies.size()));
    assertThat(TestEvents.runnerDropped(run), is(0L));
  }

  @Test
  public void stateIsClearedWhenTheWatermarkPassesFirstEventTimePlusTheHorizon() {
    Instant t = minutes(1);
    Instant expiry = t.plus(ONE_HOUR);
    Event first = event(BANK_A, "p1", "content-1", t, t);
    Event justBefore = event(BANK_A, "p1", "content-1", t, expiry.minus(ONE_MS));
    // Different content and time after expiry: passing (not a conflict) shows the state is gone.
    Event afterExpiry = event(BANK_A, "p1", "content-2", minutes(70), minutes(70));
    Event copyOfNewFirst = event(BANK_A, "p1", "content-2", minutes(70), minutes(71));
    // Another identity seen only after p1 expired is not affected by p1's timer.
    Event other = event(BANK_A, "p2", "content-3", minutes(30), minutes(30));
    Event otherCopy = event(BANK_A, "p2", "content-3", minutes(30), minutes(72));
    DeduplicateEvents.Result result =
        p.apply(
                stream()
                    .addElements(ts(first))
                    .addElements(ts(other))
                    .advanceWatermarkTo(expiry.minus(ONE_MS))
                    .addElements(ts(justBefore))
                    .advanceWatermarkTo(expiry.plus(ONE_MS))
                    .addElements(ts(afterExpiry))
                    .addElements(ts(copyOfNewFirst))
                    .addElements(ts(otherCopy))
                    .advanceWatermarkToInfinity())
            .apply(DeduplicateEvents.create().withHorizon(ONE_HOUR));

    PAssert.that(result.events()).containsInAnyOrder(first, other, afterExpiry);
    PAssert.that(result.duplicates())
        .containsInAnyOrder(
            diverted(justBefore, true, t),
            diverted(copyOfNewFirst, true, minutes(70)),
            diverted(otherCopy, true, minutes(30)));
    runAndCheckCounters(3, 3, 0);
  }

  @Test
  public void countersEqualTheOutputsOverASeededMixOfCopies() {
    Random random = new Random(42);
    int identities = 25;
    int arrivals = 120;
    Map<String, Event> firstById = new HashMap<>();
    List<Event> expectedEvents = new ArrayList<>();
    List<DuplicateRecord> expectedDuplicates = new ArrayList<>();
    long expectedConflicts = 0;
    TestStream.Builder<Event> builder = stream();
    for (int i = 0; i < arrivals; i++) {
      String id = "p" + random.nextInt(identities);
      String source = random.nextInt(4) == 0 ? BANK_B : BANK_A;
      // One in five copies reuses the identity with other content.
      String content = random.nextInt(5) == 0 ? "other-" + i : "content-" + id;
      Instant eventTime = minutes(random.nextInt(120));
      Event event = event(source, id, content, eventTime, minutes(200 + i));
      builder = builder.addElements(ts(event));
      Event first = firstById.putIfAbsent(source + "\n" + id, event);
      if (first == null) {
        expectedEvents.add(event);
      } else {
        boolean identical = Arrays.equals(first.fingerprint(), event.fingerprint());
        expectedDuplicates.add(diverted(event, identical, first.eventTime()));
        expectedConflicts += identical ? 0 : 1;
      }
    }
    assertThat("the mix has duplicates", expectedDuplicates.size(), greaterThan(arrivals / 2));
    assertThat("the mix has conflicts", expectedConflicts, greaterThan(5L));

    DeduplicateEvents.Result result =
        p.apply(builder.advanceWatermarkToInfinity()).apply(DeduplicateEvents.create());
    PAssert.that(result.events()).containsInAnyOrder(expectedEvents);
    PAssert.that(result.duplicates()).containsInAnyOrder(expectedDuplicates);
    runAndCheckCounters(expectedEvents.size(), expectedDuplicates.size(), expectedConflicts);
  }

  @Test
  public void anEventWhoseHorizonEndsAfterTheEndOfTimeIsDeduplicatedWithoutFailing() {
    // The expiry timer would be after the end of time; it must be clamped to a time the runner
    // accepts. The event time is in the global window, and ParseCloudEvents accepts it.
    Instant late = GlobalWindow.INSTANCE.maxTimestamp().minus(ONE_HOUR);
    Event first = event(BANK_A, "p-future", "content-1", late, minutes(1));
    Event copy = event(BANK_A, "p-future", "content-1", late, minutes(2));
    DeduplicateEvents.Result result =
        p.apply(arrive(stream(), first, copy).advanceWatermarkToInfinity())
            .apply(DeduplicateEvents.create().withHorizon(Duration.standardDays(2)));

    PAssert.that(result.events()).containsInAnyOrder(first);
    PAssert.that(result.duplicates()).containsInAnyOrder(diverted(copy, true, late));
    runAndCheckCounters(1, 1, 0);
  }

  @Test
  public void horizonMustBePositive() {
    for (Duration horizon : new Duration[] {Duration.ZERO, Duration.standardMinutes(-5), null}) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> DeduplicateEvents.create().withHorizon(horizon));
      assertThat(e.getMessage(), containsString("withHorizon"));
    }
    assertThat(DeduplicateEvents.create().withHorizon(ONE_MS).horizon(), is(Duration.millis(1)));
    assertThat(DeduplicateEvents.create().horizon(), is(DeduplicateEvents.DEFAULT_HORIZON));
  }

  @Test
  public void windowedInputIsRejectedWhenTheTransformIsApplied() {
    p.enableAbandonedNodeEnforcement(false);
    PCollection<Event> windowed =
        p.apply(
                Create.timestamped(ts(event(BANK_A, "p1", "content-1", minutes(1), minutes(1))))
                    .withCoder(Event.EventCoder.of()))
            .apply(Window.into(FixedWindows.of(Duration.standardMinutes(5))));
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> windowed.apply(DeduplicateEvents.create()));
    assertThat(e.getMessage(), containsString("global window"));
  }

  @Test
  public void theExpiryOfTheLatestEventTimeWithAnyHorizonNeitherThrowsNorOutlivesTheWindow() {
    org.joda.time.Instant end =
        org.apache.beam.sdk.transforms.windowing.GlobalWindow.INSTANCE.maxTimestamp();
    assertThat(
        DeduplicateEvents.DeduplicateFn.expiryOf(
            TestEvents.BASE, org.joda.time.Duration.standardHours(24)),
        is(org.joda.time.Instant.parse("2026-01-02T00:00:00Z")));
    assertThat(
        DeduplicateEvents.DeduplicateFn.expiryOf(
            ParseCloudEvents.LATEST_EVENT_TIME, org.joda.time.Duration.millis(Long.MAX_VALUE)),
        is(end));
  }
}
