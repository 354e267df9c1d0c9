package dev.tidemark.transforms.values;

import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.util.Sha256;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;
import org.apache.beam.sdk.coders.CoderProvider;
import org.apache.beam.sdk.coders.CoderProviders;
import org.apache.beam.sdk.coders.DefaultCoder;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;

/**
 * One decision: the features of one account in one window as of one fired pane, with the four
 * clocks, and (once scored) the model's score.
 *
 * <p>JSON field names are a contract shared by the file, Kafka and BigQuery sinks:
 *
 * <pre>
 * decisionId   stable id of (key, windowStart, windowEnd): the same for every pane
 * version      pane index; a higher version supersedes a lower one
 * (key)        the key, under the spec's key field name: accountId for payments
 * windowStart, windowEnd (RFC 3339 UTC)
 * pane         {"timing": "EARLY"|"ON_TIME"|"LATE", "index", "isFirst", "isLast"}
 * features     the spec's features by name, then {@code <name>Saturated} for each sum (the
 *              sum was held at its maximum); for payments {"txnCount", "amountSum", "amountMax",
 *              "distinctMerchants", "distinctCountries", "amountSumSaturated"}
 * clocks       {"eventTime", "ingestionTime", "processingTime", "decisionTime"}
 * score, decision, model {"name", "version", "engine"}   only once scored
 * correction   "none" (the first edition of its decisionId), "refined" (the verdict stayed, the
 *              score or features moved) or "reversed" (allow became review, or review became allow)
 * supersedes   {"version", "score", "decision"}: the edition emitted before this one; absent on
 *              the first
 * shadow       {"score", "decision", "model"}: what a shadow model made of the same features; it
 *              never decides; absent without a shadow model (or when it could not score the row)
 * </pre>
 *
 * <p>{@code correction} and {@code supersedes} are set by {@code AnnotateCorrections}, after
 * scoring, and only with accumulating panes; in discarding mode a pane is a delta and both are
 * absent.
 */
@DefaultCoder(Decision.DecisionCoder.class)
public final class Decision {
  private final String decisionId;
  private final String key;
  private final Instant windowStart;
  private final Instant windowEnd;
  private final String paneTiming;
  private final long paneIndex;
  private final boolean firstPane;
  private final boolean lastPane;
  private final Features features;
  private final Instant processingTime;
  private final Instant decisionTime;
  private final @Nullable Double score;
  private final @Nullable String label;
  private final @Nullable ModelRef model;
  private final @Nullable Correction correction;
  private final @Nullable Supersedes supersedes;
  private final @Nullable Shadow shadow;

  private Decision(
      String decisionId,
      String key,
      Instant windowStart,
      Instant windowEnd,
      String paneTiming,
      long paneIndex,
      boolean firstPane,
      boolean lastPane,
      Features features,
      Instant processingTime,
      Instant decisionTime,
      @Nullable Double score,
      @Nullable String label,
      @Nullable ModelRef model,
      @Nullable Correction correction,
      @Nullable Supersedes supersedes,
      @Nullable Shadow shadow) {
    this.decisionId = decisionId;
    this.key = key;
    this.windowStart = windowStart;
    this.windowEnd = windowEnd;
    this.paneTiming = paneTiming;
    this.paneIndex = paneIndex;
    this.firstPane = firstPane;
    this.lastPane = lastPane;
    this.features = features;
    this.processingTime = processingTime;
    this.decisionTime = decisionTime;
    this.score = score;
    this.label = label;
    this.model = model;
    this.correction = correction;
    this.supersedes = supersedes;
    this.shadow = shadow;
  }

  /** An unscored decision for one pane; its decision time is its processing time. */
  public static Decision unscored(
      String key,
      Instant windowStart,
      Instant windowEnd,
      String paneTiming,
      long paneIndex,
      boolean firstPane,
      boolean lastPane,
      Features features,
      Instant processingTime) {
    return new Decision(
        decisionId(key, windowStart, windowEnd),
        key,
        windowStart,
        windowEnd,
        paneTiming,
        paneIndex,
        firstPane,
        lastPane,
        features,
        processingTime,
        processingTime,
        null,
        null,
        null,
        null,
        null,
        null);
  }

  /** This decision with a model's score and verdict, made final at {@code decisionTime}. */
  public Decision withScore(double score, String label, ModelRef model, Instant decisionTime) {
    return withOutcome(
        decisionTime,
        score,
        Objects.requireNonNull(label, "label"),
        Objects.requireNonNull(model, "model"),
        correction,
        supersedes,
        shadow);
  }

  /** This decision with what a shadow model made of it; it changes nothing else. */
  public Decision withShadow(@Nullable Shadow shadow) {
    return withOutcome(decisionTime, score, label, model, correction, supersedes, shadow);
  }

  /**
   * This edition as a correction of {@code previous}, the edition of the same decision emitted
   * before it, or as the first edition when {@code previous} is null.
   */
  public Decision withCorrection(@Nullable Supersedes previous) {
    if (score == null || label == null) {
      throw new IllegalStateException("only a scored decision is a correction: " + decisionId);
    }
    Correction kind =
        previous == null
            ? Correction.NONE
            : previous.decision().equals(label) ? Correction.REFINED : Correction.REVERSED;
    return withOutcome(decisionTime, score, label, model, kind, previous, shadow);
  }

  /**
   * This pane with what was made of it: the decision time, score, verdict, correction and shadow.
   */
  private Decision withOutcome(
      Instant decisionTime,
      @Nullable Double score,
      @Nullable String label,
      @Nullable ModelRef model,
      @Nullable Correction correction,
      @Nullable Supersedes supersedes,
      @Nullable Shadow shadow) {
    return new Decision(
        decisionId,
        key,
        windowStart,
        windowEnd,
        paneTiming,
        paneIndex,
        firstPane,
        lastPane,
        features,
        processingTime,
        decisionTime,
        score,
        label,
        model,
        correction,
        supersedes,
        shadow);
  }

  /** What a later edition supersedes when this scored one is the last emitted before it. */
  public Supersedes asSuperseded() {
    if (score == null || label == null) {
      throw new IllegalStateException("only a scored decision is superseded: " + decisionId);
    }
    return new Supersedes(paneIndex, score, label);
  }

  /**
   * The stable id of (key, windowStart, windowEnd): the first 128 bits of the SHA-256 of the three,
   * length-prefixed, in hex.
   */
  public static String decisionId(String key, Instant windowStart, Instant windowEnd) {
    MessageDigest sha = Sha256.threadDigest();
    Sha256.updateLengthPrefixed(sha, key);
    sha.update(
        java.nio.ByteBuffer.allocate(16)
            .putLong(windowStart.getMillis())
            .putLong(windowEnd.getMillis())
            .array());
    return HexFormat.of().formatHex(sha.digest(), 0, Sha256.PREFIX_BYTES);
  }

  public String decisionId() {
    return decisionId;
  }

  /** The pane index: a later version of a decision supersedes an earlier one. */
  public long version() {
    return paneIndex;
  }

  /** The key the features were computed per ({@link Features#schema()} names its field). */
  public String key() {
    return key;
  }

  public Instant windowStart() {
    return windowStart;
  }

  public Instant windowEnd() {
    return windowEnd;
  }

  public String paneTiming() {
    return paneTiming;
  }

  public long paneIndex() {
    return paneIndex;
  }

  public boolean isFirstPane() {
    return firstPane;
  }

  public boolean isLastPane() {
    return lastPane;
  }

  public Features features() {
    return features;
  }

  public Instant eventTime() {
    return features.latestEventTime();
  }

  public Instant ingestionTime() {
    return features.latestIngestionTime();
  }

  public Instant processingTime() {
    return processingTime;
  }

  public Instant decisionTime() {
    return decisionTime;
  }

  public @Nullable Double score() {
    return score;
  }

  /** {@code "review"} or {@code "allow"} once scored. */
  public @Nullable String label() {
    return label;
  }

  public @Nullable ModelRef model() {
    return model;
  }

  /** What this edition changes, once {@code AnnotateCorrections} has seen it. */
  public @Nullable Correction correction() {
    return correction;
  }

  /** The edition emitted before this one; null for the first and before annotation. */
  public @Nullable Supersedes supersedes() {
    return supersedes;
  }

  /** What a shadow model made of this decision; null without one. */
  public @Nullable Shadow shadow() {
    return shadow;
  }

  /** One line of the decisions output. */
  public String toJson() {
    return Json.object(
        out -> {
          out.writeStringField("decisionId", decisionId);
          out.writeNumberField("version", paneIndex);
          out.writeStringField(features.schema().keyName(), key);
          out.writeStringField("windowStart", Json.instant(windowStart));
          out.writeStringField("windowEnd", Json.instant(windowEnd));
          out.writeObjectFieldStart("pane");
          out.writeStringField("timing", paneTiming);
          out.writeNumberField("index", paneIndex);
          out.writeBooleanField("isFirst", firstPane);
          out.writeBooleanField("isLast", lastPane);
          out.writeEndObject();
          out.writeObjectFieldStart("features");
          features.writeFields(out);
          out.writeEndObject();
          out.writeObjectFieldStart("clocks");
          out.writeStringField("eventTime", Json.instant(eventTime()));
          out.writeStringField("ingestionTime", Json.instant(ingestionTime()));
          out.writeStringField("processingTime", Json.instant(processingTime));
          out.writeStringField("decisionTime", Json.instant(decisionTime));
          out.writeEndObject();
          if (score != null && model != null) {
            out.writeNumberField("score", score);
            out.writeStringField("decision", label);
            out.writeObjectFieldStart("model");
            out.writeStringField("name", model.name());
            out.writeStringField("version", model.version());
            out.writeStringField("engine", model.engine());
            out.writeEndObject();
          }
          if (correction != null) {
            out.writeStringField("correction", correction.jsonName());
          }
          if (supersedes != null) {
            out.writeObjectFieldStart("supersedes");
            out.writeNumberField("version", supersedes.version());
            out.writeNumberField("score", supersedes.score());
            out.writeStringField("decision", supersedes.decision());
            out.writeEndObject();
          }
          if (shadow != null) {
            out.writeObjectFieldStart("shadow");
            out.writeNumberField("score", shadow.score());
            out.writeStringField("decision", shadow.decision());
            out.writeObjectFieldStart("model");
            out.writeStringField("name", shadow.model().name());
            out.writeStringField("version", shadow.model().version());
            out.writeStringField("engine", shadow.model().engine());
            out.writeEndObject();
            out.writeEndObject();
          }
        });
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof Decision)) {
      return false;
    }
    Decision that = (Decision) o;
    return paneIndex == that.paneIndex
        && firstPane == that.firstPane
        && lastPane == that.lastPane
        && decisionId.equals(that.decisionId)
        && key.equals(that.key)
        && windowStart.equals(that.windowStart)
        && windowEnd.equals(that.windowEnd)
        && paneTiming.equals(that.paneTiming)
        && features.equals(that.features)
        && processingTime.equals(that.processingTime)
        && decisionTime.equals(that.decisionTime)
        && Objects.equals(score, that.score)
        && Objects.equals(label, that.label)
        && Objects.equals(model, that.model)
        && correction == that.correction
        && Objects.equals(supersedes, that.supersedes)
        && Objects.equals(shadow, that.shadow);
  }

  @Override
  public int hashCode() {
    return Objects.hash(decisionId, paneIndex, features);
  }

  @Override
  public String toString() {
    return toJson();
  }

  /** What an edition changes with respect to the one emitted before it. */
  public enum Correction {
    /** The first edition of its decision. */
    NONE,
    /** The verdict stayed; the score or the features moved. */
    REFINED,
    /** The verdict changed: allow became review, or review became allow. */
    REVERSED;

    /** The name in JSON, a Kafka header and a BigQuery column. */
    public String jsonName() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /** The edition a later one supersedes: its version (pane index), score and verdict. */
  public record Supersedes(long version, double score, String decision) {
    public Supersedes {
      Objects.requireNonNull(decision, "decision");
    }
  }

  /**
   * A shadow model's score and verdict for the same features, with the model that gave them;
   * recorded beside the decision, never deciding.
   */
  public record Shadow(double score, String decision, ModelRef model) {
    public Shadow {
      Objects.requireNonNull(decision, "decision");
      Objects.requireNonNull(model, "model");
    }
  }

  /** Which model scored a decision. */
  public static final class ModelRef {
    private final String name;
    private final String version;
    private final String engine;

    /**
     * The three strings as {@link DecisionCoder} writes them, made on first use: a scoring step
     * gives every decision it scores the same instance, so they are encoded once, not per decision.
     */
    private transient byte @Nullable [] encoded;

    public ModelRef(String name, String version, String engine) {
      this.name = Objects.requireNonNull(name, "name");
      this.version = Objects.requireNonNull(version, "version");
      this.engine = Objects.requireNonNull(engine, "engine");
    }

    /** Name, version and engine, each as {@link Codec#writeString} writes it. */
    byte[] encoded() {
      byte[] bytes = encoded;
      if (bytes == null) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (DataOutputStream data = new DataOutputStream(out)) {
          Codec.writeString(name, data);
          Codec.writeString(version, data);
          Codec.writeString(engine, data);
        } catch (IOException e) {
          throw new UncheckedIOException("cannot encode into memory", e);
        }
        bytes = out.toByteArray();
        encoded = bytes; // a race only computes equal bytes twice
      }
      return bytes;
    }

    public String name() {
      return name;
    }

    public String version() {
      return version;
    }

    public String engine() {
      return engine;
    }

    @Override
    public boolean equals(@Nullable Object o) {
      return o instanceof ModelRef
          && name.equals(((ModelRef) o).name)
          && version.equals(((ModelRef) o).version)
          && engine.equals(((ModelRef) o).engine);
    }

    @Override
    public int hashCode() {
      return Objects.hash(name, version, engine);
    }

    @Override
    public String toString() {
      return name + ":" + version + " (" + engine + ")";
    }
  }

  /** Compact, deterministic coder. */
  public static final class DecisionCoder extends Codec.DataCoder<Decision> {
    private static final long serialVersionUID = 1L;

    /**
     * Version 2: the fields {@link #write} writes, in its order. Version 1 ended after the model:
     * it had no correction, no superseded edition and no shadow.
     */
    @Override
    protected int version() {
      return 2;
    }

    private static final DecisionCoder INSTANCE = new DecisionCoder();

    public static DecisionCoder of() {
      return INSTANCE;
    }

    /** Makes {@code @DefaultCoder} work for {@link Decision}. */
    public static CoderProvider getCoderProvider() {
      return CoderProviders.forCoder(TypeDescriptor.of(Decision.class), INSTANCE);
    }

    /** Every timing a pane has, in {@link PaneInfo.Timing}'s order; written as one byte. */
    private static final String[] TIMINGS =
        Arrays.stream(PaneInfo.Timing.values()).map(PaneInfo.Timing::name).toArray(String[]::new);

    /** The labels the scoring step gives; written as one byte. */
    private static final String[] LABELS = {"allow", "review"};

    /** Every correction kind, in {@link Correction}'s order; written as one byte. */
    private static final String[] CORRECTIONS =
        Arrays.stream(Correction.values()).map(Correction::name).toArray(String[]::new);

    @Override
    protected void write(Decision value, DataOutput out) throws IOException {
      Codec.writeString(value.decisionId, out);
      Codec.writeString(value.key, out);
      Codec.writeInstant(value.windowStart, out);
      Codec.writeInstant(value.windowEnd, out);
      Codec.writeKnownString(value.paneTiming, TIMINGS, out);
      out.writeLong(value.paneIndex);
      out.writeBoolean(value.firstPane);
      out.writeBoolean(value.lastPane);
      Features.FeaturesCoder.of().writeVersioned(value.features, out);
      Codec.writeInstant(value.processingTime, out);
      Codec.writeInstant(value.decisionTime, out);
      out.writeBoolean(value.score != null && value.model != null);
      if (value.score != null && value.model != null) {
        out.writeDouble(value.score);
        Codec.writeKnownString(value.label, LABELS, out);
        out.write(value.model.encoded());
      }
      out.writeBoolean(value.correction != null);
      if (value.correction != null) {
        Codec.writeKnownString(value.correction.name(), CORRECTIONS, out);
      }
      out.writeBoolean(value.supersedes != null);
      if (value.supersedes != null) {
        out.writeLong(value.supersedes.version());
        out.writeDouble(value.supersedes.score());
        Codec.writeKnownString(value.supersedes.decision(), LABELS, out);
      }
      out.writeBoolean(value.shadow != null);
      if (value.shadow != null) {
        out.writeDouble(value.shadow.score());
        Codec.writeKnownString(value.shadow.decision(), LABELS, out);
        out.write(value.shadow.model().encoded());
      }
    }

    @Override
    protected Decision read(int version, DataInputStream in) throws IOException {
      String decisionId = Codec.readString(in);
      String key = Codec.readString(in);
      Instant windowStart = Codec.readInstant(in);
      Instant windowEnd = Codec.readInstant(in);
      String paneTiming = Codec.readKnownString(TIMINGS, in);
      long paneIndex = in.readLong();
      boolean first = in.readBoolean();
      boolean last = in.readBoolean();
      Features features = Features.FeaturesCoder.of().readVersioned(in);
      Instant processingTime = Codec.readInstant(in);
      Instant decisionTime = Codec.readInstant(in);
      Double score = null;
      String label = null;
      ModelRef model = null;
      if (in.readBoolean()) {
        score = in.readDouble();
        label = Codec.readKnownString(LABELS, in);
        model = new ModelRef(Codec.readString(in), Codec.readString(in), Codec.readString(in));
      }
      Correction correction = null;
      Supersedes supersedes = null;
      Shadow shadow = null;
      if (version >= 2) {
        if (in.readBoolean()) {
          correction = Correction.valueOf(Codec.readKnownString(CORRECTIONS, in));
        }
        if (in.readBoolean()) {
          supersedes =
              new Supersedes(in.readLong(), in.readDouble(), Codec.readKnownString(LABELS, in));
        }
        if (in.readBoolean()) {
          shadow =
              new Shadow(
                  in.readDouble(),
                  Codec.readKnownString(LABELS, in),
                  new ModelRef(Codec.readString(in), Codec.readString(in), Codec.readString(in)));
        }
      }
      return new Decision(
          decisionId,
          key,
          windowStart,
          windowEnd,
          paneTiming,
          paneIndex,
          first,
          last,
          features,
          processingTime,
          decisionTime,
          score,
          label,
          model,
          correction,
          supersedes,
          shadow);
    }
  }
}
