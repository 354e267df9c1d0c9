package dev.tidemark.transforms;

import static dev.tidemark.transforms.TestEvents.Account.ALICE;
import static dev.tidemark.transforms.TestEvents.Account.BOB;
import static dev.tidemark.transforms.TestEvents.minutes;
import static dev.tidemark.transforms.TestEvents.payment;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;
import static org.hamcrest.Matchers.not;

import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.Event;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.PaymentFeatures;
import dev.tidemark.transforms.values.TooLateRecord;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TimestampedValue;
import org.apache.beam.sdk.values.WindowingStrategy.AccumulationMode;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;
import org.junit.runners.Parameterized.Parameter;
import org.junit.runners.Parameterized.Parameters;

/**
 * The five cases of Beam's {@code LeaderBoardTest} (on time, speculative, unobservably late,
 * observably late, droppably late) for {@link ComputeFeatures}, plus too-late capture with sliding
 * windows, each with a too-late gate of 1, 2 and 8 shards. Every test also checks that the runner
 * itself dropped nothing.
 */
@RunWith(Parameterized.class)
public class ComputeFeaturesTest {
  @Rule public final transient TestPipeline p = TestPipeline.create();

  @Parameters(name = "{0} gate shards")
  public static List<Object[]> shards() {
    return List.of(new Object[] {1}, new Object[] {2}, new Object[] {8});
  }

  @Parameter public int shards;

  private static final Duration FIVE_MINUTES = Duration.standardMinutes(5);
  private static final Duration LATENESS = Duration.standardHours(1);
  private static final IntervalWindow FIRST_WINDOW = new IntervalWindow(minutes(0), minutes(5));

  private static final IntervalWindow LAST_SLIDING_WINDOW =
      new IntervalWindow(minutes(4), minutes(9));

  private static final Event ALICE_1 = payment(ALICE, "a1", 1000, "m1", "GB", minutes(1));
  private static final Event ALICE_2 = payment(ALICE, "a2", 550, "m2", "FR", minutes(2));
  private static final Event BOB_1 = payment(BOB, "b1", 12000, "m1", "GB", minutes(3));

  /** Fixed five-minute windows, one hour of lateness, early firings after 10 s. */
  private ComputeFeatures fixedWindows() {
    return ComputeFeatures.of(FIVE_MINUTES, FIVE_MINUTES)
        .withEarlyFiringDelay(Duration.standardSeconds(10))
        .withAllowedLateness(LATENESS)
        .withGateShards(shards);
  }

  // Expected features, worked out by hand from the fixtures above (amounts in pence).

  /** ALICE_1 alone: one event of 10.00 at m1 in GB, at minute 1. */
  private static final Features ALICE_1_ONLY =
      PaymentFeatures.of(1, 1000, 1000, 1, 1, minutes(1), minutes(1));

  /** ALICE_2 alone: one event of 5.50 at m2 in FR, at minute 2. */
  private static final Features ALICE_2_ONLY =
      PaymentFeatures.of(1, 550, 550, 1, 1, minutes(2), minutes(2));

  /** Both of Alice's: 10.00 + 5.50 = 15.50, max 10.00, m1 and m2, GB and FR, latest minute 2. */
  private static final Features ALICE_BOTH =
      PaymentFeatures.of(2, 1550, 1000, 2, 2, minutes(2), minutes(2));

  /** BOB_1 alone: one event of 120.00 at m1 in GB, at minute 3. */
  private static final Features BOB_1_ONLY =
      PaymentFeatures.of(1, 12000, 12000, 1, 1, minutes(3), minutes(3));

  /** A pane without events: all zero, both clocks at the smallest instant. */
  private static final Features NO_EVENTS =
      PaymentFeatures.of(0, 0, 0, 0, 0, new Instant(Long.MIN_VALUE), new Instant(Long.MIN_VALUE));

  /** One event's features: its amount as sum and maximum, one merchant, one country. */
  private static Features oneEvent(long cents, Instant time) {
    return PaymentFeatures.of(1, cents, cents, 1, 1, time, time);
  }

  /**
   * The features of {@code events} straight from their definition (count, sum, maximum, distinct
   * merchants and countries, the clocks of the latest event by event time then ingestion time), for
   * a randomised input too large to work out by hand. No accumulator, no merge: an independent
   * computation to compare the windows built from slices against.
   */
  private static Features byDefinition(List<Event> events) {
    Event latest =
        events.stream()
            .max(
                java.util.Comparator.comparing(Event::eventTime)
                    .thenComparing(Event::ingestionTime))
            .get();
    return PaymentFeatures.of(
        events.size(),
        events.stream().mapToLong(TestEvents.PAYMENT::amountCents).sum(),
        events.stream().mapToLong(TestEvents.PAYMENT::amountCents).max().getAsLong(),
        events.stream().map(TestEvents.PAYMENT::merchantId).distinct().count(),
        events.stream().map(TestEvents.PAYMENT::country).distinct().count(),
        latest.eventTime(),
        latest.ingestionTime());
  }

  private static TestStream.Builder<Event> stream() {
    return TestStream.create(Event.EventCoder.of());
  }

  /** An event as it arrives, timestamped with its event time. */
  private static TimestampedValue<Event> ts(Event event) {
    return TimestampedValue.of(event, event.eventTime());
  }

  private PipelineResult runAndCheckNothingDropped() {
    PipelineResult result = p.run();
    result.waitUntilFinish();
    assertThat("runner late-data drops", TestEvents.runnerDropped(result), is(0L));
    return result;
  }

  @Test
  public void onTimeEventsFireOneOnTimePane() {
    TestStream<Event> events =
        stream()
            .addElements(ts(ALICE_1), ts(ALICE_2), ts(BOB_1))
            .advanceWatermarkTo(minutes(6))
            .advanceWatermarkToInfinity();
    ComputeFeatures.Result result = p.apply(events).apply(fixedWindows());

    PAssert.that(result.features())
        .inOnTimePane(FIRST_WINDOW)
        .containsInAnyOrder(List.of(KV.of(ALICE.id, ALICE_BOTH), KV.of(BOB.id, BOB_1_ONLY)));
    PAssert.that(result.features())
        .inWindow(FIRST_WINDOW)
        .containsInAnyOrder(List.of(KV.of(ALICE.id, ALICE_BOTH), KV.of(BOB.id, BOB_1_ONLY)));
    PAssert.that(result.tooLate()).empty();
    PipelineResult run = runAndCheckNothingDropped();
    assertThat(TestEvents.counter(run, TidemarkMetrics.WINDOWED), is(3L));
  }

  @Test
  public void speculativePanesFireAfterTheEarlyDelay() {
    TestStream<Event> events =
        stream()
            .addElements(ts(ALICE_1))
            .advanceProcessingTime(Duration.standardSeconds(11))
            .addElements(ts(ALICE_2))
            .advanceProcessingTime(Duration.standardSeconds(11))
            .advanceWatermarkTo(minutes(6))
            .advanceWatermarkToInfinity();
    ComputeFeatures.Result result = p.apply(events).apply(fixedWindows());

    PAssert.that(result.features())
        .inEarlyPane(FIRST_WINDOW)
        .containsInAnyOrder(List.of(KV.of(ALICE.id, ALICE_1_ONLY), KV.of(ALICE.id, ALICE_BOTH)));
    PAssert.that(result.features())
        .inOnTimePane(FIRST_WINDOW)
        .containsInAnyOrder(List.of(KV.of(ALICE.id, ALICE_BOTH)));
    runAndCheckNothingDropped();
  }

  @Test
  public void unobservablyLateEventsJoinTheOnTimePane() {
    TestStream<Event> events =
        stream()
            .addElements(ts(ALICE_2))
            .advanceWatermarkTo(minutes(4))
            .addElements(ts(ALICE_1)) // behind the watermark, but its window has not closed
            .advanceWatermarkToInfinity();
    ComputeFeatures.Result result = p.apply(events).apply(fixedWindows());

    PAssert.that(result.features())
        .inOnTimePane(FIRST_WINDOW)
        .containsInAnyOrder(List.of(KV.of(ALICE.id, ALICE_BOTH)));
    PAssert.that(result.features())
        .inWindow(FIRST_WINDOW)
        .containsInAnyOrder(List.of(KV.of(ALICE.id, ALICE_BOTH)));
    PAssert.that(result.tooLate()).empty();
    runAndCheckNothingDropped();
  }

  @Test
  public void observablyLateEventsReviseTheWindowInALatePane() {
    TestStream<Event> events =
        stream()
            .addElements(ts(ALICE_1))
            .advanceWatermarkTo(minutes(6))
            .addElements(ts(ALICE_2)) // after the on-time pane, within the allowed lateness
            .advanceWatermarkToInfinity();
    ComputeFeatures.Result result = p.apply(events).apply(fixedWindows());

    PAssert.that(result.features())
        .inOnTimePane(FIRST_WINDOW)
        .containsInAnyOrder(List.of(KV.of(ALICE.id, ALICE_1_ONLY)));
    PAssert.that(result.features())
        .inLatePane(FIRST_WINDOW)
        .containsInAnyOrder(List.of(KV.of(ALICE.id, ALICE_BOTH)));
    PAssert.that(result.tooLate()).empty();
    runAndCheckNothingDropped();
  }

  /**
   * Four hours in which every event falls to one gate shard: the others hear only of the times of
   * its events. Each hour's on-time pane fires when the watermark passes the window's end, so the
   * late event that follows revises it in a late pane; a shard that held the watermark back would
   * let the late event join the on-time pane at the end of the stream instead.
   */
  @Test
  public void shardsWithoutEventsDoNotHoldBackOnTimePanes() {
    TestStream.Builder<Event> events = stream();
    List<Event> onTime = new ArrayList<>();
    List<Event> late = new ArrayList<>();
    for (int hour = 0; hour < 4; hour++) {
      onTime.add(onShardZero("on-time-" + hour, 60 * hour + 1));
      late.add(onShardZero("late-" + hour, 60 * hour + 2));
      events =
          events
              .addElements(ts(onTime.get(hour)))
              .advanceWatermarkTo(minutes(60 * hour + 6))
              .addElements(ts(late.get(hour)))
              .advanceWatermarkTo(minutes(60 * hour + 30));
    }
    ComputeFeatures.Result result =
        p.apply(events.advanceWatermarkToInfinity()).apply(fixedWindows());

    for (int hour = 0; hour < 4; hour++) {
      IntervalWindow window = new IntervalWindow(minutes(60 * hour), minutes(60 * hour + 5));
      Event first = onTime.get(hour);
      PAssert.that(result.features())
          .inOnTimePane(window)
          .containsInAnyOrder(
              List.of(
                  KV.of(
                      ALICE.id,
                      oneEvent(TestEvents.PAYMENT.amountCents(first), first.eventTime()))));
      PAssert.that(result.features())
          .inLatePane(window)
          .containsInAnyOrder(
              List.of(KV.of(ALICE.id, byDefinition(List.of(first, late.get(hour))))));
    }
    PAssert.that(result.tooLate()).empty();
    runAndCheckNothingDropped();
  }

  /** Alice's payment {@code id} at {@code minute}, on gate shard 0 of 1, 2, 4 and 8 shards. */
  private static Event onShardZero(String id, double minute) {
    for (int n = 0; ; n++) {
      Event event = payment(ALICE, id + "-" + n, 100 + n, "m1", "GB", minutes(minute));
      if (ComputeFeatures.gateShardOf(event, 8) == 0) {
        return event;
      }
    }
  }

  @Test
  public void discardingPanesCarryOnlyWhatIsNew() {
    TestStream<Event> events =
        stream()
            .addElements(ts(ALICE_1))
            .advanceWatermarkTo(minutes(6))
            .addElements(ts(ALICE_2))
            .advanceWatermarkToInfinity();
    ComputeFeatures.Result result =
        p.apply(events)
            .apply(fixedWindows().withAccumulationMode(AccumulationMode.DISCARDING_FIRED_PANES));

    PAssert.that(result.features())
        .inLatePane(FIRST_WINDOW)
        .containsInAnyOrder(List.of(KV.of(ALICE.id, ALICE_2_ONLY)));
    runAndCheckNothingDropped();
  }

  @Test
  public void emptyFirstPanesAreDroppedAndEmptyLaterPanesKept() {
    // An empty first pane (what the FlinkRunner emits for a window fired after its state was
    // cleared) is dropped; the empty ON_TIME pane of discarding mode after an early pane is real.
    PCollection<KV<String, Features>> firstPanes =
        p.apply(
                "FirstPanes",
                Create.of(KV.of("empty", NO_EVENTS), KV.of(ALICE.id, ALICE_1_ONLY))
                    .withCoder(KvCoder.of(StringUtf8Coder.of(), Features.FeaturesCoder.of())))
            .apply("DropEmpty", ParDo.of(new ComputeFeatures.DropEmptyFirstPaneFn()));
    PAssert.that(firstPanes).containsInAnyOrder(List.of(KV.of(ALICE.id, ALICE_1_ONLY)));

    TestStream<Event> events =
        stream()
            .addElements(ts(ALICE_1))
            .advanceProcessingTime(Duration.standardSeconds(11))
            .advanceWatermarkTo(minutes(6))
            .advanceWatermarkToInfinity();
    ComputeFeatures.Result result =
        p.apply(events)
            .apply(fixedWindows().withAccumulationMode(AccumulationMode.DISCARDING_FIRED_PANES));
    PAssert.that(result.features())
        .inEarlyPane(FIRST_WINDOW)
        .containsInAnyOrder(List.of(KV.of(ALICE.id, ALICE_1_ONLY)));
    PAssert.that(result.features())
        .inOnTimePane(FIRST_WINDOW)
        .containsInAnyOrder(List.of(KV.of(ALICE.id, NO_EVENTS)));
    runAndCheckNothingDropped();
  }

  @Test
  public void aBoundedInputSkipsTheGateAndLosesNothing() {
    // Three hours apart in event time, the later first: in a stream the earlier one would be
    // droppably late; in a bounded input nothing is late, and the gate is not applied.
    Event later = payment(ALICE, "later", 300, "m3", "DE", minutes(180));
    PCollection<Event> events =
        p.apply(
            Create.timestamped(ts(later), ts(ALICE_1), ts(ALICE_2), ts(BOB_1))
                .withCoder(Event.EventCoder.of()));
    assertThat(events.isBounded(), is(PCollection.IsBounded.BOUNDED));
    ComputeFeatures.Result result = events.apply(fixedWindows());

    PAssert.that(result.features())
        .inOnTimePane(FIRST_WINDOW)
        .containsInAnyOrder(List.of(KV.of(ALICE.id, ALICE_BOTH), KV.of(BOB.id, BOB_1_ONLY)));
    PAssert.that(result.features())
        .inOnTimePane(new IntervalWindow(minutes(180), minutes(185)))
        .containsInAnyOrder(List.of(KV.of(ALICE.id, oneEvent(300, minutes(180)))));
    PAssert.that(result.tooLate()).empty();
    PipelineResult run = runAndCheckNothingDropped();
    assertThat(TestEvents.counter(run, TidemarkMetrics.WINDOWED), is(4L));
    assertThat(TestEvents.counter(run, TidemarkMetrics.TOO_LATE), is(0L));
    assertThat("a gate step in the bounded graph", graphHas(p, "GateTooLateEvents"), is(false));
  }

  @Test
  public void aBoundedInputBuildsEachSlidingWindowFromItsSlicesExactly() {
    // 5 min windows every 30 s: a bounded input combines its events into 30 s slices by account
    // and bucket of windows, then builds the windows from the slices.
    // Expected: every window of every event, aggregated from the events inside it directly, in
    // one on-time pane (the default early firings fire no early pane for a bounded input).
    Duration period = Duration.standardSeconds(30);
    java.util.Random random = new java.util.Random(7);
    List<TimestampedValue<Event>> events = new ArrayList<>();
    java.util.Map<KV<String, IntervalWindow>, List<Event>> expected = new java.util.HashMap<>();
    for (int i = 0; i < 300; i++) {
      TestEvents.Account account = random.nextBoolean() ? ALICE : BOB;
      // Some events exactly on slice boundaries, the rest anywhere in two hours: windows in three
      // buckets of window starts (50 minutes each), and windows across the buckets' ends.
      long offset =
          i % 10 == 0 ? random.nextInt(240) * period.getMillis() : random.nextInt(120 * 60_000);
      Event event =
          payment(
              account,
              "e" + i,
              1 + random.nextInt(10_000),
              "m" + random.nextInt(8),
              random.nextBoolean() ? "GB" : "FR",
              TestEvents.BASE.plus(Duration.millis(offset)));
      events.add(ts(event));
      long lastStart = Math.floorDiv(offset, period.getMillis()) * period.getMillis();
      for (int k = 0; k < 10; k++) {
        org.joda.time.Instant start =
            TestEvents.BASE.plus(Duration.millis(lastStart - k * period.getMillis()));
        expected
            .computeIfAbsent(
                KV.of(account.id, new IntervalWindow(start, FIVE_MINUTES)), w -> new ArrayList<>())
            .add(event);
      }
    }
    List<String> expectedPanes = new ArrayList<>();
    expected.forEach(
        (key, inWindow) ->
            expectedPanes.add(
                pane(key.getKey(), key.getValue(), "ON_TIME", byDefinition(inWindow))));

    ComputeFeatures.Result result =
        p.apply(Create.timestamped(events).withCoder(Event.EventCoder.of()))
            .apply(
                ComputeFeatures.of(FIVE_MINUTES, period)
                    .withAllowedLateness(LATENESS)
                    .withGateShards(shards));

    PAssert.that(result.features().apply(ParDo.of(new DescribePaneFn())))
        .containsInAnyOrder(expectedPanes);
    PAssert.that(result.tooLate()).empty();
    PipelineResult run = runAndCheckNothingDropped();
    assertThat(TestEvents.counter(run, TidemarkMetrics.WINDOWED), is(300L));
    assertThat(
        "events combined into slices by bucket",
        graphHas(p, "WindowsFromSlices/BucketEvents"),
        is(true));
    assertThat(
        "windows built from slices", graphHas(p, "WindowsFromSlices/CollectSlices"), is(true));
    assertThat("no separate slice combine", graphHas(p, "AggregateSlices"), is(false));
  }

  private static String pane(String account, BoundedWindow window, String timing, Features f) {
    return account + " " + window + " " + timing + " " + f;
  }

  /** One line per fired pane: account, window, timing and the features. */
  private static final class DescribePaneFn extends DoFn<KV<String, Features>, String> {
    @ProcessElement
    public void processElement(
        @Element KV<String, Features> features,
        BoundedWindow window,
        PaneInfo pane,
        OutputReceiver<String> out) {
      out.output(pane(features.getKey(), window, pane.getTiming().name(), features.getValue()));
    }
  }

  /** Whether the pipeline has a step whose full name contains {@code name}. */
  private static boolean graphHas(TestPipeline pipeline, String name) {
    boolean[] found = {false};
    pipeline.traverseTopologically(
        new Pipeline.PipelineVisitor.Defaults() {
          @Override
          public CompositeBehavior enterCompositeTransform(TransformHierarchy.Node node) {
            found[0] |= node.getFullName().contains(name);
            return CompositeBehavior.ENTER_TRANSFORM;
          }

          @Override
          public void visitPrimitiveTransform(TransformHierarchy.Node node) {
            found[0] |= node.getFullName().contains(name);
          }
        });
    return found[0];
  }

  @Test
  public void droppablyLateEventsGoToTheTooLateOutput() {
    TestStream<Event> events =
        stream()
            .addElements(ts(ALICE_1))
            .advanceWatermarkTo(minutes(6))
            .advanceWatermarkTo(minutes(180)) // far past window end + one hour of lateness
            .addElements(ts(ALICE_2))
            .advanceWatermarkToInfinity();
    ComputeFeatures.Result result = p.apply(events).apply(fixedWindows());

    PAssert.that(result.features())
        .inWindow(FIRST_WINDOW)
        .containsInAnyOrder(List.of(KV.of(ALICE.id, ALICE_1_ONLY)));
    PAssert.that(result.tooLate())
        .satisfies(
            records -> {
              List<TooLateRecord> all = new ArrayList<>();
              records.forEach(all::add);
              assertThat(all.size(), is(1));
              TooLateRecord record = all.get(0);
              assertThat(record.id(), is("a2"));
              assertThat(record.key(), is(ALICE.id));
              assertThat(record.eventTime(), is(minutes(2)));
              assertThat(record.partiallyLate(), is(false));
              assertThat(record.missedWindows(), contains(FIRST_WINDOW));
              assertThat(
                  "judged against a watermark bound no later than the real watermark",
                  record.watermark().isAfter(minutes(180)),
                  is(false));
              return null;
            });
    PipelineResult run = runAndCheckNothingDropped();
    assertThat(TestEvents.counter(run, TidemarkMetrics.TOO_LATE), is(1L));
    assertThat(TestEvents.counter(run, TidemarkMetrics.WINDOWED), is(1L));
  }

  @Test
  public void partiallyLateEventsCountInTheWindowsTheyDidNotMiss() {
    Duration period = Duration.standardMinutes(1);
    Event early = payment(ALICE, "early", 100, "m1", "GB", minutes(0.2));
    Event straggler = payment(ALICE, "straggler", 700, "m9", "GB", minutes(4.5));
    TestStream<Event> events =
        stream()
            .addElements(ts(early))
            .advanceWatermarkTo(minutes(7.99))
            .addElements(ts(straggler))
            .advanceWatermarkToInfinity();
    ComputeFeatures.Result result =
        p.apply(events)
            .apply(
                ComputeFeatures.of(FIVE_MINUTES, period)
                    .withoutEarlyFirings()
                    .withAllowedLateness(Duration.ZERO)
                    .withGateShards(shards));

    PAssert.that(result.features())
        .inWindow(LAST_SLIDING_WINDOW)
        .containsInAnyOrder(List.of(KV.of(ALICE.id, oneEvent(700, minutes(4.5)))));
    PAssert.that(result.features())
        .inWindow(FIRST_WINDOW)
        .containsInAnyOrder(List.of(KV.of(ALICE.id, oneEvent(100, minutes(0.2)))));
    PAssert.that(result.tooLate())
        .satisfies(
            records -> {
              List<TooLateRecord> all = new ArrayList<>();
              records.forEach(all::add);
              assertThat(all.size(), is(1));
              TooLateRecord record = all.get(0);
              assertThat(record.partiallyLate(), is(true));
              assertThat(record.missedWindows(), hasItem(FIRST_WINDOW));
              assertThat(record.missedWindows(), not(hasItem(LAST_SLIDING_WINDOW)));
              assertThat(record.missedWindows().size(), lessThan(5));
              for (IntervalWindow missed : record.missedWindows()) {
                assertThat(missed.maxTimestamp().isBefore(record.watermark()), is(true));
              }
              return null;
            });
    PipelineResult run = runAndCheckNothingDropped();
    assertThat(TestEvents.counter(run, TidemarkMetrics.PARTIALLY_LATE), is(1L));
    assertThat(TestEvents.counter(run, TidemarkMetrics.TOO_LATE), is(0L));
    assertThat(TestEvents.counter(run, TidemarkMetrics.WINDOWED), is(2L));
  }

  @Test
  public void rejectsWindowSettingsThatLoseEventsWithAFix() {
    IllegalArgumentException e =
        org.junit.Assert.assertThrows(
            IllegalArgumentException.class,
            () -> ComputeFeatures.of(Duration.standardMinutes(1), Duration.standardMinutes(5)));
    assertThat(e.getMessage().contains("set --windowPeriod to at most --windowSize"), is(true));
    IllegalArgumentException lateness =
        org.junit.Assert.assertThrows(
            IllegalArgumentException.class,
            () -> fixedWindows().withAllowedLateness(Duration.standardMinutes(-1)));
    assertThat(lateness.getMessage().contains("withAllowedLateness"), is(true));
  }

  @Test
  public void theGateJudgesExtremeLatenessWithoutOverflow() {
    IntervalWindow last =
        new IntervalWindow(
            ParseCloudEvents.LATEST_EVENT_TIME.minus(FIVE_MINUTES),
            ParseCloudEvents.LATEST_EVENT_TIME);
    // Window end 9999-12-30T23:59:59.999 plus any lateness saturates instead of throwing.
    assertThat(
        GateTooLateFn.isExpired(
            last, Duration.millis(Long.MAX_VALUE), BoundedWindow.TIMESTAMP_MAX_VALUE),
        is(false));
    // An ordinary window: its last millisecond is 00:04:59.999, plus an hour 01:04:59.999; it
    // expires once the watermark is past that.
    Instant deadline = Instant.parse("2026-01-01T01:04:59.999Z");
    assertThat(GateTooLateFn.isExpired(FIRST_WINDOW, LATENESS, deadline), is(false));
    assertThat(
        GateTooLateFn.isExpired(FIRST_WINDOW, LATENESS, deadline.plus(Duration.millis(1))),
        is(true));
  }
}
