package dev.tidemark.transforms.values;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.coders.CoderProvider;
import org.apache.beam.sdk.coders.CoderProviders;
import org.apache.beam.sdk.coders.DefaultCoder;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * What a model's judged decisions add up to: the confusion counts at its threshold (a decision is
 * <em>flagged</em> when its verdict is the one at or above the threshold, {@code review} for
 * payments), the label delays, and the calibration by score bin (tenths of the score: the mean
 * score beside the share of positives). Counts merge by addition, so they combine in any order.
 */
@DefaultCoder(EvaluationCounts.CountsCoder.class)
public final class EvaluationCounts {
  /** Calibration bins: tenths of the score, the last one closed at 1. */
  public static final int BINS = 10;

  private long labels;
  private long positives;
  private long flagged;
  private long truePositives;
  private long delayMillisSum;
  private long delayMillisMax;
  private final long[] binCounts = new long[BINS];
  private final double[] binScores = new double[BINS];
  private final long[] binPositives = new long[BINS];

  /** No judgement yet. */
  public EvaluationCounts() {}

  /** One judged decision: its score, whether it was flagged, the truth, how late the truth was. */
  public static EvaluationCounts of(
      double score, boolean flagged, boolean positive, long labelDelayMillis) {
    EvaluationCounts counts = new EvaluationCounts();
    counts.add(score, flagged, positive, labelDelayMillis);
    return counts;
  }

  /** Adds one judged decision. */
  public void add(double score, boolean flagged, boolean positive, long labelDelayMillis) {
    labels++;
    positives += positive ? 1 : 0;
    this.flagged += flagged ? 1 : 0;
    truePositives += flagged && positive ? 1 : 0;
    long delay = Math.max(0, labelDelayMillis);
    delayMillisSum += delay;
    delayMillisMax = Math.max(delayMillisMax, delay);
    int bin = bin(score);
    binCounts[bin]++;
    binScores[bin] += score;
    binPositives[bin] += positive ? 1 : 0;
  }

  /** Adds {@code other} into these counts; returns them. */
  public EvaluationCounts merge(EvaluationCounts other) {
    labels += other.labels;
    positives += other.positives;
    flagged += other.flagged;
    truePositives += other.truePositives;
    delayMillisSum += other.delayMillisSum;
    delayMillisMax = Math.max(delayMillisMax, other.delayMillisMax);
    for (int i = 0; i < BINS; i++) {
      binCounts[i] += other.binCounts[i];
      binScores[i] += other.binScores[i];
      binPositives[i] += other.binPositives[i];
    }
    return this;
  }

  /** The calibration bin of a score: its tenth, scores outside [0, 1] in the nearest bin. */
  static int bin(double score) {
    if (!(score > 0)) {
      return 0;
    }
    return Math.min(BINS - 1, (int) (score * BINS));
  }

  public long labels() {
    return labels;
  }

  public long positives() {
    return positives;
  }

  public long flagged() {
    return flagged;
  }

  public long truePositives() {
    return truePositives;
  }

  public long falsePositives() {
    return flagged - truePositives;
  }

  public long falseNegatives() {
    return positives - truePositives;
  }

  public long trueNegatives() {
    return labels - flagged - falseNegatives();
  }

  /** Flagged decisions that were positive; null when nothing was flagged. */
  public @Nullable Double precision() {
    return flagged == 0 ? null : truePositives / (double) flagged;
  }

  /** Positives that were flagged; null when no label was positive. */
  public @Nullable Double recall() {
    return positives == 0 ? null : truePositives / (double) positives;
  }

  /** The share of judged decisions that were flagged; null without any. */
  public @Nullable Double reviewRate() {
    return labels == 0 ? null : flagged / (double) labels;
  }

  /** Mean label delay in seconds; null without any label. */
  public @Nullable Double meanLabelDelaySeconds() {
    return labels == 0 ? null : delayMillisSum / 1000.0 / labels;
  }

  public double maxLabelDelaySeconds() {
    return delayMillisMax / 1000.0;
  }

  /** Writes the counts and rates as fields of the object {@code out} is in. */
  public void writeFields(JsonGenerator out) throws IOException {
    out.writeNumberField("labels", labels);
    out.writeNumberField("positives", positives);
    out.writeNumberField("flagged", flagged);
    out.writeNumberField("truePositives", truePositives);
    out.writeNumberField("falsePositives", falsePositives());
    out.writeNumberField("falseNegatives", falseNegatives());
    out.writeNumberField("trueNegatives", trueNegatives());
    rate(out, "precision", precision());
    rate(out, "recall", recall());
    rate(out, "reviewRate", reviewRate());
    out.writeObjectFieldStart("labelDelaySeconds");
    rate(out, "mean", meanLabelDelaySeconds());
    out.writeNumberField("max", maxLabelDelaySeconds());
    out.writeEndObject();
    out.writeArrayFieldStart("calibration");
    for (CalibrationBin bin : calibration()) {
      out.writeStartObject();
      out.writeNumberField("from", bin.from());
      out.writeNumberField("to", bin.to());
      out.writeNumberField("decisions", bin.decisions());
      out.writeNumberField("meanScore", bin.meanScore());
      out.writeNumberField("positiveRate", bin.positiveRate());
      out.writeEndObject();
    }
    out.writeEndArray();
  }

  /**
   * One calibration bin with decisions in it: the scores from {@code from} up to {@code to}, how
   * many judged decisions scored there, their mean score and the share of them that were positive
   * (both {@linkplain #round rounded}).
   */
  public record CalibrationBin(
      double from, double to, long decisions, double meanScore, double positiveRate) {}

  /** The bins that hold a judged decision, lowest scores first. */
  public List<CalibrationBin> calibration() {
    List<CalibrationBin> bins = new ArrayList<>();
    for (int i = 0; i < BINS; i++) {
      if (binCounts[i] > 0) {
        bins.add(
            new CalibrationBin(
                i / (double) BINS,
                (i + 1) / (double) BINS,
                binCounts[i],
                round(binScores[i] / binCounts[i]),
                round(binPositives[i] / (double) binCounts[i])));
      }
    }
    return bins;
  }

  private static void rate(JsonGenerator out, String name, @Nullable Double value)
      throws IOException {
    if (value == null) {
      out.writeNullField(name);
    } else {
      out.writeNumberField(name, round(value));
    }
  }

  /**
   * Six decimals, as every output shows a rate: the figures are rates, and equal counts must print
   * equally.
   */
  public static double round(double value) {
    return Math.round(value * 1e6) / 1e6;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof EvaluationCounts)) {
      return false;
    }
    EvaluationCounts c = (EvaluationCounts) o;
    return labels == c.labels
        && positives == c.positives
        && flagged == c.flagged
        && truePositives == c.truePositives
        && delayMillisSum == c.delayMillisSum
        && delayMillisMax == c.delayMillisMax
        && Arrays.equals(binCounts, c.binCounts)
        && Arrays.equals(binScores, c.binScores)
        && Arrays.equals(binPositives, c.binPositives);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(new long[] {labels, positives, flagged, truePositives, delayMillisSum});
  }

  @Override
  public String toString() {
    return "EvaluationCounts{labels="
        + labels
        + ", positives="
        + positives
        + ", flagged="
        + flagged
        + ", truePositives="
        + truePositives
        + "}";
  }

  /** Compact, deterministic coder. */
  public static final class CountsCoder extends Codec.DataCoder<EvaluationCounts> {
    private static final long serialVersionUID = 1L;

    private static final CountsCoder INSTANCE = new CountsCoder();

    public static CountsCoder of() {
      return INSTANCE;
    }

    /** Makes {@code @DefaultCoder} work for {@link EvaluationCounts}. */
    public static CoderProvider getCoderProvider() {
      return CoderProviders.forCoder(TypeDescriptor.of(EvaluationCounts.class), INSTANCE);
    }

    /**
     * Version 2: the six counts, then a mask of the bins that hold a judged decision (bit {@code i}
     * for bin {@code i}), then each such bin's count, score sum and positives, lowest bin first.
     * Most values a runner keeps are one judged decision (the input of the evaluation windows,
     * which a runner without combiner lifting buffers and copies whole), so the empty bins are left
     * out: one decision takes 75 bytes instead of version 1's {@value #VERSION_1_BYTES}.
     */
    @Override
    protected int version() {
      return 2;
    }

    @Override
    protected void write(EvaluationCounts value, DataOutput out) throws IOException {
      int mask = 0;
      for (int i = 0; i < BINS; i++) {
        if (value.binCounts[i] != 0 || value.binScores[i] != 0 || value.binPositives[i] != 0) {
          mask |= 1 << i;
        }
      }
      out.writeLong(value.labels);
      out.writeLong(value.positives);
      out.writeLong(value.flagged);
      out.writeLong(value.truePositives);
      out.writeLong(value.delayMillisSum);
      out.writeLong(value.delayMillisMax);
      out.writeShort(mask);
      for (int i = 0; i < BINS; i++) {
        if ((mask & (1 << i)) != 0) {
          out.writeLong(value.binCounts[i]);
          out.writeDouble(value.binScores[i]);
          out.writeLong(value.binPositives[i]);
        }
      }
    }

    /** The six counts: six longs. */
    private static final int COUNTS_BYTES = 8 * 6;

    /** One bin: its count, score sum and positives, eight bytes each. */
    private static final int BIN_BYTES = 8 * 3;

    /** Version 1 wrote every bin. */
    private static final int VERSION_1_BYTES = COUNTS_BYTES + BIN_BYTES * BINS;

    /**
     * Reads the fields in bulk: a window's counts are decoded each time a runner copies its state,
     * and one read of the fixed-size parts costs a fraction of reading eight bytes at a time
     * through the stream.
     */
    @Override
    protected EvaluationCounts read(int version, DataInputStream in) throws IOException {
      EvaluationCounts counts = new EvaluationCounts();
      int mask;
      ByteBuffer fields;
      if (version == 1) {
        fields = ByteBuffer.wrap(readExactly(in, VERSION_1_BYTES));
        readCounts(counts, fields);
        mask = (1 << BINS) - 1;
      } else {
        fields = ByteBuffer.wrap(readExactly(in, COUNTS_BYTES + 2));
        readCounts(counts, fields);
        mask = fields.getShort() & 0xffff;
        if (mask >>> BINS != 0) {
          throw new CoderException("EvaluationCounts: bin mask " + mask + " names no bin");
        }
        fields = ByteBuffer.wrap(readExactly(in, BIN_BYTES * Integer.bitCount(mask)));
      }
      for (int i = 0; i < BINS; i++) {
        if ((mask & (1 << i)) != 0) {
          counts.binCounts[i] = fields.getLong();
          counts.binScores[i] = fields.getDouble();
          counts.binPositives[i] = fields.getLong();
        }
      }
      return counts;
    }

    /** Exactly {@code length} bytes, not length-prefixed as {@link Codec#readBytes} reads them. */
    private static byte[] readExactly(DataInputStream in, int length) throws IOException {
      byte[] bytes = new byte[length];
      in.readFully(bytes);
      return bytes;
    }

    private static void readCounts(EvaluationCounts counts, ByteBuffer fields) {
      counts.labels = fields.getLong();
      counts.positives = fields.getLong();
      counts.flagged = fields.getLong();
      counts.truePositives = fields.getLong();
      counts.delayMillisSum = fields.getLong();
      counts.delayMillisMax = fields.getLong();
    }
  }
}
