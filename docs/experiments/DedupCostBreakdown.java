// Where DeduplicateEvents' batch time goes, against Deduplicate.keyedValues (issue 6, fourth round).
// Not part of the build: a throwaway main kept so that the figures in docs/benchmarks.md can be
// reproduced. It runs, on one embedded Flink cluster in batch at parallelism 1, the suite's
// building-blocks input and seven jobs per round: read only, DeduplicateEvents, Beam's
// Deduplicate.keyedValues, and five copies of our DoFn that each drop one thing (the SHA-256 key,
// the three counters, the second output). Rounds alternate the job order; round 0 is a warm-up.
//
//   mvn -B -q -o install -DskipTests
//   mkdir -p /tmp/dcb && javac -nowarn -cp pipelines/target/tidemark.jar -d /tmp/dcb \
//       docs/experiments/DedupCostBreakdown.java
//   OPT_OUT_TRACKING=true java -Xmx6g -Dai.djl.offline=true \
//       -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
//       -cp /tmp/dcb:pipelines/target/tidemark.jar \
//       dev.tidemark.pipelines.bench.beam.DedupCostBreakdown 1000000 4
package dev.tidemark.pipelines.bench.beam;

import dev.tidemark.transforms.DeduplicateEvents;
import dev.tidemark.transforms.PaymentEvent;
import dev.tidemark.transforms.Sha256;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.beam.runners.flink.FlinkPipelineOptions;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.ByteArrayCoder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.Timer;
import org.apache.beam.sdk.state.TimerSpec;
import org.apache.beam.sdk.state.TimerSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.TupleTagList;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Duration;

public final class DedupCostBreakdown {
  private static final Duration HORIZON = DeduplicateEvents.DEFAULT_HORIZON;

  /** DeduplicateEvents' DoFn, with its counters and its second output optional. */
  static final class VariantFn<K> extends DoFn<KV<K, PaymentEvent>, PaymentEvent> {
    @StateId("firstSeen")
    private final StateSpec<ValueState<KV<byte[], Long>>> firstSeenSpec =
        StateSpecs.value(KvCoder.of(ByteArrayCoder.of(), VarLongCoder.of()));

    @TimerId("expiry")
    private final TimerSpec expirySpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

    private final boolean counters;
    private final TupleTag<PaymentEvent> eventsTag;
    private final TupleTag<PaymentEvent> duplicatesTag; // null: no second output
    private final Counter unique = Metrics.counter("breakdown", "unique");
    private final Counter duplicates = Metrics.counter("breakdown", "duplicates");
    private final Counter conflicts = Metrics.counter("breakdown", "conflicts");

    VariantFn(
        boolean counters, TupleTag<PaymentEvent> eventsTag, TupleTag<PaymentEvent> duplicatesTag) {
      this.counters = counters;
      this.eventsTag = eventsTag;
      this.duplicatesTag = duplicatesTag;
    }

    @ProcessElement
    public void processElement(
        @Element KV<K, PaymentEvent> element,
        @StateId("firstSeen") ValueState<KV<byte[], Long>> firstSeen,
        @TimerId("expiry") Timer expiry,
        MultiOutputReceiver out) {
      PaymentEvent event = element.getValue();
      KV<byte[], Long> first = firstSeen.read();
      if (first == null) {
        if (counters) {
          unique.inc();
        }
        firstSeen.write(KV.of(event.fingerprint(), event.eventTime().getMillis()));
        expiry.withNoOutputTimestamp().set(event.eventTime().plus(HORIZON));
        out.get(eventsTag).output(event);
        return;
      }
      if (counters) {
        duplicates.inc();
        if (!Arrays.equals(first.getKey(), event.fingerprint())) {
          conflicts.inc();
        }
      }
      if (duplicatesTag != null) {
        out.get(duplicatesTag).output(event);
      }
    }

    @OnTimer("expiry")
    public void onExpiry(@StateId("firstSeen") ValueState<KV<byte[], Long>> firstSeen) {
      firstSeen.clear();
    }
  }

  /** Keys by the SHA-256 identity digest, as DeduplicateEvents does. */
  static final class KeyByDigestFn extends DoFn<PaymentEvent, KV<byte[], PaymentEvent>> {
    private transient MessageDigest sha256;

    @Setup
    public void setup() {
      sha256 = Sha256.newDigest();
    }

    @ProcessElement
    public void processElement(
        @Element PaymentEvent event, OutputReceiver<KV<byte[], PaymentEvent>> out) {
      out.output(KV.of(Sha256.prefix128(sha256, event.source(), event.id()), event));
    }
  }

  static void variant(
      PCollection<PaymentEvent> events, boolean digest, boolean counters, boolean twoOutputs) {
    TupleTag<PaymentEvent> eventsTag = new TupleTag<PaymentEvent>() {};
    TupleTag<PaymentEvent> duplicatesTag = new TupleTag<PaymentEvent>() {};
    TupleTagList others = twoOutputs ? TupleTagList.of(duplicatesTag) : TupleTagList.empty();
    PCollectionTuple outputs;
    if (digest) {
      outputs =
          events
              .apply("KeyByDigest", ParDo.of(new KeyByDigestFn()))
              .setCoder(KvCoder.of(ByteArrayCoder.of(), PaymentEvent.PaymentEventCoder.of()))
              .apply(
                  "Dedup",
                  ParDo.of(
                          new VariantFn<byte[]>(
                              counters, eventsTag, twoOutputs ? duplicatesTag : null))
                      .withOutputTags(eventsTag, others));
    } else {
      outputs =
          events
              .apply(
                  "KeyByPair",
                  WithKeys.of(PaymentEvent::identity)
                      .withKeyType(
                          TypeDescriptors.kvs(TypeDescriptors.strings(), TypeDescriptors.strings())))
              .setCoder(
                  KvCoder.of(
                      KvCoder.of(StringUtf8Coder.of(), StringUtf8Coder.of()),
                      PaymentEvent.PaymentEventCoder.of()))
              .apply(
                  "Dedup",
                  ParDo.of(
                          new VariantFn<KV<String, String>>(
                              counters, eventsTag, twoOutputs ? duplicatesTag : null))
                      .withOutputTags(eventsTag, others));
    }
    outputs.get(eventsTag).setCoder(PaymentEvent.PaymentEventCoder.of());
    FlinkBatchRuns.count(outputs.get(eventsTag), "Output");
    if (twoOutputs) {
      outputs.get(duplicatesTag).setCoder(PaymentEvent.PaymentEventCoder.of());
      FlinkBatchRuns.count(outputs.get(duplicatesTag), "Duplicates");
    }
  }

  static Pipeline pipeline(
      BenchInputs.Held<PaymentEvent> input, Consumer<PCollection<PaymentEvent>> step) {
    Pipeline pipeline = Pipeline.create(FlinkBatchRuns.options(FlinkPipelineOptions.class, 1));
    PCollection<PaymentEvent> events =
        pipeline.apply("ReadHeld", input.read(1, PaymentEvent::eventTime));
    FlinkBatchRuns.count(events, "Read");
    step.accept(events);
    return pipeline;
  }

  public static void main(String[] args) throws Exception {
    int events = Integer.parseInt(args[0]);
    int rounds = Integer.parseInt(args[1]);
    BenchInputs.Stream stream =
        BenchInputs.generate(BenchInputs.config(events, 1000, BuildingBlocksPart.SEED));
    Map<String, Consumer<PCollection<PaymentEvent>>> jobs = new LinkedHashMap<>();
    jobs.put("read only", e -> {});
    jobs.put(
        "DeduplicateEvents",
        e -> {
          DeduplicateEvents.Result r = e.apply(DeduplicateEvents.create().withHorizon(HORIZON));
          FlinkBatchRuns.count(r.events(), "Output");
          FlinkBatchRuns.count(r.duplicates(), "Duplicates");
        });
    jobs.put(
        "Deduplicate.keyedValues",
        e -> FlinkBatchRuns.count(e.apply(BeamDeduplicate.of(HORIZON)), "Output"));
    jobs.put("digest+counters+2 outputs", e -> variant(e, true, true, true));
    jobs.put("digest+counters+1 output", e -> variant(e, true, true, false));
    jobs.put("digest+no counters+2 outputs", e -> variant(e, true, false, true));
    jobs.put("pair+counters+2 outputs", e -> variant(e, false, true, true));
    jobs.put("pair+no counters+1 output", e -> variant(e, false, false, false));
    Map<String, List<Double>> seconds = new LinkedHashMap<>();
    try (BenchInputs.Held<PaymentEvent> input =
            BenchInputs.hold(stream.events, PaymentEvent.PaymentEventCoder.of());
        FlinkBatchRuns runs = FlinkBatchRuns.start(1)) {
      for (int round = 0; round < rounds; round++) {
        List<String> order = new ArrayList<>(jobs.keySet());
        if (round % 2 == 1) {
          Collections.reverse(order);
        }
        for (String name : order) {
          FlinkBatchRuns.Run run = runs.run(pipeline(input, jobs.get(name)));
          System.out.printf(
              "round %d %-30s %6.2f s, output %d%n",
              round, name, run.seconds, run.counter(FlinkBatchRuns.NAMESPACE, "Output"));
          if (round > 0) {
            seconds.computeIfAbsent(name, k -> new ArrayList<>()).add(run.seconds);
          }
        }
      }
    }
    for (Map.Entry<String, List<Double>> e : seconds.entrySet()) {
      List<Double> sorted = new ArrayList<>(e.getValue());
      Collections.sort(sorted);
      System.out.printf(
          "median %-30s %6.2f s of %s%n", e.getKey(), sorted.get(sorted.size() / 2), sorted);
    }
  }
}
