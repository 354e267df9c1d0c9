package dev.tidemark.spec;

import dev.tidemark.spec.PipelineSpec.Aggregation;
import dev.tidemark.spec.PipelineSpec.Feature;
import dev.tidemark.spec.PipelineSpec.ValueType;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.beam.sdk.coders.CoderException;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * What a spec's features look like once computed: their names in model input order, the type of
 * each value, a decimal's scale, and which are sums (a sum's value can overflow 64 bits, so it
 * carries a saturation flag in every output). {@link FeatureValues} holds the values; this says how
 * to read and write them.
 *
 * <p>A value that carries its features carries their schema too, in {@link #bytes()} (about 12
 * bytes a feature): decisions then need no coder per spec, and a record read back names its own
 * features. Decoding looks the bytes up in a small cache, so every decision of one spec shares one
 * schema object.
 */
public final class FeatureSchema implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Format version 2 of {@link #bytes()}; version 1 had no key name. */
  private static final int VERSION = 2;

  /** The key's name in schemas of format version 1, which were all the payments spec's. */
  private static final String VERSION_1_KEY = "accountId";

  /** Schemas by their bytes; specs are few, so this stays small. */
  private static final Map<ByteArray, FeatureSchema> BY_BYTES = new ConcurrentHashMap<>();

  private static final int MAX_CACHED = 256;

  private final String keyName;
  private final List<String> names;
  private final ValueType[] types;
  private final int[] scales;
  private final boolean[] sums;

  /** 10^scale of each feature, as model input divides decimals by it for every row. */
  private final float[] divisors;

  private transient byte @Nullable [] bytes;

  private FeatureSchema(
      String keyName, List<String> names, ValueType[] types, int[] scales, boolean[] sums) {
    this.keyName = keyName;
    this.names = List.copyOf(names);
    this.types = types;
    this.scales = scales;
    this.sums = sums;
    this.divisors = new float[scales.length];
    for (int i = 0; i < scales.length; i++) {
      divisors[i] = (float) Math.pow(10, scales[i]);
    }
  }

  /** The schema of {@code spec}'s features. */
  public static FeatureSchema of(PipelineSpec spec) {
    return of(spec.events().key(), spec.features());
  }

  /** The schema of {@code features}, in their order, computed per the field {@code keyName}. */
  static FeatureSchema of(String keyName, List<Feature> features) {
    int n = features.size();
    List<String> names = new ArrayList<>(n);
    ValueType[] types = new ValueType[n];
    int[] scales = new int[n];
    boolean[] sums = new boolean[n];
    for (int i = 0; i < n; i++) {
      Feature feature = features.get(i);
      names.add(feature.name());
      types[i] = feature.valueType();
      scales[i] = feature.scale();
      sums[i] = feature.aggregation() == Aggregation.SUM;
    }
    return new FeatureSchema(keyName, names, types, scales, sums);
  }

  /** The name of the key field the features are computed per: the decisions' key. */
  public String keyName() {
    return keyName;
  }

  /** Feature names in model input order. */
  public List<String> names() {
    return names;
  }

  public int size() {
    return names.size();
  }

  /** The index of the feature {@code name}, or -1. */
  public int indexOf(String name) {
    return names.indexOf(name);
  }

  public ValueType type(int index) {
    return types[index];
  }

  /** The scale of a {@link ValueType#DECIMAL} feature; 0 for the others. */
  public int scale(int index) {
    return scales[index];
  }

  /** Whether the feature is a sum, whose outputs carry {@code <name>Saturated}. */
  public boolean isSum(int index) {
    return sums[index];
  }

  /**
   * The features of {@code values} as model input, in order: integers as they are, decimals in
   * units of their field (unscaled / 10^scale, as a float division), doubles, timestamps as epoch
   * milliseconds, booleans as 0 or 1; an absent feature is NaN, which the model engines take as a
   * missing value.
   */
  public float[] toVector(FeatureValues values) {
    float[] vector = new float[types.length];
    for (int i = 0; i < vector.length; i++) {
      if (!values.isPresent(i)) {
        vector[i] = Float.NaN;
      } else if (types[i] == ValueType.DOUBLE) {
        vector[i] = (float) values.getDouble(i);
      } else if (types[i] == ValueType.DECIMAL) {
        vector[i] = values.getLong(i) / divisors[i];
      } else {
        vector[i] = values.getLong(i);
      }
    }
    return vector;
  }

  /**
   * The schema as bytes. Format version 2: a version byte; the key's name (UTF-8 length and bytes);
   * the number of features; for each, its name (UTF-8 length and bytes), its type (the ordinal of
   * {@link ValueType}), its scale and whether it is a sum (0 or 1).
   */
  public byte[] bytes() {
    byte[] encoded = bytes;
    if (encoded == null) {
      try {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream(16 + 12 * names.size());
        DataOutputStream out = new DataOutputStream(buffer);
        out.writeByte(VERSION);
        VarInts.writeString(keyName, out);
        VarInts.writeUnsigned(names.size(), out);
        for (int i = 0; i < names.size(); i++) {
          VarInts.writeString(names.get(i), out);
          out.writeByte(types[i].ordinal());
          out.writeByte(scales[i]);
          out.writeByte(sums[i] ? 1 : 0);
        }
        encoded = buffer.toByteArray();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      bytes = encoded;
    }
    return encoded;
  }

  /** Writes {@link #bytes()}, length first. */
  public void writeTo(DataOutput out) throws IOException {
    byte[] encoded = bytes();
    VarInts.writeUnsigned(encoded.length, out);
    out.write(encoded);
  }

  /** Reads what {@link #writeTo} wrote. */
  public static FeatureSchema readFrom(DataInput in) throws IOException {
    int length = VarInts.readCount(in, 1 << 16, "schema bytes");
    byte[] encoded = new byte[length];
    in.readFully(encoded);
    ByteArray key = new ByteArray(encoded);
    FeatureSchema known = BY_BYTES.get(key);
    if (known != null) {
      return known;
    }
    FeatureSchema schema = parse(encoded);
    if (BY_BYTES.size() < MAX_CACHED) {
      BY_BYTES.putIfAbsent(key, schema);
    }
    return schema;
  }

  private static FeatureSchema parse(byte[] encoded) throws IOException {
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(encoded));
    int version = in.readUnsignedByte();
    if (version < 1 || version > VERSION) {
      throw new CoderException(
          "FeatureSchema cannot read format version "
              + version
              + ": this build reads versions 1 to "
              + VERSION);
    }
    String keyName = version == 1 ? VERSION_1_KEY : VarInts.readString(in);
    int n = VarInts.readCount(in, PipelineSpec.MAX_FIELDS, "features");
    List<String> names = new ArrayList<>(n);
    ValueType[] types = new ValueType[n];
    int[] scales = new int[n];
    boolean[] sums = new boolean[n];
    ValueType[] known = ValueType.values();
    for (int i = 0; i < n; i++) {
      names.add(VarInts.readString(in));
      int type = in.readUnsignedByte();
      if (type >= known.length) {
        throw new CoderException("feature type " + type + " is not a valid encoding");
      }
      types[i] = known[type];
      scales[i] = in.readUnsignedByte();
      sums[i] = in.readUnsignedByte() == 1;
    }
    FeatureSchema schema = new FeatureSchema(keyName, names, types, scales, sums);
    if (version == VERSION) {
      // An older version's schema writes itself anew, so equal schemas encode equally.
      schema.bytes = encoded;
    }
    return schema;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof FeatureSchema)) {
      return false;
    }
    FeatureSchema that = (FeatureSchema) o;
    return keyName.equals(that.keyName)
        && names.equals(that.names)
        && Arrays.equals(types, that.types)
        && Arrays.equals(scales, that.scales)
        && Arrays.equals(sums, that.sums);
  }

  @Override
  public int hashCode() {
    return names.hashCode() * 31 + Arrays.hashCode(types);
  }

  @Override
  public String toString() {
    List<String> described = new ArrayList<>(names.size());
    for (int i = 0; i < names.size(); i++) {
      described.add(
          names.get(i)
              + ":"
              + types[i].name().toLowerCase(java.util.Locale.ROOT)
              + (types[i] == ValueType.DECIMAL ? "(" + scales[i] + ")" : "")
              + (sums[i] ? " sum" : ""));
    }
    return "FeatureSchema(per " + keyName + ")" + described;
  }

  /** A byte array with value equality, as a map key. */
  private record ByteArray(byte[] bytes) {
    @Override
    public boolean equals(@Nullable Object o) {
      return o instanceof ByteArray && Arrays.equals(bytes, ((ByteArray) o).bytes);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
      return Arrays.toString(bytes);
    }
  }
}
