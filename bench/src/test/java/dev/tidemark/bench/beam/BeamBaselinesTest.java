package dev.tidemark.bench.beam;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;

import dev.tidemark.transforms.ComputeFeatures;
import dev.tidemark.transforms.DeduplicateEvents;
import dev.tidemark.transforms.values.Event;
import dev.tidemark.transforms.values.Features;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.join.CoGbkResult;
import org.apache.beam.sdk.transforms.join.CoGroupByKey;
import org.apache.beam.sdk.transforms.join.KeyedPCollectionTuple;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.DefaultTrigger;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TimestampedValue;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Duration;
import org.junit.Rule;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The benchmark's baselines compute what they claim, on a small generated stream: the naive {@code
 * SlidingWindows} + {@code Combine.perKey} gives the same features as {@code ComputeFeatures}'
 * on-time panes, and {@code Deduplicate.keyedValues} in event time keeps the same first copies as
 * {@code DeduplicateEvents}.
 */
@RunWith(JUnit4.class)
public class BeamBaselinesTest {
  private static final Duration SIZE = Duration.standardMinutes(5);
  private static final Duration PERIOD = Duration.standardSeconds(30);

  @Rule public final transient TestPipeline p = TestPipeline.create();

  private static BenchInputs.Stream stream() throws Exception {
    return BenchInputs.generate(BenchInputs.config(300, 20, 7L));
  }

  private PCollection<Event> create(List<Event> events) {
    List<TimestampedValue<Event>> timestamped =
        events.stream()
            .map(e -> TimestampedValue.of(e, e.eventTime()))
            .collect(Collectors.toList());
    return p.apply(
        "CreateEvents", Create.timestamped(timestamped).withCoder(Event.EventCoder.of()));
  }

  /**
   * Every event is in before the watermark moves. With a {@code Create} the Beam side let a second
   * copy through in some DirectRunner runs (Beam's own {@code DeduplicateTest.testEventTime} is
   * disabled as flaky, apache/beam#21145); holding the watermark until all elements are read makes
   * the comparison deterministic.
   */
  private PCollection<Event> stream(List<Event> events) {
    TestStream.Builder<Event> builder = TestStream.create(Event.EventCoder.of());
    for (Event e : events) {
      builder = builder.addElements(TimestampedValue.of(e, e.eventTime()));
    }
    return p.apply("StreamEvents", builder.advanceWatermarkToInfinity());
  }

  @Test
  public void naiveCombineEqualsComputeFeaturesOnTimePanes() throws Exception {
    List<Event> unique = stream().firstCopies();
    PCollection<Event> events = create(unique);
    PCollection<KV<String, String>> ours =
        events
            .apply(
                "ComputeFeatures",
                ComputeFeatures.of(SIZE, PERIOD)
                    .withoutEarlyFirings()
                    .withAllowedLateness(Duration.ZERO))
            .features()
            .apply("OursOnTime", ParDo.of(new OnTimeByWindowFn()))
            .apply("OursGlobal", global());
    PCollection<KV<String, String>> naive =
        events
            .apply("Naive", NaiveSlidingFeatures.of(SIZE, PERIOD))
            .apply("NaiveOnTime", ParDo.of(new OnTimeByWindowFn()))
            .apply("NaiveGlobal", global());
    TupleTag<String> oursTag = new TupleTag<>();
    TupleTag<String> naiveTag = new TupleTag<>();
    PCollection<String> mismatches =
        KeyedPCollectionTuple.of(oursTag, ours)
            .and(naiveTag, naive)
            .apply("Join", CoGroupByKey.create())
            .apply("Mismatches", ParDo.of(new MismatchFn(oursTag, naiveTag)));
    PAssert.that(mismatches).empty();
    long uniqueEvents = unique.size();
    PAssert.thatSingleton(naive.apply("CountNaive", Count.globally()))
        .satisfies(
            n -> {
              // Every event is in 10 windows: many account windows, so the join compared something.
              assertThat("account windows", n, greaterThan(uniqueEvents));
              return null;
            });
    p.run().waitUntilFinish();
  }

  @Test
  public void deduplicateKeyedValuesKeepsTheSameFirstCopies() throws Exception {
    BenchInputs.Stream stream = stream();
    List<Event> unique = stream.firstCopies();
    assertThat("the stream has duplicates", stream.events.size(), greaterThan(unique.size()));
    List<String> expected = new ArrayList<>();
    unique.forEach(e -> expected.add(e.source() + "#" + e.id()));
    List<String> duplicates = new ArrayList<>();
    stream.events.forEach(e -> duplicates.add(e.source() + "#" + e.id()));
    expected.forEach(duplicates::remove);
    PCollection<Event> events = stream(stream.events);
    DeduplicateEvents.Result ours =
        events.apply(
            "DeduplicateEvents",
            DeduplicateEvents.create().withHorizon(Duration.standardHours(24)));
    PCollection<Event> beam =
        events.apply("BeamDeduplicate", BeamDeduplicate.of(Duration.standardHours(24)));
    PAssert.that(identities(ours.events(), "Ours")).containsInAnyOrder(expected);
    PAssert.that(identities(beam, "Beam")).containsInAnyOrder(expected);
    PAssert.that(
            ours.duplicates()
                .apply(
                    "DuplicateIdentities",
                    MapElements.into(TypeDescriptors.strings())
                        .via(d -> d.source() + "#" + d.id())))
        .containsInAnyOrder(duplicates);
    p.run().waitUntilFinish();
  }

  /** Back into the global window with the default trigger, so both sides can be joined. */
  private static Window<KV<String, String>> global() {
    return Window.<KV<String, String>>into(new GlobalWindows())
        .triggering(DefaultTrigger.of())
        .withAllowedLateness(Duration.ZERO)
        .discardingFiredPanes();
  }

  private static PCollection<String> identities(PCollection<Event> events, String side) {
    return events.apply(
        side + "Identities",
        MapElements.into(TypeDescriptors.strings()).via(e -> e.source() + "#" + e.id()));
  }

  /** Keeps on-time panes, keyed by account and window, with the features as text. */
  static final class OnTimeByWindowFn extends DoFn<KV<String, Features>, KV<String, String>> {
    @ProcessElement
    public void processElement(
        @Element KV<String, Features> features,
        BoundedWindow window,
        PaneInfo pane,
        OutputReceiver<KV<String, String>> out) {
      if (pane.getTiming() == PaneInfo.Timing.ON_TIME) {
        out.output(KV.of(features.getKey() + " " + window, features.getValue().toString()));
      }
    }
  }

  /** Reports every account window whose features differ or exist on one side only. */
  static final class MismatchFn extends DoFn<KV<String, CoGbkResult>, String> {
    private final TupleTag<String> oursTag;
    private final TupleTag<String> naiveTag;

    MismatchFn(TupleTag<String> oursTag, TupleTag<String> naiveTag) {
      this.oursTag = oursTag;
      this.naiveTag = naiveTag;
    }

    @ProcessElement
    public void processElement(
        @Element KV<String, CoGbkResult> joined, OutputReceiver<String> out) {
      List<String> ours = new ArrayList<>();
      joined.getValue().getAll(oursTag).forEach(ours::add);
      List<String> naive = new ArrayList<>();
      joined.getValue().getAll(naiveTag).forEach(naive::add);
      if (!ours.equals(naive)) {
        out.output(joined.getKey() + ": ours " + ours + ", naive " + naive);
      }
    }
  }
}
