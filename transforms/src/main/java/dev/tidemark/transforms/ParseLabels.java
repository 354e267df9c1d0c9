package dev.tidemark.transforms;

import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.util.Utf8;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.DeadLetterReason;
import dev.tidemark.transforms.values.Label;
import dev.tidemark.transforms.values.RawRecord;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithFailures;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.TupleTagList;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;

/**
 * Reads a labels stream: each record a {@link Label} (a structured-mode CloudEvent of type {@value
 * Label#TYPE}) timestamped with the label's own time, or a {@link DeadLetter} with the reason its
 * parsing gave (step {@value #STEP}). Every record ends in exactly one of the two, which the
 * counters {@code labels.read}, {@code labels.valid} and {@code labels.deadLetters} prove.
 */
public final class ParseLabels
    extends PTransform<
        PCollection<RawRecord>, WithFailures.Result<PCollection<Label>, DeadLetter>> {
  /** The step name written in dead letters from this transform. */
  public static final String STEP = "ParseLabels";

  static final String READ = TidemarkMetrics.LABELS_PREFIX + TidemarkMetrics.READ;
  static final String VALID = TidemarkMetrics.LABELS_PREFIX + TidemarkMetrics.VALID;
  static final String DEAD_LETTERS = TidemarkMetrics.LABELS_PREFIX + TidemarkMetrics.DEAD_LETTERS;

  /** The largest label record read; a larger one is dead-lettered as oversized. */
  public static final int MAX_LABEL_BYTES = 65_536;

  private final Duration maxFutureSkew;

  private ParseLabels(Duration maxFutureSkew) {
    this.maxFutureSkew = maxFutureSkew;
  }

  /** Labels read with the events' default future skew ({@link ParseCloudEvents}). */
  public static ParseLabels create() {
    return new ParseLabels(ParseCloudEvents.DEFAULT_MAX_FUTURE_SKEW);
  }

  /**
   * How far a label's own time may lie after its record's ingestion time before the label is
   * dead-lettered as {@code time_in_future}: a producer clock ahead would otherwise stamp it ahead
   * of a watermark that its source never moves.
   */
  public ParseLabels withMaxFutureSkew(Duration maxFutureSkew) {
    if (maxFutureSkew.getMillis() < 0) {
      throw new IllegalArgumentException(
          "withMaxFutureSkew(" + maxFutureSkew + "): must not be negative");
    }
    return new ParseLabels(maxFutureSkew);
  }

  @Override
  public WithFailures.Result<PCollection<Label>, DeadLetter> expand(PCollection<RawRecord> input) {
    TupleTag<Label> labelsTag = new TupleTag<Label>() {};
    TupleTag<DeadLetter> failuresTag = new TupleTag<DeadLetter>() {};
    PCollectionTuple outputs =
        input.apply(
            "ParseLabel",
            ParDo.of(new ParseLabelFn(labelsTag, failuresTag, maxFutureSkew))
                .withOutputTags(labelsTag, TupleTagList.of(failuresTag)));
    outputs.get(labelsTag).setCoder(Label.LabelCoder.of());
    outputs.get(failuresTag).setCoder(DeadLetter.DeadLetterCoder.of());
    return WithFailures.Result.of(outputs, labelsTag, failuresTag);
  }

  static final class ParseLabelFn extends DoFn<RawRecord, Label> {
    private final TupleTag<Label> labelsTag;
    private final TupleTag<DeadLetter> failuresTag;
    private final Counter read = TidemarkMetrics.counter(READ);
    private final Counter valid = TidemarkMetrics.counter(VALID);
    private final Counter deadLetters = TidemarkMetrics.counter(DEAD_LETTERS);

    private final Duration maxFutureSkew;

    ParseLabelFn(
        TupleTag<Label> labelsTag, TupleTag<DeadLetter> failuresTag, Duration maxFutureSkew) {
      this.labelsTag = labelsTag;
      this.failuresTag = failuresTag;
      this.maxFutureSkew = maxFutureSkew;
    }

    @ProcessElement
    public void processElement(@Element RawRecord record, MultiOutputReceiver out) {
      read.inc();
      DeadLetter rejected = rejection(record);
      if (rejected == null) {
        String text = Utf8.decodeOrNull(record.payload());
        if (text == null) {
          rejected =
              deadLetter(record, DeadLetterReason.INVALID_UTF8, "the record is not UTF-8", null);
        } else {
          try {
            Label label = Label.parse(text);
            if (!ParseCloudEvents.ParseCloudEventsFn.isLaterThan(
                label.time(), record.ingestionTime(), maxFutureSkew)) {
              valid.inc();
              out.get(labelsTag).outputWithTimestamp(label, label.time());
              return;
            }
            rejected =
                deadLetter(
                    record,
                    DeadLetterReason.TIME_IN_FUTURE,
                    "label time "
                        + label.time()
                        + " is more than the allowed skew of "
                        + maxFutureSkew.toPeriod()
                        + " after its ingestion time "
                        + record.ingestionTime()
                        + " (a producer clock ahead?); fix the producer's clock or raise"
                        + " --maxFutureSkew",
                    null);
          } catch (Label.Invalid e) {
            rejected = deadLetter(record, e.reason(), e.getMessage(), e.getCause());
          }
        }
      }
      deadLetters.inc();
      out.get(failuresTag).output(rejected);
    }

    /** The dead letter of a record its source rejected, or one too large to read; else null. */
    private static @Nullable DeadLetter rejection(RawRecord record) {
      DeadLetterReason sourceError = record.sourceError();
      if (sourceError != null) {
        return new DeadLetter(
            sourceError,
            String.valueOf(record.sourceErrorMessage()),
            "Source",
            record.origin(),
            record.payload(),
            null);
      }
      if (record.payload().length > MAX_LABEL_BYTES) {
        return deadLetter(
            record,
            DeadLetterReason.OVERSIZED_RECORD,
            "the label has " + record.payload().length + " bytes, more than " + MAX_LABEL_BYTES,
            null);
      }
      return null;
    }

    private static DeadLetter deadLetter(
        RawRecord record, DeadLetterReason reason, String message, @Nullable Throwable cause) {
      return new DeadLetter(
          reason,
          message,
          STEP,
          record.origin(),
          record.payload(),
          cause == null ? null : cause.toString());
    }
  }
}
