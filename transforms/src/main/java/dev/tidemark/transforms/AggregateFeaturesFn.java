package dev.tidemark.transforms;

import dev.tidemark.transforms.values.Codec;
import dev.tidemark.transforms.values.FeatureInput;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.PaymentEvent;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.IOException;
import java.util.Iterator;
import java.util.TreeSet;
import org.apache.beam.sdk.coders.CannotProvideCoderException;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderRegistry;
import org.apache.beam.sdk.transforms.Combine.CombineFn;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;

/**
 * Combines the events of one account in one window (as {@link FeatureInput}s) into {@link
 * Features}. Associative and commutative (sums, maxima, set unions, a latest-by-event-time choice
 * with a deterministic tie-break), so runners may lift it before the shuffle.
 *
 * <p>Nothing here throws on a valid record. The amount sum saturates: amounts are non-negative (the
 * parser's rule), so the sum is exact up to {@link Long#MAX_VALUE} minor units and is held there
 * beyond, with {@link Features#amountSumSaturated()} set; saturating addition of non-negative
 * numbers is still associative and commutative ({@code min(MAX, a + b + c)} whatever the order).
 * The count is a {@code long} of events, which no input can overflow.
 */
public final class AggregateFeaturesFn
    extends CombineFn<FeatureInput, AggregateFeaturesFn.Accumulator, Features> {

  /** Mutable running aggregate; private to the combine. */
  public static final class Accumulator {
    long count;
    long sumCents;

    /** Whether the true sum exceeded {@link Long#MAX_VALUE}; {@link #sumCents} is then MAX. */
    boolean sumSaturated;

    long maxCents;
    final TreeSet<String> merchants = new TreeSet<>();
    final TreeSet<String> countries = new TreeSet<>();
    long latestEventMillis = Long.MIN_VALUE;
    long latestIngestionMillis = Long.MIN_VALUE;

    void addEvent(long eventMillis, long ingestionMillis) {
      if (eventMillis > latestEventMillis
          || (eventMillis == latestEventMillis && ingestionMillis > latestIngestionMillis)) {
        latestEventMillis = eventMillis;
        latestIngestionMillis = ingestionMillis;
      }
    }

    /** Adds {@code cents} (non-negative) to the sum, saturating at {@link Long#MAX_VALUE}. */
    void addToSum(long cents, boolean saturated) {
      if (sumSaturated) {
        return;
      }
      long sum = sumCents + cents;
      if (saturated || ((sumCents ^ sum) & (cents ^ sum)) < 0) {
        sumCents = Long.MAX_VALUE;
        sumSaturated = true;
      } else {
        sumCents = sum;
      }
    }
  }

  @Override
  public Accumulator createAccumulator() {
    return new Accumulator();
  }

  @Override
  public Accumulator addInput(Accumulator acc, FeatureInput input) {
    return add(
        acc,
        input.amountCents(),
        input.merchantId(),
        input.country(),
        input.eventTimeMillis(),
        input.ingestionTimeMillis());
  }

  /** {@link #addInput} of {@code FeatureInput.of(event)}, without building it. */
  public Accumulator addEvent(Accumulator acc, PaymentEvent event) {
    return add(
        acc,
        event.amountCents(),
        event.merchantId(),
        event.country(),
        event.eventTime().getMillis(),
        event.ingestionTime().getMillis());
  }

  private static Accumulator add(
      Accumulator acc,
      long amountCents,
      @Nullable String merchantId,
      @Nullable String country,
      long eventMillis,
      long ingestionMillis) {
    acc.count++;
    acc.addToSum(amountCents, false);
    acc.maxCents = Math.max(acc.maxCents, amountCents);
    if (merchantId != null) {
      acc.merchants.add(merchantId);
    }
    if (country != null) {
      acc.countries.add(country);
    }
    acc.addEvent(eventMillis, ingestionMillis);
    return acc;
  }

  @Override
  public Accumulator mergeAccumulators(Iterable<Accumulator> accumulators) {
    Iterator<Accumulator> it = accumulators.iterator();
    Accumulator merged = it.hasNext() ? it.next() : createAccumulator();
    while (it.hasNext()) {
      mergeInto(merged, it.next());
    }
    return merged;
  }

  /** Adds {@code other} to {@code into} (which it returns); {@code other} is not changed. */
  static Accumulator mergeInto(Accumulator into, Accumulator other) {
    into.count += other.count;
    into.addToSum(other.sumCents, other.sumSaturated);
    into.maxCents = Math.max(into.maxCents, other.maxCents);
    into.merchants.addAll(other.merchants);
    into.countries.addAll(other.countries);
    into.addEvent(other.latestEventMillis, other.latestIngestionMillis);
    return into;
  }

  @Override
  public Features extractOutput(Accumulator acc) {
    return output(acc);
  }

  /** The features of an accumulator. */
  static Features output(Accumulator acc) {
    return new Features(
        acc.count,
        acc.sumCents,
        acc.maxCents,
        acc.merchants.size(),
        acc.countries.size(),
        Instant.ofEpochMilli(acc.latestEventMillis),
        Instant.ofEpochMilli(acc.latestIngestionMillis),
        acc.sumSaturated);
  }

  @Override
  public Coder<Accumulator> getAccumulatorCoder(
      CoderRegistry registry, Coder<FeatureInput> inputCoder) throws CannotProvideCoderException {
    return AccumulatorCoder.INSTANCE;
  }

  @Override
  public Coder<Features> getDefaultOutputCoder(
      CoderRegistry registry, Coder<FeatureInput> inputCoder) {
    return Features.FeaturesCoder.of();
  }

  /** Compact coder for the accumulator (sets in sorted order, so it is deterministic). */
  static final class AccumulatorCoder extends Codec.DataCoder<Accumulator> {
    private static final long serialVersionUID = 1L;

    /** Version 1: the fields {@link #write} writes, in its order. */
    @Override
    protected int version() {
      return 1;
    }

    static final AccumulatorCoder INSTANCE = new AccumulatorCoder();

    /**
     * The accumulator has no value equality, so Beam must compare encodings (the DirectRunner's
     * mutation checks warned on every slice accumulator otherwise).
     */
    @Override
    public boolean consistentWithEquals() {
      return false;
    }

    @Override
    protected void write(Accumulator value, DataOutput out) throws IOException {
      out.writeLong(value.count);
      out.writeLong(value.sumCents);
      out.writeBoolean(value.sumSaturated);
      out.writeLong(value.maxCents);
      Codec.writeStrings(java.util.List.copyOf(value.merchants), out);
      Codec.writeStrings(java.util.List.copyOf(value.countries), out);
      out.writeLong(value.latestEventMillis);
      out.writeLong(value.latestIngestionMillis);
    }

    @Override
    protected Accumulator read(int version, DataInputStream in) throws IOException {
      Accumulator acc = new Accumulator();
      acc.count = in.readLong();
      acc.sumCents = in.readLong();
      acc.sumSaturated = in.readBoolean();
      acc.maxCents = in.readLong();
      acc.merchants.addAll(Codec.readStrings(in));
      acc.countries.addAll(Codec.readStrings(in));
      acc.latestEventMillis = in.readLong();
      acc.latestIngestionMillis = in.readLong();
      return acc;
    }
  }
}
