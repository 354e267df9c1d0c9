package dev.tidemark.transforms;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import dev.tidemark.transforms.ComputeFeatures.Aggregation;
import dev.tidemark.transforms.TestEvents.Account;
import dev.tidemark.transforms.values.Event;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.TooLateRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.UnaryOperator;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;
import org.junit.Rule;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;
import org.junit.runners.Parameterized.Parameter;
import org.junit.runners.Parameterized.Parameters;

/**
 * Sliding windows from slices give the features of the one-stage combine: a seeded fuzz of streams
 * (events out of order, late, too late and partially late, watermark jumps, processing time passing
 * for early firings) runs through both aggregations of {@link ComputeFeatures} in one pipeline,
 * under several triggers, and every window's on-time pane and final pane must carry the same
 * features in both, as must the too-late records. Which early and late panes fire in between may
 * differ (docs/semantics.md).
 */
@RunWith(Parameterized.class)
public class SlicedWindowsEquivalenceTest {
  @Rule public final transient TestPipeline p = TestPipeline.create();

  @Parameters(name = "seed {0}, {1}")
  public static List<Object[]> cases() {
    List<Object[]> cases = new ArrayList<>();
    String[] triggers = {"default", "per element", "no early firings", "no lateness"};
    for (int seed = 1; seed <= 8; seed++) {
      cases.add(new Object[] {seed, triggers[seed % triggers.length]});
    }
    return cases;
  }

  @Parameter(0)
  public int seed;

  @Parameter(1)
  public String trigger;

  /** Panes seen, by run: {@code mode|key|window} to the panes in index order. */
  static final Map<String, Map<String, TreeMap<Long, String>>> PANES = new ConcurrentHashMap<>();

  private static final Map<String, ConcurrentLinkedQueue<String>> TOO_LATE =
      new ConcurrentHashMap<>();

  private ComputeFeatures features(Aggregation aggregation) {
    ComputeFeatures features =
        ComputeFeatures.of(Duration.standardMinutes(5), Duration.standardMinutes(1))
            .withAllowedLateness(Duration.standardMinutes(10))
            .withAggregation(aggregation)
            .withGateShards(1 + seed % 2);
    UnaryOperator<ComputeFeatures> configure =
        switch (trigger) {
          case "per element" -> f -> f.withEarlyFiringDelay(Duration.ZERO);
          case "no early firings" -> ComputeFeatures::withoutEarlyFirings;
          case "no lateness" -> f -> f.withAllowedLateness(Duration.ZERO);
          default -> f -> f.withEarlyFiringDelay(Duration.standardSeconds(10));
        };
    return configure.apply(features);
  }

  /**
   * A random stream over 40 minutes of event time: bursts of events around a moving watermark, some
   * behind it (late, some too late for some or all of their windows), processing time passing
   * between bursts.
   */
  private TestStream<Event> stream(Random random) {
    TestStream.Builder<Event> stream = TestStream.create(Event.EventCoder.of());
    double watermark = 0;
    int id = 0;
    while (watermark < 40) {
      List<TimestampedValue<Event>> burst = new ArrayList<>();
      int size = 1 + random.nextInt(6);
      for (int i = 0; i < size; i++) {
        double roll = random.nextDouble();
        double minute =
            roll < 0.7
                ? watermark + random.nextDouble() * 4
                : roll < 0.9
                    ? watermark - random.nextDouble() * 8
                    : watermark - random.nextDouble() * 25;
        Account account = random.nextBoolean() ? Account.ALICE : Account.BOB;
        Event event =
            TestEvents.payment(
                account,
                "e" + (id++),
                100 + random.nextInt(10_000),
                "m" + random.nextInt(4),
                random.nextBoolean() ? "GB" : "FR",
                TestEvents.minutes(Math.max(0, minute)));
        burst.add(TimestampedValue.of(event, event.eventTime()));
      }
      stream = addAll(stream, burst);
      if (random.nextInt(3) == 0) {
        stream = stream.advanceProcessingTime(Duration.standardSeconds(5 + random.nextInt(20)));
      }
      watermark += random.nextDouble() * 1.5;
      stream = stream.advanceWatermarkTo(TestEvents.minutes(watermark));
    }
    return stream.advanceWatermarkToInfinity();
  }

  @SuppressWarnings({"unchecked", "rawtypes"}) // TestStream's varargs of a generic type
  private static TestStream.Builder<Event> addAll(
      TestStream.Builder<Event> stream, List<TimestampedValue<Event>> burst) {
    return stream.addElements(
        burst.get(0), burst.subList(1, burst.size()).toArray(new TimestampedValue[0]));
  }

  @Test
  public void onTimeAndFinalPanesAreTheOneStageCombines() {
    String run = seed + "/" + trigger;
    PANES.remove(run);
    TOO_LATE.remove(run);
    PCollection<Event> events = p.apply(stream(new Random(seed)));
    for (Aggregation aggregation : Aggregation.values()) {
      ComputeFeatures.Result result = events.apply(aggregation.name(), features(aggregation));
      result.features().apply(aggregation + "Panes", ParDo.of(new RecordPaneFn(run, aggregation)));
      result
          .tooLate()
          .apply(aggregation + "TooLate", ParDo.of(new RecordTooLateFn(run, aggregation)));
    }
    p.run().waitUntilFinish();

    Map<String, TreeMap<Long, String>> panes = PANES.get(run);
    int windows = 0;
    int compared = 0;
    for (Map.Entry<String, TreeMap<Long, String>> window : panes.entrySet()) {
      if (!window.getKey().startsWith(Aggregation.ONE_STAGE + "|")) {
        continue;
      }
      windows++;
      String where = window.getKey().substring(Aggregation.ONE_STAGE.name().length());
      TreeMap<Long, String> oneStage = window.getValue();
      TreeMap<Long, String> sliced = panes.get(Aggregation.SLICES + where);
      assertThat("the sliced path fired " + where, sliced != null, is(true));
      assertThat(
          "final pane of " + where + ": one-stage " + oneStage + ", sliced " + sliced,
          features(sliced.lastEntry().getValue()),
          is(features(oneStage.lastEntry().getValue())));
      String oneStageOnTime = onTime(oneStage);
      if (oneStageOnTime != null) {
        compared++;
        assertThat(
            "on-time pane of " + where + ": one-stage " + oneStage + ", sliced " + sliced,
            onTime(sliced),
            is(oneStageOnTime));
      }
    }
    long slicedWindows =
        panes.keySet().stream().filter(k -> k.startsWith(Aggregation.SLICES + "|")).count();
    assertThat("windows of both paths", slicedWindows, is((long) windows));
    assertThat(windows, greaterThan(20));
    assertThat(compared, greaterThan(20));
    List<String> oneStageLate = sorted(TOO_LATE.get(run + "|" + Aggregation.ONE_STAGE));
    List<String> slicedLate = sorted(TOO_LATE.get(run + "|" + Aggregation.SLICES));
    assertThat(slicedLate, is(oneStageLate));
  }

  private static String features(String pane) {
    return pane.substring(pane.indexOf(' ') + 1);
  }

  /** The features of the on-time pane, or null. */
  private static String onTime(TreeMap<Long, String> panes) {
    for (String pane : panes.values()) {
      if (pane.startsWith(PaneInfo.Timing.ON_TIME + "|")) {
        return features(pane);
      }
    }
    return null;
  }

  private static List<String> sorted(ConcurrentLinkedQueue<String> records) {
    List<String> list = new ArrayList<>(records == null ? List.of() : records);
    java.util.Collections.sort(list);
    return list;
  }

  /** Records each pane: its timing and features, by index, under its key and window. */
  static final class RecordPaneFn extends DoFn<KV<String, Features>, Void> {
    private final String run;
    private final String label;

    RecordPaneFn(String run, Object label) {
      this.run = run;
      this.label = label.toString();
    }

    @ProcessElement
    public void processElement(
        @Element KV<String, Features> pane, BoundedWindow window, PaneInfo info) {
      String previous;
      synchronized (PANES) {
        previous =
            PANES
                .computeIfAbsent(run, r -> new ConcurrentHashMap<>())
                .computeIfAbsent(label + "|" + pane.getKey() + "|" + window, k -> new TreeMap<>())
                .put(
                    info.getIndex(),
                    info.getTiming()
                        + (info.isFirst() ? "|first" : "|notFirst")
                        + (info.isLast() ? "|last " : "|notLast ")
                        + pane.getValue());
      }
      if (previous != null) {
        throw new AssertionError(
            "two panes of index " + info.getIndex() + " in " + pane.getKey() + " " + window);
      }
    }
  }

  /** Records each too-late record. */
  static final class RecordTooLateFn extends DoFn<TooLateRecord, Void> {
    private final String run;
    private final Aggregation aggregation;

    RecordTooLateFn(String run, Aggregation aggregation) {
      this.run = run;
      this.aggregation = aggregation;
    }

    @ProcessElement
    public void processElement(@Element TooLateRecord record) {
      TOO_LATE
          .computeIfAbsent(run + "|" + aggregation, k -> new ConcurrentLinkedQueue<>())
          .add(record.toString());
    }
  }
}
