package dev.tidemark.transforms.values;

import dev.tidemark.transforms.util.Json;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.IOException;
import java.util.Objects;
import org.apache.beam.sdk.coders.CoderProvider;
import org.apache.beam.sdk.coders.CoderProviders;
import org.apache.beam.sdk.coders.DefaultCoder;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.joda.time.Instant;

/**
 * One model version's online evaluation over one window of label time, as of one pane: the {@link
 * EvaluationCounts} of the decisions it made (role {@value #DECIDING}) or would have made as the
 * shadow model (role {@value #SHADOW}) that labels judged in that window.
 *
 * <p>JSON, one object a line:
 *
 * <pre>{@code
 * {"model":{"name":"tidemark-fraud-xgb","version":"1","role":"deciding"},
 *  "windowStart":"…","windowEnd":"…","pane":{"timing":"ON_TIME","index":0},
 *  "labels":120,"positives":9,"flagged":8,"truePositives":7,"falsePositives":1,
 *  "falseNegatives":2,"trueNegatives":110,"precision":0.875,"recall":0.777778,"reviewRate":0.066667,
 *  "labelDelaySeconds":{"mean":7260.5,"max":86400.0},
 *  "calibration":[{"from":0.0,"to":0.1,"decisions":110,"meanScore":0.004,"positiveRate":0.018}, …]}
 * }</pre>
 */
@DefaultCoder(EvaluationSummary.SummaryCoder.class)
public record EvaluationSummary(
    String role,
    String modelName,
    String modelVersion,
    Instant windowStart,
    Instant windowEnd,
    String paneTiming,
    long paneIndex,
    EvaluationCounts counts) {

  /** The role of the model whose verdicts were acted on. */
  public static final String DECIDING = "deciding";

  /** The role of a shadow model, scored beside it and never acted on. */
  public static final String SHADOW = "shadow";

  public EvaluationSummary {
    Objects.requireNonNull(role, "role");
    Objects.requireNonNull(modelName, "modelName");
    Objects.requireNonNull(modelVersion, "modelVersion");
    Objects.requireNonNull(counts, "counts");
  }

  /** The summary as one line of the evaluations output. */
  public String toJsonLine() {
    return Json.object(
        out -> {
          out.writeObjectFieldStart("model");
          out.writeStringField("name", modelName);
          out.writeStringField("version", modelVersion);
          out.writeStringField("role", role);
          out.writeEndObject();
          out.writeStringField("windowStart", Json.instant(windowStart));
          out.writeStringField("windowEnd", Json.instant(windowEnd));
          out.writeObjectFieldStart("pane");
          out.writeStringField("timing", paneTiming);
          out.writeNumberField("index", paneIndex);
          out.writeEndObject();
          counts.writeFields(out);
        });
  }

  /** Compact, deterministic coder. */
  public static final class SummaryCoder extends Codec.DataCoder<EvaluationSummary> {
    private static final long serialVersionUID = 1L;

    private static final SummaryCoder INSTANCE = new SummaryCoder();

    public static SummaryCoder of() {
      return INSTANCE;
    }

    /** Makes {@code @DefaultCoder} work for {@link EvaluationSummary}. */
    public static CoderProvider getCoderProvider() {
      return CoderProviders.forCoder(TypeDescriptor.of(EvaluationSummary.class), INSTANCE);
    }

    /** Version 1: the fields {@link #write} writes, in its order, the counts versioned. */
    @Override
    protected int version() {
      return 1;
    }

    @Override
    protected void write(EvaluationSummary value, DataOutput out) throws IOException {
      Codec.writeString(value.role, out);
      Codec.writeString(value.modelName, out);
      Codec.writeString(value.modelVersion, out);
      Codec.writeInstant(value.windowStart, out);
      Codec.writeInstant(value.windowEnd, out);
      Codec.writeString(value.paneTiming, out);
      out.writeLong(value.paneIndex);
      EvaluationCounts.CountsCoder.of().writeVersioned(value.counts, out);
    }

    @Override
    protected EvaluationSummary read(int version, DataInputStream in) throws IOException {
      return new EvaluationSummary(
          Codec.readString(in),
          Codec.readString(in),
          Codec.readString(in),
          Codec.readInstant(in),
          Codec.readInstant(in),
          Codec.readString(in),
          in.readLong(),
          EvaluationCounts.CountsCoder.of().readVersioned(in));
    }
  }
}
