package dev.tidemark.transforms;

import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.DuplicateRecord;
import dev.tidemark.transforms.values.Label;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.TupleTag;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * Passes the first copy of every label and diverts the rest, keyed on the label's own CloudEvents
 * identity ({@code source}+{@code id}) and remembered for a horizon of label time: the same steps
 * and semantics as {@link DeduplicateEvents} (a copy with other content is a conflict, a bounded
 * input is deduplicated as a whole), with counters of their own ({@code labels.unique}, {@code
 * labels.duplicates}, {@code labels.conflicts}, {@code labels.dedup.liveIdentities}). A diverted
 * copy's {@link DuplicateRecord} carries the label's time as both its event and ingestion time.
 */
public final class DeduplicateLabels
    extends PTransform<PCollection<Label>, DeduplicateLabels.Result> {
  /** Prefixed to the dedup counters' names. */
  static final String COUNTER_PREFIX = TidemarkMetrics.LABELS_PREFIX;

  private final Duration horizon;

  private DeduplicateLabels(Duration horizon) {
    this.horizon = horizon;
  }

  /** Labels remembered for {@link DeduplicateEvents#DEFAULT_HORIZON}. */
  public static DeduplicateLabels create() {
    return new DeduplicateLabels(DeduplicateEvents.DEFAULT_HORIZON);
  }

  /** How long, in label time after its first copy, a label identity is remembered. */
  public DeduplicateLabels withHorizon(Duration horizon) {
    return new DeduplicateLabels(DeduplicateEvents.create().withHorizon(horizon).horizon());
  }

  @Override
  public Result expand(PCollection<Label> input) {
    TupleTag<Label> labelsTag = new TupleTag<Label>() {};
    TupleTag<DuplicateRecord> duplicatesTag = new TupleTag<DuplicateRecord>() {};
    return new Result(
        DeduplicateEvents.firstCopies(input, LABELS, horizon, labelsTag, duplicatesTag),
        labelsTag,
        duplicatesTag);
  }

  /** The first copies and the diverted duplicates. */
  public static final class Result extends PairedOutput<Label, DuplicateRecord> {
    Result(
        PCollectionTuple outputs, TupleTag<Label> labelsTag, TupleTag<DuplicateRecord> duplicates) {
      super(outputs, labelsTag, duplicates);
    }

    /** The first copy of each label identity. */
    public PCollection<Label> labels() {
      return main();
    }

    /** Every later copy inside the horizon. */
    public PCollection<DuplicateRecord> duplicates() {
      return audit();
    }
  }

  private static final DeduplicateEvents.Records<Label> LABELS =
      new DeduplicateEvents.Records<>() {
        private static final long serialVersionUID = 1L;

        @Override
        String source(Label record) {
          return record.source();
        }

        @Override
        String id(Label record) {
          return record.id();
        }

        @Override
        Instant time(Label record) {
          return record.time();
        }

        @Override
        Instant ingestionTime(Label record) {
          return record.time();
        }

        @Override
        byte[] fingerprint(Label record) {
          return record.fingerprint();
        }

        @Override
        Coder<Label> coder() {
          return Label.LabelCoder.of();
        }

        @Override
        String counterPrefix() {
          return COUNTER_PREFIX;
        }
      };
}
