package dev.tidemark.bench.beam;

import dev.tidemark.transforms.values.Event;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.transforms.Deduplicate;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.Values;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Duration;

/**
 * The benchmark baseline for {@code DeduplicateEvents}: Beam's own {@link
 * Deduplicate#keyedValues()} in event time, keyed on the same identity ({@code source}, {@code id})
 * with the same horizon. It passes the first copy of each identity and drops the others: no audit
 * output, no content comparison, no conflict counter.
 *
 * <pre>{@code
 * PCollection<Event> unique = events.apply(BeamDeduplicate.of(Duration.standardHours(24)));
 * }</pre>
 */
public final class BeamDeduplicate extends PTransform<PCollection<Event>, PCollection<Event>> {
  private final Duration horizon;

  private BeamDeduplicate(Duration horizon) {
    this.horizon = horizon;
  }

  /** Remembers each identity for {@code horizon} of event time after its first copy. */
  public static BeamDeduplicate of(Duration horizon) {
    if (horizon == null || horizon.getMillis() <= 0) {
      throw new IllegalArgumentException(
          "the horizon must be a positive duration such as PT24H, got " + horizon);
    }
    return new BeamDeduplicate(horizon);
  }

  @Override
  public PCollection<Event> expand(PCollection<Event> events) {
    return events
        .apply(
            "KeyBySourceAndId",
            WithKeys.of(Event::identity)
                .withKeyType(
                    TypeDescriptors.kvs(TypeDescriptors.strings(), TypeDescriptors.strings())))
        .setCoder(
            KvCoder.of(
                KvCoder.of(StringUtf8Coder.of(), StringUtf8Coder.of()), Event.EventCoder.of()))
        .apply(
            "Deduplicate",
            Deduplicate.<KV<String, String>, Event>keyedValues()
                .withTimeDomain(TimeDomain.EVENT_TIME)
                .withDuration(horizon))
        .apply("DropKeys", Values.create());
  }
}
