package dev.tidemark.transforms;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.state.BagState;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.Timer;
import org.apache.beam.sdk.state.TimerSpec;
import org.apache.beam.sdk.state.TimerSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.SerializableFunction;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Instant;

/**
 * Holds a stream's elements per key and minute of event time until the watermark passes that
 * minute, then hands them on together, each at its own timestamp and in timestamp order. The
 * elements, their timestamps and their lateness downstream are unchanged: while held, an element
 * holds the output watermark at its timestamp.
 *
 * <p>What it is for: a keyed step downstream that buffers much state for a few keys ({@link
 * DetectDrift}'s CUSUM buffer) receives its input in few bundles. A runner that copies state for
 * every bundle (the DirectRunner copies each state cell a bundle touches) would otherwise copy that
 * buffer for every small bundle an upstream step emits. Here only a minute of one key's elements is
 * held. It pays only where the state downstream is large: before the evaluations' windowed combine
 * it cost more than it saved (measured on the bundled sample).
 *
 * <p>Input in the global window (the held elements are state of the global window).
 */
public final class GatherByMinute<T> extends PTransform<PCollection<T>, PCollection<T>> {
  /** The event time over which one key's elements are gathered. */
  static final long MINUTE_MILLIS = 60_000;

  private final SerializableFunction<T, String> key;

  private GatherByMinute(SerializableFunction<T, String> key) {
    this.key = Objects.requireNonNull(key, "key");
  }

  /** Gathers by {@code key} (and minute). */
  public static <T> GatherByMinute<T> by(SerializableFunction<T, String> key) {
    return new GatherByMinute<>(key);
  }

  @Override
  public PCollection<T> expand(PCollection<T> elements) {
    Coder<T> coder = elements.getCoder();
    return elements
        .apply("ByMinute", ParDo.of(new ByMinuteFn<>(key)))
        .setCoder(
            KvCoder.of(StringUtf8Coder.of(), TimestampedValue.TimestampedValueCoder.of(coder)))
        .apply("Gather", ParDo.of(new GatherFn<>(coder)))
        .setCoder(coder);
  }

  /** Keys each element by its key and the minute of its timestamp, keeping the timestamp. */
  static final class ByMinuteFn<T> extends DoFn<T, KV<String, TimestampedValue<T>>> {
    private final SerializableFunction<T, String> key;

    ByMinuteFn(SerializableFunction<T, String> key) {
      this.key = key;
    }

    @ProcessElement
    public void processElement(
        @Element T element,
        @Timestamp Instant timestamp,
        OutputReceiver<KV<String, TimestampedValue<T>>> out) {
      long minute = Math.floorDiv(timestamp.getMillis(), MINUTE_MILLIS);
      out.output(
          KV.of(key.apply(element) + '\u0001' + minute, TimestampedValue.of(element, timestamp)));
    }
  }

  /** Holds one key's minute until the watermark passes it; then outputs it in timestamp order. */
  static final class GatherFn<T> extends DoFn<KV<String, TimestampedValue<T>>, T> {
    static final String HELD = "held";
    static final String EARLIEST = "earliest";
    static final String RELEASE = "release";

    @StateId(HELD)
    private final StateSpec<BagState<TimestampedValue<T>>> heldSpec;

    @StateId(EARLIEST)
    private final StateSpec<ValueState<Long>> earliestSpec = StateSpecs.value(VarLongCoder.of());

    @TimerId(RELEASE)
    private final TimerSpec releaseSpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

    GatherFn(Coder<T> coder) {
      this.heldSpec = StateSpecs.bag(TimestampedValue.TimestampedValueCoder.of(coder));
    }

    /**
     * A minute: the elements are output at their own timestamps, up to a minute before the timer's.
     * Streaming runners honour the timer's output timestamp (the earliest element's), which allows
     * them anyway; the FlinkRunner in batch checks against the timer's firing time instead.
     */
    @Override
    @SuppressWarnings("deprecation")
    public org.joda.time.Duration getAllowedTimestampSkew() {
      return org.joda.time.Duration.millis(MINUTE_MILLIS);
    }

    @ProcessElement
    public void processElement(
        @Element KV<String, TimestampedValue<T>> element,
        @Timestamp Instant timestamp,
        @StateId(HELD) BagState<TimestampedValue<T>> held,
        @StateId(EARLIEST) ValueState<Long> earliest,
        @TimerId(RELEASE) Timer release) {
      held.add(element.getValue());
      long at = timestamp.getMillis();
      Long hold = earliest.read();
      if (hold == null || at < hold) {
        // The output watermark waits for the earliest held element, output at its timestamp.
        long minuteEnd = (Math.floorDiv(at, MINUTE_MILLIS) + 1) * MINUTE_MILLIS - 1;
        long fire = Math.min(minuteEnd, GlobalWindow.INSTANCE.maxTimestamp().getMillis());
        release.withOutputTimestamp(timestamp).set(new Instant(fire));
        earliest.write(at);
      }
    }

    @OnTimer(RELEASE)
    public void onRelease(
        OnTimerContext context,
        @StateId(HELD) BagState<TimestampedValue<T>> held,
        @StateId(EARLIEST) ValueState<Long> earliest) {
      List<TimestampedValue<T>> ready = new ArrayList<>();
      held.read().forEach(ready::add);
      held.clear();
      earliest.clear();
      ready.sort(Comparator.comparing(TimestampedValue::getTimestamp));
      for (TimestampedValue<T> element : ready) {
        context.outputWithTimestamp(element.getValue(), element.getTimestamp());
      }
    }
  }
}
