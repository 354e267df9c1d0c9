package dev.tidemark.transforms.values;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.tidemark.spec.FeatureSchema;
import dev.tidemark.spec.FeatureValues;
import dev.tidemark.spec.PipelineSpec.ValueType;
import dev.tidemark.transforms.util.Json;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.IOException;
import java.math.BigDecimal;
import java.util.List;
import java.util.Objects;
import org.apache.beam.sdk.coders.CoderProvider;
import org.apache.beam.sdk.coders.CoderProviders;
import org.apache.beam.sdk.coders.DefaultCoder;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;

/**
 * The features of one key in one window pane, as the spec names them ({@link FeatureSchema}), and
 * the two event clocks the pane carries: the latest event time among its events and the ingestion
 * time of that event.
 *
 * <p>{@link #names()} is the model input order; {@link #toVector()} follows it. In a decision's
 * {@code features} object each feature is written under its name (an integer or a double as a
 * number, a decimal with its scale, a timestamp in RFC 3339, a boolean as {@code true} or {@code
 * false}, an absent min, max, mean or last as {@code null}), then each sum's {@code
 * <name>Saturated}: a sum is exact up to the 64-bit bound and held there beyond, with the flag set,
 * never an exception. A distinct count stops at its {@code maxDistinct}, which its value then
 * equals.
 */
@DefaultCoder(Features.FeaturesCoder.class)
public final class Features {
  private final FeatureSchema schema;
  private final FeatureValues values;

  /** The features {@code values}, laid out as {@code schema} says. */
  public Features(FeatureSchema schema, FeatureValues values) {
    this.schema = Objects.requireNonNull(schema, "schema");
    this.values = Objects.requireNonNull(values, "values");
    if (values.size() != schema.size()) {
      throw new IllegalArgumentException(
          values.size() + " feature values for the " + schema.size() + " features of " + schema);
    }
  }

  public FeatureSchema schema() {
    return schema;
  }

  public FeatureValues values() {
    return values;
  }

  /** Feature names in model input order. */
  public List<String> names() {
    return schema.names();
  }

  public int size() {
    return schema.size();
  }

  /** Feature {@code index}'s value as its {@code long} (a decimal unscaled). */
  public long getLong(int index) {
    return values.getLong(index);
  }

  /**
   * The value of the feature {@code name} as its {@code long}.
   *
   * @throws IllegalArgumentException when there is no such feature
   */
  public long getLong(String name) {
    return values.getLong(index(name));
  }

  public double getDouble(int index) {
    return values.getDouble(index);
  }

  /** A decimal feature's value with its scale. */
  public BigDecimal decimal(int index) {
    return BigDecimal.valueOf(values.getLong(index), schema.scale(index));
  }

  /** Whether feature {@code index} has a value (a min, max, mean or last over no value has not). */
  public boolean isPresent(int index) {
    return values.isPresent(index);
  }

  /** Whether feature {@code index} overflowed (a sum held at the 64-bit bound). */
  public boolean isSaturated(int index) {
    return values.isSaturated(index);
  }

  /**
   * The index of the feature {@code name}.
   *
   * @throws IllegalArgumentException when there is no such feature
   */
  public int index(String name) {
    int index = schema.indexOf(name);
    if (index < 0) {
      throw new IllegalArgumentException("no feature '" + name + "' in " + schema.names());
    }
    return index;
  }

  public Instant latestEventTime() {
    return Instant.ofEpochMilli(values.latestEventMillis());
  }

  public Instant latestIngestionTime() {
    return Instant.ofEpochMilli(values.latestIngestionMillis());
  }

  /** The features as model input, in {@link #names()} order ({@link FeatureSchema#toVector}). */
  public float[] toVector() {
    return schema.toVector(values);
  }

  /** The {@code features} object of a decision, on its own. */
  public String toJson() {
    return Json.object(this::writeFields);
  }

  /** Writes the {@code features} object's fields. */
  void writeFields(JsonGenerator out) throws IOException {
    List<String> names = schema.names();
    for (int i = 0; i < names.size(); i++) {
      String name = names.get(i);
      if (!values.isPresent(i)) {
        out.writeNullField(name);
        continue;
      }
      ValueType type = schema.type(i);
      switch (type) {
        case DECIMAL:
          out.writeNumberField(name, decimal(i));
          break;
        case DOUBLE:
          out.writeNumberField(name, values.getDouble(i));
          break;
        case TIMESTAMP:
          out.writeStringField(name, Json.instant(new Instant(values.getLong(i))));
          break;
        case BOOLEAN:
          out.writeBooleanField(name, values.getLong(i) != 0);
          break;
        default:
          out.writeNumberField(name, values.getLong(i));
          break;
      }
    }
    for (int i = 0; i < names.size(); i++) {
      if (schema.isSum(i)) {
        out.writeBooleanField(names.get(i) + "Saturated", values.isSaturated(i));
      }
    }
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof Features)) {
      return false;
    }
    Features that = (Features) o;
    return schema.equals(that.schema) && values.equals(that.values);
  }

  @Override
  public int hashCode() {
    return values.hashCode();
  }

  @Override
  public String toString() {
    StringBuilder text = new StringBuilder("Features{");
    List<String> names = schema.names();
    for (int i = 0; i < names.size(); i++) {
      text.append(names.get(i)).append('=');
      if (!values.isPresent(i)) {
        text.append("absent");
      } else if (schema.type(i) == ValueType.DECIMAL) {
        text.append(decimal(i));
      } else if (schema.type(i) == ValueType.DOUBLE) {
        text.append(values.getDouble(i));
      } else {
        text.append(values.getLong(i));
      }
      text.append(values.isSaturated(i) ? " (saturated), " : ", ");
    }
    return text.append("latestEventTime=")
        .append(latestEventTime())
        .append(", latestIngestionTime=")
        .append(latestIngestionTime())
        .append('}')
        .toString();
  }

  /**
   * Compact, deterministic coder. Version 2: the schema ({@link FeatureSchema#writeTo}), then the
   * values ({@link FeatureValues#writeTo}). Version 1 held the five payment features: count, amount
   * sum, amount max, distinct merchants, distinct countries (fixed-width), the two clocks and the
   * sum's saturation flag; it reads into {@link PaymentFeatures#SCHEMA}.
   */
  public static final class FeaturesCoder extends Codec.DataCoder<Features> {
    private static final long serialVersionUID = 1L;

    @Override
    protected int version() {
      return 2;
    }

    private static final FeaturesCoder INSTANCE = new FeaturesCoder();

    public static FeaturesCoder of() {
      return INSTANCE;
    }

    /** Makes {@code @DefaultCoder} work for {@link Features}. */
    public static CoderProvider getCoderProvider() {
      return CoderProviders.forCoder(TypeDescriptor.of(Features.class), INSTANCE);
    }

    @Override
    protected void write(Features value, DataOutput out) throws IOException {
      value.schema.writeTo(out);
      value.values.writeTo(out);
    }

    @Override
    protected Features read(int version, DataInputStream in) throws IOException {
      if (version == 1) {
        long txnCount = in.readLong();
        long sum = in.readLong();
        long max = in.readLong();
        long merchants = in.readLong();
        long countries = in.readLong();
        Instant latestEvent = Codec.readInstant(in);
        Instant latestIngestion = Codec.readInstant(in);
        boolean saturated = in.readBoolean();
        return PaymentFeatures.of(
            txnCount, sum, max, merchants, countries, latestEvent, latestIngestion, saturated);
      }
      FeatureSchema schema = FeatureSchema.readFrom(in);
      return new Features(schema, FeatureValues.readFrom(in));
    }
  }
}
