package dev.tidemark.bench.beam;

import dev.tidemark.transforms.values.Event;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.PaymentFeatures;
import dev.tidemark.transforms.values.PaymentFields;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.HashSet;
import java.util.Set;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderRegistry;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.sdk.transforms.Combine.CombineFn;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.windowing.SlidingWindows;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * The benchmark baseline for {@code ComputeFeatures}: a plain {@code SlidingWindows} with Beam's
 * default trigger (one on-time pane, no allowed lateness) and {@code Combine.perKey} of a naive
 * accumulator that computes the same five features (count, sum, max, distinct merchants, distinct
 * countries, with the same two clocks) by keeping hash sets of merchants and countries. No too-late
 * gate, no early or late panes: late data is dropped by the runner and only counted there.
 *
 * <pre>{@code
 * PCollection<KV<String, Features>> features =
 *     events.apply(NaiveSlidingFeatures.of(Duration.standardMinutes(5), Duration.standardSeconds(30)));
 * }</pre>
 */
public final class NaiveSlidingFeatures
    extends PTransform<PCollection<Event>, PCollection<KV<String, Features>>> {
  private final Duration size;
  private final Duration period;

  private NaiveSlidingFeatures(Duration size, Duration period) {
    this.size = size;
    this.period = period;
  }

  /** Sliding windows of {@code size} starting every {@code period}. */
  public static NaiveSlidingFeatures of(Duration size, Duration period) {
    if (size == null || period == null || period.getMillis() <= 0 || period.isLongerThan(size)) {
      throw new IllegalArgumentException(
          "need 0 < period <= size, such as PT5M every PT30S; got " + size + " every " + period);
    }
    return new NaiveSlidingFeatures(size, period);
  }

  @Override
  public PCollection<KV<String, Features>> expand(PCollection<Event> events) {
    return events
        .apply("Window", Window.<Event>into(SlidingWindows.of(size).every(period)))
        .apply(
            "KeyByAccount",
            MapElements.into(
                    TypeDescriptors.kvs(TypeDescriptors.strings(), TypeDescriptor.of(Event.class)))
                .via((Event e) -> KV.of(e.key(), e)))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), Event.EventCoder.of()))
        .apply("CombineFeatures", Combine.perKey(new NaiveFeaturesFn()))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), Features.FeaturesCoder.of()));
  }

  /** The naive accumulator: running sums and hash sets. */
  static final class Accumulator {
    long count;
    long sumCents;
    long maxCents;
    final Set<String> merchants = new HashSet<>();
    final Set<String> countries = new HashSet<>();
    long latestEventMillis = Long.MIN_VALUE;
    long latestIngestionMillis = Long.MIN_VALUE;

    void latest(long eventMillis, long ingestionMillis) {
      if (eventMillis > latestEventMillis
          || (eventMillis == latestEventMillis && ingestionMillis > latestIngestionMillis)) {
        latestEventMillis = eventMillis;
        latestIngestionMillis = ingestionMillis;
      }
    }
  }

  /** The five features, computed the obvious way. */
  static final class NaiveFeaturesFn extends CombineFn<Event, Accumulator, Features> {
    private static final PaymentFields PAYMENT = PaymentFields.bundled();

    @Override
    public Accumulator createAccumulator() {
      return new Accumulator();
    }

    @Override
    public Accumulator addInput(Accumulator acc, Event event) {
      acc.count++;
      long cents = PAYMENT.amountCents(event);
      acc.sumCents += cents;
      acc.maxCents = Math.max(acc.maxCents, cents);
      String merchant = PAYMENT.merchantId(event);
      if (merchant != null) {
        acc.merchants.add(merchant);
      }
      String country = PAYMENT.country(event);
      if (country != null) {
        acc.countries.add(country);
      }
      acc.latest(event.eventTime().getMillis(), event.ingestionTime().getMillis());
      return acc;
    }

    @Override
    public Accumulator mergeAccumulators(Iterable<Accumulator> accumulators) {
      Accumulator merged = new Accumulator();
      for (Accumulator acc : accumulators) {
        merged.count += acc.count;
        merged.sumCents += acc.sumCents;
        merged.maxCents = Math.max(merged.maxCents, acc.maxCents);
        merged.merchants.addAll(acc.merchants);
        merged.countries.addAll(acc.countries);
        merged.latest(acc.latestEventMillis, acc.latestIngestionMillis);
      }
      return merged;
    }

    @Override
    public Features extractOutput(Accumulator acc) {
      return PaymentFeatures.of(
          acc.count,
          acc.sumCents,
          acc.maxCents,
          acc.merchants.size(),
          acc.countries.size(),
          new Instant(acc.latestEventMillis),
          new Instant(acc.latestIngestionMillis));
    }

    @Override
    public Coder<Accumulator> getAccumulatorCoder(CoderRegistry registry, Coder<Event> inputCoder) {
      return AccumulatorCoder.INSTANCE;
    }
  }

  /** A plain coder for the accumulator: fields, then the sets as counted UTF strings. */
  static final class AccumulatorCoder extends AtomicCoder<Accumulator> {
    static final AccumulatorCoder INSTANCE = new AccumulatorCoder();

    @Override
    public void encode(Accumulator value, OutputStream outStream) throws IOException {
      DataOutputStream out = new DataOutputStream(outStream);
      out.writeLong(value.count);
      out.writeLong(value.sumCents);
      out.writeLong(value.maxCents);
      writeSet(value.merchants, out);
      writeSet(value.countries, out);
      out.writeLong(value.latestEventMillis);
      out.writeLong(value.latestIngestionMillis);
      out.flush();
    }

    @Override
    public Accumulator decode(InputStream inStream) throws IOException {
      DataInputStream in = new DataInputStream(inStream);
      Accumulator acc = new Accumulator();
      acc.count = in.readLong();
      acc.sumCents = in.readLong();
      acc.maxCents = in.readLong();
      readSet(acc.merchants, in);
      readSet(acc.countries, in);
      acc.latestEventMillis = in.readLong();
      acc.latestIngestionMillis = in.readLong();
      return acc;
    }

    private static void writeSet(Set<String> set, DataOutputStream out) throws IOException {
      out.writeInt(set.size());
      for (String s : set) {
        out.writeUTF(s);
      }
    }

    private static void readSet(Set<String> set, DataInputStream in) throws IOException {
      int n = in.readInt();
      for (int i = 0; i < n; i++) {
        set.add(in.readUTF());
      }
    }
  }
}
