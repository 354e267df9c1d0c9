package dev.tidemark.transforms.values;

import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.IOException;
import java.util.Objects;
import org.apache.beam.sdk.coders.CoderProvider;
import org.apache.beam.sdk.coders.CoderProviders;
import org.apache.beam.sdk.coders.DefaultCoder;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;

/**
 * One label judged against the decision that was in force for one window holding the labelled
 * event: what the model said ({@link Edition}: its score, verdict and version) beside what turned
 * out to be true ({@link #label()}, {@link #positive()}).
 *
 * <p>An event is in every sliding window that contains its event time, so one label gives one
 * evaluation per window whose decision was in force; each window's decision was acted on
 * separately.
 */
@DefaultCoder(Evaluation.EvaluationCoder.class)
public record Evaluation(Label label, boolean positive, Edition edition) {
  public Evaluation {
    Objects.requireNonNull(label, "label");
    Objects.requireNonNull(edition, "edition");
  }

  /**
   * How long the truth took: the label's time minus the labelled event's time (the label carries
   * the event time whenever it is evaluated).
   */
  public long labelDelayMillis() {
    Instant eventTime = Objects.requireNonNull(label.eventTime(), "label.eventTime");
    return label.time().getMillis() - eventTime.getMillis();
  }

  /**
   * The edition of one window's decision that counts as acted on: the on-time edition, else (a
   * window that fired no on-time pane, its first pane being late) the first late one. Early
   * editions never count: they are provisional by design and superseded within the window.
   *
   * <p>The same rule picks the training examples of {@code ./tidemark train --decisions}.
   */
  public record Edition(
      String decisionId,
      Instant windowStart,
      Instant windowEnd,
      String paneTiming,
      long version,
      Instant decisionTime,
      double score,
      String decision,
      String modelName,
      String modelVersion,
      Decision.@Nullable Shadow shadow) {

    public static final String ON_TIME = "ON_TIME";
    public static final String LATE = "LATE";

    public Edition {
      Objects.requireNonNull(decisionId, "decisionId");
      Objects.requireNonNull(paneTiming, "paneTiming");
      Objects.requireNonNull(decision, "decision");
      Objects.requireNonNull(modelName, "modelName");
      Objects.requireNonNull(modelVersion, "modelVersion");
    }

    /**
     * Whether an edition of this pane timing can be in force ({@link #ON_TIME} or {@link #LATE}).
     */
    public static boolean counts(String paneTiming) {
      return ON_TIME.equals(paneTiming) || LATE.equals(paneTiming);
    }

    /**
     * The edition of a scored decision.
     *
     * @throws IllegalArgumentException if the decision is not scored
     */
    public static Edition of(Decision decision) {
      Double score = decision.score();
      String verdict = decision.label();
      Decision.ModelRef model = decision.model();
      if (score == null || verdict == null || model == null) {
        throw new IllegalArgumentException(
            "decision " + decision.decisionId() + " v" + decision.version() + " is not scored");
      }
      return new Edition(
          decision.decisionId(),
          decision.windowStart(),
          decision.windowEnd(),
          decision.paneTiming(),
          decision.version(),
          decision.decisionTime(),
          score,
          verdict,
          model.name(),
          model.version(),
          decision.shadow());
    }

    /** Of two editions of one window that {@link #counts count}, the one in force. */
    public static Edition inForce(Edition a, Edition b) {
      return isInForceOver(a.paneTiming, a.version, b.paneTiming, b.version) ? a : b;
    }

    /**
     * Whether, of two editions of one window that {@link #counts count}, the first (pane timing
     * {@code timing}, version {@code version}) is in force rather than the other: the on-time one,
     * else the lower version.
     */
    public static boolean isInForceOver(
        String timing, long version, String otherTiming, long otherVersion) {
      boolean onTime = ON_TIME.equals(timing);
      if (onTime != ON_TIME.equals(otherTiming)) {
        return onTime;
      }
      return version <= otherVersion;
    }

    /** Whether no later edition can take this one's place: it is the on-time edition. */
    public boolean isFinal() {
      return ON_TIME.equals(paneTiming);
    }
  }

  /** Compact, deterministic coder of an {@link Edition}. */
  public static final class EditionCoder extends Codec.DataCoder<Edition> {
    private static final long serialVersionUID = 1L;

    private static final EditionCoder INSTANCE = new EditionCoder();

    public static EditionCoder of() {
      return INSTANCE;
    }

    /** Version 1: the fields {@link #write} writes, in its order. */
    @Override
    protected int version() {
      return 1;
    }

    @Override
    protected void write(Edition value, DataOutput out) throws IOException {
      Codec.writeString(value.decisionId(), out);
      Codec.writeInstant(value.windowStart(), out);
      Codec.writeInstant(value.windowEnd(), out);
      Codec.writeString(value.paneTiming(), out);
      out.writeLong(value.version());
      Codec.writeInstant(value.decisionTime(), out);
      out.writeDouble(value.score());
      Codec.writeString(value.decision(), out);
      Codec.writeString(value.modelName(), out);
      Codec.writeString(value.modelVersion(), out);
      Decision.Shadow shadow = value.shadow();
      out.writeBoolean(shadow != null);
      if (shadow != null) {
        out.writeDouble(shadow.score());
        Codec.writeString(shadow.decision(), out);
        Codec.writeString(shadow.model().name(), out);
        Codec.writeString(shadow.model().version(), out);
        Codec.writeString(shadow.model().engine(), out);
      }
    }

    @Override
    protected Edition read(int version, DataInputStream in) throws IOException {
      String decisionId = Codec.readString(in);
      Instant windowStart = Codec.readInstant(in);
      Instant windowEnd = Codec.readInstant(in);
      String paneTiming = Codec.readString(in);
      long editionVersion = in.readLong();
      Instant decisionTime = Codec.readInstant(in);
      double score = in.readDouble();
      String decision = Codec.readString(in);
      String modelName = Codec.readString(in);
      String modelVersion = Codec.readString(in);
      Decision.Shadow shadow = null;
      if (in.readBoolean()) {
        double shadowScore = in.readDouble();
        String shadowDecision = Codec.readString(in);
        shadow =
            new Decision.Shadow(
                shadowScore,
                shadowDecision,
                new Decision.ModelRef(
                    Codec.readString(in), Codec.readString(in), Codec.readString(in)));
      }
      return new Edition(
          decisionId,
          windowStart,
          windowEnd,
          paneTiming,
          editionVersion,
          decisionTime,
          score,
          decision,
          modelName,
          modelVersion,
          shadow);
    }
  }

  /** Compact, deterministic coder. */
  public static final class EvaluationCoder extends Codec.DataCoder<Evaluation> {
    private static final long serialVersionUID = 1L;

    private static final EvaluationCoder INSTANCE = new EvaluationCoder();

    public static EvaluationCoder of() {
      return INSTANCE;
    }

    /** Makes {@code @DefaultCoder} work for {@link Evaluation}. */
    public static CoderProvider getCoderProvider() {
      return CoderProviders.forCoder(TypeDescriptor.of(Evaluation.class), INSTANCE);
    }

    /** Version 1: the label and the edition, each with its own version byte. */
    @Override
    protected int version() {
      return 1;
    }

    @Override
    protected void write(Evaluation value, DataOutput out) throws IOException {
      Label.LabelCoder.of().writeVersioned(value.label(), out);
      out.writeBoolean(value.positive());
      EditionCoder.of().writeVersioned(value.edition(), out);
    }

    @Override
    protected Evaluation read(int version, DataInputStream in) throws IOException {
      return new Evaluation(
          Label.LabelCoder.of().readVersioned(in),
          in.readBoolean(),
          EditionCoder.of().readVersioned(in));
    }
  }
}
