package dev.tidemark.transforms;

import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.DeadLetter;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PCollection;

/**
 * Bounds the size of every dead letter before it reaches a sink: a payload longer than {@link
 * #withMaxPayloadBytes the limit} is cut ({@link DeadLetter#withPayloadLimit}), keeping its
 * original size and SHA-256 and marked {@code truncated}; shorter ones pass unchanged. With the
 * texts a dead letter bounds itself ({@link DeadLetter#MAX_TEXT_BYTES}), every dead letter out of
 * here encodes to at most the limit plus {@link DeadLetter#MAX_BYTES_BEYOND_PAYLOAD} bytes, so a
 * huge record cannot make the dead-letter sink exceed its transport's request size.
 *
 * <p>Element-wise, no state, no shuffle; each cut is counted in {@code truncatedDeadLetters}.
 * Nothing is dropped: as many dead letters leave as arrive.
 *
 * <pre>{@code
 * PCollection<DeadLetter> bounded =
 *     deadLetters.apply("BoundDeadLetters", BoundDeadLetters.create().withMaxPayloadBytes(16384));
 * }</pre>
 */
public final class BoundDeadLetters
    extends PTransform<PCollection<DeadLetter>, PCollection<DeadLetter>> {

  public static final int DEFAULT_MAX_PAYLOAD_BYTES = 16 * 1024;

  /** The smallest limit: enough of a record to recognise it. */
  public static final int MIN_MAX_PAYLOAD_BYTES = 256;

  /** The largest limit: a dead letter stays well under common transport limits (Kafka's 1 MB). */
  public static final int MAX_MAX_PAYLOAD_BYTES = 128 * 1024;

  private final int maxPayloadBytes;

  private BoundDeadLetters(int maxPayloadBytes) {
    this.maxPayloadBytes = maxPayloadBytes;
  }

  /** Keeps up to {@value #DEFAULT_MAX_PAYLOAD_BYTES} bytes of each payload. */
  public static BoundDeadLetters create() {
    return new BoundDeadLetters(DEFAULT_MAX_PAYLOAD_BYTES);
  }

  /**
   * The most payload bytes a dead letter keeps, from {@value #MIN_MAX_PAYLOAD_BYTES} to {@value
   * #MAX_MAX_PAYLOAD_BYTES}.
   */
  public BoundDeadLetters withMaxPayloadBytes(int maxPayloadBytes) {
    if (maxPayloadBytes < MIN_MAX_PAYLOAD_BYTES || maxPayloadBytes > MAX_MAX_PAYLOAD_BYTES) {
      throw new IllegalArgumentException(
          "the dead-letter payload limit must be from "
              + MIN_MAX_PAYLOAD_BYTES
              + " to "
              + MAX_MAX_PAYLOAD_BYTES
              + " bytes, got "
              + maxPayloadBytes
              + "; set --maxDeadLetterPayloadBytes (or withMaxPayloadBytes(...)) in that range");
    }
    return new BoundDeadLetters(maxPayloadBytes);
  }

  public int maxPayloadBytes() {
    return maxPayloadBytes;
  }

  @Override
  public PCollection<DeadLetter> expand(PCollection<DeadLetter> deadLetters) {
    return deadLetters
        .apply("CutLongPayloads", ParDo.of(new BoundDeadLetterFn(maxPayloadBytes)))
        .setCoder(DeadLetter.DeadLetterCoder.of());
  }

  /** Cuts one dead letter's payload to the limit. */
  static final class BoundDeadLetterFn extends DoFn<DeadLetter, DeadLetter> {
    private final int maxPayloadBytes;
    private final Counter truncated =
        TidemarkMetrics.counter(TidemarkMetrics.TRUNCATED_DEAD_LETTERS);

    BoundDeadLetterFn(int maxPayloadBytes) {
      this.maxPayloadBytes = maxPayloadBytes;
    }

    @ProcessElement
    public void processElement(@Element DeadLetter letter, OutputReceiver<DeadLetter> out) {
      DeadLetter bounded = letter.withPayloadLimit(maxPayloadBytes);
      if (bounded.truncated() && !letter.truncated()) {
        truncated.inc();
      }
      out.output(bounded);
    }
  }
}
