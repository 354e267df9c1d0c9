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
 * A drift test of one model version in one role crossed its threshold: its CUSUM {@code statistic}
 * exceeded {@code threshold} at the observation of time {@code at}, after {@code observations}
 * observations of that test since the last reset.
 *
 * <p>Kind {@value #SCORE}: the mean score of the decisions moved from the sidecar's reference mean
 * ({@code direction} {@value #UP} or {@value #DOWN}). Kind {@value #ERROR}: the labelled error rate
 * (misclassification at the threshold) rose above the reference error rate (always {@value #UP}).
 * {@code referenceMean} and {@code observedMean} are the reference and the mean of the observations
 * since the last reset.
 *
 * <p>JSON, one object a line:
 *
 * <pre>{@code
 * {"model":{"name":"tidemark-fraud-xgb","version":"1","role":"deciding"},"kind":"score",
 *  "direction":"up","at":"2026-01-01T02:10:00.000Z","statistic":50.4,"threshold":50.0,
 *  "observations":1320,"referenceMean":0.0131,"observedMean":0.071}
 * }</pre>
 */
@DefaultCoder(DriftAlarm.AlarmCoder.class)
public record DriftAlarm(
    String role,
    String modelName,
    String modelVersion,
    String kind,
    String direction,
    Instant at,
    double statistic,
    double threshold,
    long observations,
    double referenceMean,
    double observedMean) {

  /** The test on the decisions' scores against the sidecar's score reference. */
  public static final String SCORE = "score";

  /** The test on the labelled error rate. */
  public static final String ERROR = "error";

  /** The statistic of a rise. */
  public static final String UP = "up";

  /** The statistic of a fall. */
  public static final String DOWN = "down";

  public DriftAlarm {
    Objects.requireNonNull(role, "role");
    Objects.requireNonNull(modelName, "modelName");
    Objects.requireNonNull(modelVersion, "modelVersion");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(direction, "direction");
    Objects.requireNonNull(at, "at");
  }

  /** {@code name:version}, as counters and logs name a model version. */
  public String model() {
    return modelName + ":" + modelVersion;
  }

  /** The alarm as one line of the drift output. */
  public String toJsonLine() {
    return Json.object(
        out -> {
          out.writeObjectFieldStart("model");
          out.writeStringField("name", modelName);
          out.writeStringField("version", modelVersion);
          out.writeStringField("role", role);
          out.writeEndObject();
          out.writeStringField("kind", kind);
          out.writeStringField("direction", direction);
          out.writeStringField("at", Json.instant(at));
          out.writeNumberField("statistic", statistic);
          out.writeNumberField("threshold", threshold);
          out.writeNumberField("observations", observations);
          out.writeNumberField("referenceMean", referenceMean);
          out.writeNumberField("observedMean", observedMean);
        });
  }

  /** Compact, deterministic coder. */
  public static final class AlarmCoder extends Codec.DataCoder<DriftAlarm> {
    private static final long serialVersionUID = 1L;

    private static final AlarmCoder INSTANCE = new AlarmCoder();

    public static AlarmCoder of() {
      return INSTANCE;
    }

    /** Makes {@code @DefaultCoder} work for {@link DriftAlarm}. */
    public static CoderProvider getCoderProvider() {
      return CoderProviders.forCoder(TypeDescriptor.of(DriftAlarm.class), INSTANCE);
    }

    /** Version 1: the fields {@link #write} writes, in its order. */
    @Override
    protected int version() {
      return 1;
    }

    @Override
    protected void write(DriftAlarm value, DataOutput out) throws IOException {
      Codec.writeString(value.role, out);
      Codec.writeString(value.modelName, out);
      Codec.writeString(value.modelVersion, out);
      Codec.writeString(value.kind, out);
      Codec.writeString(value.direction, out);
      Codec.writeInstant(value.at, out);
      out.writeDouble(value.statistic);
      out.writeDouble(value.threshold);
      out.writeLong(value.observations);
      out.writeDouble(value.referenceMean);
      out.writeDouble(value.observedMean);
    }

    @Override
    protected DriftAlarm read(int version, DataInputStream in) throws IOException {
      return new DriftAlarm(
          Codec.readString(in),
          Codec.readString(in),
          Codec.readString(in),
          Codec.readString(in),
          Codec.readString(in),
          Codec.readInstant(in),
          in.readDouble(),
          in.readDouble(),
          in.readLong(),
          in.readDouble(),
          in.readDouble());
    }
  }
}
