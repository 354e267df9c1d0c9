package dev.tidemark.spec;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderRegistry;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.junit.Rule;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Every aggregation against a plain computation over random events, in any order of combining;
 * overflow; the accumulator coder; a custom {@code CombineFn} for one feature in a pipeline.
 */
@RunWith(JUnit4.class)
public class SpecFeaturesFnTest {
  @Rule public final transient TestPipeline p = TestPipeline.create();

  private static final ObjectMapper JSON = new ObjectMapper();

  static final PipelineSpec SPEC =
      SpecLoader.parse(
          String.join(
              "\n",
              "spec: 1",
              "name: all",
              "events:",
              "  types: [t.v1]",
              "  key: k",
              "  fields:",
              "    k: {type: string}",
              "    v: {type: integer}",
              "    d: {type: decimal, scale: 2, optional: true}",
              "    s: {type: string, optional: true}",
              "    ok: {type: boolean}",
              "features:",
              "  - {name: n, aggregate: count}",
              "  - {name: failures, aggregate: count, where: {ok: false}}",
              "  - {name: withD, aggregate: count, of: d}",
              "  - {name: sumV, aggregate: sum, of: v}",
              "  - {name: minV, aggregate: min, of: v}",
              "  - {name: maxD, aggregate: max, of: d, where: {ok: true}}",
              "  - {name: meanV, aggregate: mean, of: v}",
              "  - {name: distinctS, aggregate: distinct, of: s, maxDistinct: 6}",
              "  - {name: distinctV, aggregate: distinct, of: v}",
              "  - {name: lastV, aggregate: last, of: v}",
              "  - {name: okEvents, aggregate: custom, type: integer}",
              "model: {uri: m.ubj}"),
          "all.yaml");
  static final FieldParser PARSER = FieldParser.of(SPEC);

  /** Counts the events whose {@code ok} is true: the custom feature. */
  static final class CountOkFn extends Combine.CombineFn<FieldValues, long[], Long> {
    private final int ok = PARSER.indexOf("ok");

    @Override
    public long[] createAccumulator() {
      return new long[1];
    }

    @Override
    public long[] addInput(long[] acc, FieldValues input) {
      acc[0] += input.getLong(ok);
      return acc;
    }

    @Override
    public long[] mergeAccumulators(Iterable<long[]> accs) {
      long[] merged = new long[1];
      for (long[] acc : accs) {
        merged[0] += acc[0];
      }
      return merged;
    }

    @Override
    public Long extractOutput(long[] acc) {
      return acc[0];
    }

    @Override
    public Coder<long[]> getAccumulatorCoder(CoderRegistry registry, Coder<FieldValues> input) {
      return new LongArrayCoder();
    }
  }

  /** A one-long array coder for the custom feature's accumulator. */
  static final class LongArrayCoder extends org.apache.beam.sdk.coders.CustomCoder<long[]> {
    @Override
    public void encode(long[] value, java.io.OutputStream out) throws java.io.IOException {
      new java.io.DataOutputStream(out).writeLong(value[0]);
    }

    @Override
    public long[] decode(java.io.InputStream in) throws java.io.IOException {
      return new long[] {new java.io.DataInputStream(in).readLong()};
    }
  }

  /** Twice the sum of v: a user's own aggregation for one feature. */
  static final class DoubledSumFn extends Combine.CombineFn<FieldValues, long[], Long> {
    private final int v = PARSER.indexOf("v");

    @Override
    public long[] createAccumulator() {
      return new long[1];
    }

    @Override
    public long[] addInput(long[] acc, FieldValues input) {
      acc[0] += 2 * input.getLong(v);
      return acc;
    }

    @Override
    public long[] mergeAccumulators(Iterable<long[]> accs) {
      long[] merged = new long[1];
      accs.forEach(a -> merged[0] += a[0]);
      return merged;
    }

    @Override
    public Long extractOutput(long[] acc) {
      return acc[0];
    }

    @Override
    public Coder<long[]> getAccumulatorCoder(CoderRegistry registry, Coder<FieldValues> input) {
      return new LongArrayCoder();
    }
  }

  static final SpecFeaturesFn FN =
      SpecFeaturesFn.of(SPEC).withFeatureFn("okEvents", new CountOkFn());

  static List<FieldValues> randomEvents(Random random, int count) throws Exception {
    List<FieldValues> events = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      ObjectNode data = JSON.createObjectNode();
      data.put("k", "key");
      data.put("v", random.nextInt(41) - 20);
      if (random.nextBoolean()) {
        data.put("d", new java.math.BigDecimal(random.nextInt(100_000)).movePointLeft(2));
      }
      if (random.nextInt(4) > 0) {
        data.put("s", "s" + random.nextInt(10));
      }
      data.put("ok", random.nextInt(3) > 0);
      events.add(PARSER.parse(data, 1_000 + random.nextInt(20), 5_000 + random.nextInt(5)));
    }
    return events;
  }

  /** Combines {@code events} in random slices, merged in random order through the coder. */
  static FeatureValues combineShuffled(SpecFeaturesFn fn, List<FieldValues> events, Random random)
      throws Exception {
    Coder<SpecFeaturesFn.Accumulator> coder =
        fn.getAccumulatorCoder(CoderRegistry.createDefault(), PARSER.coder());
    List<FieldValues> shuffled = new ArrayList<>(events);
    Collections.shuffle(shuffled, random);
    List<SpecFeaturesFn.Accumulator> parts = new ArrayList<>();
    int at = 0;
    while (at < shuffled.size()) {
      int end = Math.min(shuffled.size(), at + 1 + random.nextInt(7));
      SpecFeaturesFn.Accumulator acc = fn.createAccumulator();
      for (FieldValues event : shuffled.subList(at, end)) {
        fn.addInput(acc, event);
      }
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      coder.encode(acc, bytes);
      parts.add(coder.decode(new ByteArrayInputStream(bytes.toByteArray())));
      at = end;
    }
    Collections.shuffle(parts, random);
    return fn.extractOutput(fn.mergeAccumulators(parts));
  }

  @Test
  public void everyAggregationMatchesAPlainComputationInAnyOrder() throws Exception {
    Random random = new Random(7);
    for (int round = 0; round < 50; round++) {
      List<FieldValues> events = randomEvents(random, 1 + random.nextInt(40));
      FeatureValues actual = combineShuffled(FN, events, random);
      int v = PARSER.indexOf("v");
      int d = PARSER.indexOf("d");
      int s = PARSER.indexOf("s");
      int ok = PARSER.indexOf("ok");
      long failures = 0;
      long withD = 0;
      long sum = 0;
      long min = Long.MAX_VALUE;
      long maxD = Long.MIN_VALUE;
      long okEvents = 0;
      TreeSet<String> strings = new TreeSet<>();
      TreeSet<Long> longs = new TreeSet<>();
      FieldValues last = null;
      for (FieldValues e : events) {
        failures += e.getLong(ok) == 0 ? 1 : 0;
        okEvents += e.getLong(ok);
        withD += e.isPresent(d) ? 1 : 0;
        sum += e.getLong(v);
        min = Math.min(min, e.getLong(v));
        if (e.isPresent(d) && e.getLong(ok) == 1) {
          maxD = Math.max(maxD, e.getLong(d));
        }
        if (e.isPresent(s)) {
          strings.add(e.getString(s));
        }
        longs.add(e.getLong(v));
        if (last == null
            || e.eventTimeMillis() > last.eventTimeMillis()
            || (e.eventTimeMillis() == last.eventTimeMillis()
                && (e.ingestionTimeMillis() > last.ingestionTimeMillis()
                    || (e.ingestionTimeMillis() == last.ingestionTimeMillis()
                        && e.getLong(v) > last.getLong(v))))) {
          last = e;
        }
      }
      String at = "round " + round + ": " + actual;
      assertThat(at, actual.getLong(0), is((long) events.size()));
      assertThat(at, actual.getLong(1), is(failures));
      assertThat(at, actual.getLong(2), is(withD));
      assertThat(at, actual.getLong(3), is(sum));
      assertThat(at, actual.getLong(4), is(min));
      assertThat(at, actual.isPresent(5), is(maxD != Long.MIN_VALUE));
      if (actual.isPresent(5)) {
        assertThat(at, actual.getLong(5), is(maxD));
      }
      assertThat(at, actual.getDouble(6), is((double) sum / events.size()));
      assertThat(at, actual.getLong(7), is((long) Math.min(6, strings.size())));
      assertThat(at, actual.isSaturated(7), is(strings.size() > 6));
      assertThat(at, actual.getLong(8), is((long) longs.size()));
      assertThat(at, actual.getLong(9), is(last.getLong(v)));
      assertThat(at, actual.getLong(10), is(okEvents));
      assertThat(at, actual.latestEventMillis(), is(last.eventTimeMillis()));
      assertThat(at, combineShuffled(FN, events, random), is(actual));
    }
  }

  static FieldValues withV(long v) throws Exception {
    ObjectNode data = JSON.createObjectNode().put("k", "x").put("v", v).put("ok", true);
    return PARSER.parse(data, 0, 0);
  }

  @Test
  public void aSumSaturatesAtTheBoundInTheDirectionOfItsOverflowWhateverTheOrder()
      throws Exception {
    Random random = new Random(3);
    List<FieldValues> up = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      up.add(withV(Long.MAX_VALUE / 2));
    }
    FeatureValues over = combineShuffled(FN, up, random);
    assertThat(over.getLong(3), is(Long.MAX_VALUE));
    assertThat(over.isSaturated(3), is(true));
    List<FieldValues> down = List.of(withV(Long.MIN_VALUE), withV(-1));
    FeatureValues under = combineShuffled(FN, down, random);
    assertThat(under.getLong(3), is(Long.MIN_VALUE));
    assertThat(under.isSaturated(3), is(true));
    // MAX + 1 - 1 is exact in every order: the sum is kept in 128 bits until the output.
    List<FieldValues> back = List.of(withV(Long.MAX_VALUE), withV(1), withV(-1));
    for (int i = 0; i < 10; i++) {
      FeatureValues exact = combineShuffled(FN, back, random);
      assertThat(exact.getLong(3), is(Long.MAX_VALUE));
      assertThat(exact.isSaturated(3), is(false));
      assertThat(exact.getDouble(6), is((double) Long.MAX_VALUE / 3));
    }
  }

  @Test
  public void theInputCoderWritesOnlyWhatTheFeaturesRead() throws Exception {
    PipelineSpec logins = BundledSpecs.load("logins");
    FieldParser parser = FieldParser.of(logins);
    FieldValues values =
        parser.parse(
            JSON.readTree(
                "{\"userId\":\"u1\",\"ip\":\"10.0.0.1\",\"success\":false,\"device\":\"d\"}"),
            1_767_225_600_000L,
            1_767_225_600_250L);
    FieldValues.Coder coder = SpecFeaturesFn.of(logins).inputCoder();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    coder.encode(values, bytes);
    FieldValues decoded = coder.decode(new ByteArrayInputStream(bytes.toByteArray()));
    assertThat(decoded.isPresent(parser.indexOf("userId")), is(false));
    assertThat(decoded.getString(parser.indexOf("ip")), is("10.0.0.1"));
    assertThat(decoded.getString(parser.indexOf("device")), is("d"));
    assertThat(decoded.isPresent(parser.indexOf("success")), is(true));
    assertThat(decoded.getLong(parser.indexOf("success")), is(0L));
    assertThat(decoded.ingestionTimeMillis(), is(1_767_225_600_250L));
    SpecFeaturesFn fn = SpecFeaturesFn.of(logins);
    assertThat(
        fn.extractOutput(fn.addInput(fn.createAccumulator(), decoded)),
        is(fn.extractOutput(fn.addInput(fn.createAccumulator(), values))));
  }

  @Test
  public void featureValuesRoundTripAndAnUnknownVersionIsRefused() throws Exception {
    List<FieldValues> events = randomEvents(new Random(1), 20);
    SpecFeaturesFn.Accumulator acc = FN.createAccumulator();
    events.forEach(e -> FN.addInput(acc, e));
    FeatureValues values = FN.extractOutput(acc);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    FeatureValues.Coder.of().encode(values, bytes);
    byte[] encoded = bytes.toByteArray();
    assertThat(FeatureValues.Coder.of().decode(new ByteArrayInputStream(encoded)), is(values));
    encoded[0] = 2;
    org.apache.beam.sdk.coders.CoderException e =
        assertThrows(
            org.apache.beam.sdk.coders.CoderException.class,
            () -> FeatureValues.Coder.of().decode(new ByteArrayInputStream(encoded)));
    assertThat(e.getMessage(), containsString("FeatureValues.Coder cannot read format version 2"));
  }

  @Test
  public void aVectorFollowsTheFeatureTypes() throws Exception {
    FeatureValues values = FN.extractOutput(FN.addInput(FN.createAccumulator(), withV(4)));
    float[] vector = FN.toVector(values);
    assertThat(vector.length, is(11));
    assertThat(vector[0], is(1f));
    assertThat(Float.isNaN(vector[5]), is(true));
    assertThat(vector[6], is(4f));
  }

  @Test
  public void aCustomFeatureWithoutItsFnIsRefusedWithHowToFixIt() {
    IllegalStateException e =
        assertThrows(
            IllegalStateException.class, () -> SpecFeaturesFn.of(SPEC).createAccumulator());
    assertThat(
        e.getMessage(),
        containsString("the feature 'okEvents' of the spec 'all' is custom: supply its CombineFn"));
    assertThrows(
        IllegalArgumentException.class,
        () -> SpecFeaturesFn.of(SPEC).withFeatureFn("nope", new CountOkFn()));
  }

  @Test
  public void aCustomFnReplacesOneFeatureInAPipelineAndTheRestComesFromTheSpec() throws Exception {
    // The spec's sumV is replaced by a Java sum of v doubled; the other features stay the spec's.
    SpecFeaturesFn fn = FN.withFeatureFn("sumV", new DoubledSumFn());
    List<KV<String, FieldValues>> input = new ArrayList<>();
    for (long value : new long[] {1, 2, 3}) {
      input.add(KV.of("a", withV(value)));
    }
    input.add(KV.of("b", withV(10)));
    PCollection<KV<String, FeatureValues>> features =
        p.apply(Create.of(input).withCoder(KvCoder.of(StringUtf8Coder.of(), PARSER.coder())))
            .apply(Combine.perKey(fn));
    PCollection<String> summary =
        features.apply(
            MapElements.into(TypeDescriptors.strings())
                .via(
                    kv ->
                        kv.getKey()
                            + " n="
                            + kv.getValue().getLong(0)
                            + " sumV="
                            + kv.getValue().getLong(3)
                            + " maxV.min="
                            + kv.getValue().getLong(4)
                            + " okEvents="
                            + kv.getValue().getLong(10)));
    PAssert.that(summary)
        .containsInAnyOrder(
            "a n=3 sumV=12 maxV.min=1 okEvents=3", "b n=1 sumV=20 maxV.min=10 okEvents=1");
    p.run().waitUntilFinish();
  }
}
