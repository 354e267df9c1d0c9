package dev.tidemark.spec;

import dev.tidemark.spec.PipelineSpec.Aggregation;
import dev.tidemark.spec.PipelineSpec.Condition;
import dev.tidemark.spec.PipelineSpec.Feature;
import dev.tidemark.spec.PipelineSpec.Field;
import dev.tidemark.spec.PipelineSpec.ValueType;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.TreeSet;
import org.apache.beam.sdk.coders.CannotProvideCoderException;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.coders.CoderRegistry;
import org.apache.beam.sdk.coders.CustomCoder;
import org.apache.beam.sdk.transforms.Combine.CombineFn;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Computes a spec's features over the events of one key in one window: {@code count}, {@code sum},
 * {@code min}, {@code max}, {@code mean}, {@code distinct}, {@code last}, each over the events that
 * meet its {@code where} conditions and have its field present, and {@code custom} features whose
 * {@link CombineFn} the caller supplies ({@link #withFeatureFn}). Associative and commutative, so
 * runners may combine before the shuffle; deterministic, so replays give the same values.
 *
 * <p>Per event it does a loop over the features with no boxing and no map: numbers sit in one
 * {@code long[]}, a distinct count over strings in a {@link TreeSet}, over numbers in a sorted
 * {@code long[]}.
 *
 * <p>Overflow, per aggregation: a count is a {@code long} of events, which no input overflows. A
 * sum (and the sum behind a mean) is kept exact in 128 bits, which 2^63 events cannot overflow;
 * when the exact sum does not fit 64 bits the feature is held at {@link Long#MAX_VALUE} (or {@link
 * Long#MIN_VALUE} for a negative sum) and marked {@link FeatureValues#isSaturated saturated}, the
 * same whatever the order of combining. A distinct count keeps at most {@code maxDistinct} values
 * (memory per key and window: at most {@code maxDistinct} strings of the field's {@code maxLength},
 * or 8 bytes each for numbers); beyond, it stops at the bound and is saturated, which again does
 * not depend on the order (it is saturated exactly when the true count is over the bound). Min, max
 * and last cannot overflow; over no value they are absent.
 *
 * <p>{@code last} is the value of the event with the latest event time, then the latest ingestion
 * time, then the largest value: a deterministic choice. The pane's clocks ({@link
 * FeatureValues#latestEventMillis}) follow the same rule over all events.
 *
 * <pre>{@code
 * SpecFeaturesFn features = SpecFeaturesFn.of(spec).withFeatureFn("riskScore", new MyRiskFn());
 * }</pre>
 */
public final class SpecFeaturesFn
    extends CombineFn<FieldValues, SpecFeaturesFn.Accumulator, FeatureValues> {
  private static final long serialVersionUID = 1L;

  private static final int COUNT = 0;
  private static final int SUM = 1;
  private static final int MIN = 2;
  private static final int MAX = 3;
  private static final int MEAN = 4;
  private static final int DISTINCT = 5;
  private static final int LAST = 6;
  private static final int CUSTOM = 7;

  private final PipelineSpec spec;
  private final FeatureSchema schema;
  private final int features;
  private final int[] kind;
  private final int[] field;
  private final boolean[] stringField;
  private final int[] slot;
  private final int[] index;
  private final int[] maxDistinct;
  private final ValueType[] valueType;

  /** What a mean divides its unscaled mean by: 10^scale of a decimal field, else 1. */
  private final double[] meanUnit;

  private final int[][] conditionField;
  private final long[][] conditionLong;
  private final String[][] conditionString;
  private final int longSlots;
  private final int sets;
  private final CombineFn<FieldValues, Object, Number>[] customFns;

  /** The features of {@code spec}; a custom feature needs {@link #withFeatureFn} before use. */
  public static SpecFeaturesFn of(PipelineSpec spec) {
    return new SpecFeaturesFn(spec, new CombineFn[spec.features().size()]);
  }

  /**
   * This combine with {@code name}'s value computed by {@code fn} instead of the spec's aggregation
   * (or for a feature the spec declares {@code custom}). The feature keeps its place in the model
   * input and the type the spec gives it; {@code fn} sees every event of the pane (its filter is
   * {@code fn}'s own), its output is taken as the feature's value, and its accumulator coder (from
   * the registry) encodes its part of the state.
   */
  public SpecFeaturesFn withFeatureFn(String name, CombineFn<FieldValues, ?, ? extends Number> fn) {
    int at = spec.featureNames().indexOf(name);
    if (at < 0) {
      throw new IllegalArgumentException(
          "the spec '"
              + spec.name()
              + "' has no feature '"
              + name
              + "'; its features are "
              + spec.featureNames());
    }
    CombineFn<FieldValues, Object, Number>[] fns = customFns.clone();
    @SuppressWarnings("unchecked")
    CombineFn<FieldValues, Object, Number> cast = (CombineFn<FieldValues, Object, Number>) fn;
    fns[at] = cast;
    return new SpecFeaturesFn(spec, fns);
  }

  @SuppressWarnings("unchecked")
  private SpecFeaturesFn(PipelineSpec spec, CombineFn<?, ?, ?>[] fns) {
    this.spec = spec;
    this.schema = FeatureSchema.of(spec);
    this.customFns = (CombineFn<FieldValues, Object, Number>[]) fns;
    List<Feature> declared = spec.features();
    List<Field> fields = spec.events().fields();
    List<String> fieldNames = fields.stream().map(Field::name).toList();
    features = declared.size();
    kind = new int[features];
    field = new int[features];
    stringField = new boolean[features];
    slot = new int[features];
    index = new int[features];
    maxDistinct = new int[features];
    valueType = new ValueType[features];
    meanUnit = new double[features];
    conditionField = new int[features][];
    conditionLong = new long[features][];
    conditionString = new String[features][];
    int slots = 0;
    int setCount = 0;
    for (int i = 0; i < features; i++) {
      Feature feature = declared.get(i);
      kind[i] = customFns[i] != null ? CUSTOM : kindOf(feature.aggregation());
      field[i] = kind[i] == CUSTOM || feature.of() == null ? -1 : fieldNames.indexOf(feature.of());
      stringField[i] = field[i] >= 0 && !fields.get(field[i]).type().isLong();
      valueType[i] = feature.valueType();
      // A mean of a decimal field is in the field's units: its unscaled mean over 10^scale.
      meanUnit[i] = field[i] >= 0 ? Math.pow(10, fields.get(field[i]).scale()) : 1;
      maxDistinct[i] = feature.maxDistinct();
      slot[i] = slots;
      switch (kind[i]) {
        case COUNT:
        case MIN:
        case MAX:
          slots += 1;
          break;
        case SUM:
          slots += 2;
          break;
        case MEAN:
        case LAST:
          slots += 3;
          break;
        case DISTINCT:
          index[i] = setCount++;
          break;
        default:
          break;
      }
      List<Condition> where = kind[i] == CUSTOM ? List.of() : feature.where();
      conditionField[i] = new int[where.size()];
      conditionLong[i] = new long[where.size()];
      conditionString[i] = new String[where.size()];
      for (int j = 0; j < where.size(); j++) {
        Condition condition = where.get(j);
        int f = fieldNames.indexOf(condition.field());
        Field conditionOn = fields.get(f);
        conditionField[i][j] = f;
        if (conditionOn.type().isLong()) {
          conditionLong[i][j] = longOf(conditionOn, condition.value());
        } else {
          conditionString[i][j] = condition.value();
        }
      }
    }
    longSlots = slots;
    sets = setCount;
  }

  private static int kindOf(Aggregation aggregation) {
    switch (aggregation) {
      case COUNT:
        return COUNT;
      case SUM:
        return SUM;
      case MIN:
        return MIN;
      case MAX:
        return MAX;
      case MEAN:
        return MEAN;
      case DISTINCT:
        return DISTINCT;
      case LAST:
        return LAST;
      default:
        return CUSTOM;
    }
  }

  private static long longOf(Field field, String value) {
    switch (field.type()) {
      case BOOLEAN:
        return Boolean.parseBoolean(value) ? 1 : 0;
      case TIMESTAMP:
        return FieldParser.epochMillis(value);
      case DECIMAL:
        return new BigDecimal(value).movePointRight(field.scale()).longValueExact();
      default:
        return new BigDecimal(value).longValueExact();
    }
  }

  /**
   * The coder of this combine's input that writes only the fields its features and filters read
   * (all fields when a feature is custom): what a pipeline sets on the events it windows, so that
   * each copy it shuffles carries no more than the features need.
   */
  public FieldValues.Coder inputCoder() {
    long read = 0;
    for (int i = 0; i < features; i++) {
      if (kind[i] == CUSTOM) {
        read = -1L;
        break;
      }
      if (field[i] >= 0) {
        read |= 1L << field[i];
      }
      for (int f : conditionField[i]) {
        read |= 1L << f;
      }
    }
    return FieldValues.Coder.of(spec.events().fields(), read);
  }

  /** The spec this combine computes. */
  public PipelineSpec spec() {
    return spec;
  }

  /**
   * Equal when both compute the same features over the same fields, with the same custom combines
   * (by identity).
   */
  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof SpecFeaturesFn)) {
      return false;
    }
    SpecFeaturesFn that = (SpecFeaturesFn) o;
    return spec.features().equals(that.spec.features())
        && spec.events().fields().equals(that.spec.events().fields())
        && Arrays.equals(customFns, that.customFns);
  }

  @Override
  public int hashCode() {
    return spec.features().hashCode();
  }

  /** The schema of this combine's output. */
  public FeatureSchema schema() {
    return schema;
  }

  /** The running aggregate of one key and window; private to the combine. */
  public static final class Accumulator {
    final long[] longs;
    long seen;
    long overflow;
    final Object[] sets;
    final Object[] custom;
    long latestEventMillis = Long.MIN_VALUE;
    long latestIngestionMillis = Long.MIN_VALUE;

    Accumulator(int longSlots, int sets, int features) {
      this.longs = new long[longSlots];
      this.sets = new Object[sets];
      this.custom = new Object[features];
    }
  }

  /** Whether {@code acc} has had no input: a fresh accumulator, or a merge of such. */
  public static boolean isEmpty(Accumulator acc) {
    return acc.latestEventMillis == Long.MIN_VALUE;
  }

  @Override
  public Accumulator createAccumulator() {
    checkCustomFns();
    Accumulator acc = new Accumulator(longSlots, sets, features);
    for (int i = 0; i < features; i++) {
      if (kind[i] == DISTINCT) {
        acc.sets[index[i]] = stringField[i] ? new TreeSet<String>() : new LongSet();
      } else if (kind[i] == CUSTOM) {
        acc.custom[i] = customFns[i].createAccumulator();
      }
    }
    return acc;
  }

  private void checkCustomFns() {
    for (int i = 0; i < features; i++) {
      if (kind[i] == CUSTOM && customFns[i] == null) {
        String name = spec.features().get(i).name();
        throw new IllegalStateException(
            "the feature '"
                + name
                + "' of the spec '"
                + spec.name()
                + "' is custom: supply its CombineFn with withFeatureFn(\""
                + name
                + "\", fn)");
      }
    }
  }

  @Override
  public Accumulator addInput(Accumulator acc, FieldValues input) {
    later(acc, input.eventTimeMillis, input.ingestionTimeMillis);
    for (int i = 0; i < features; i++) {
      if (kind[i] == CUSTOM) {
        acc.custom[i] = customFns[i].addInput(acc.custom[i], input);
        continue;
      }
      int f = field[i];
      if ((f >= 0 && !input.isPresent(f)) || !matches(i, input)) {
        continue;
      }
      long[] longs = acc.longs;
      int s = slot[i];
      long bit = 1L << i;
      switch (kind[i]) {
        case COUNT:
          longs[s]++;
          break;
        case SUM:
          add128(longs, s, input.longs[f] >> 63, input.longs[f]);
          break;
        case MIN:
          if ((acc.seen & bit) == 0 || input.longs[f] < longs[s]) {
            longs[s] = input.longs[f];
          }
          acc.seen |= bit;
          break;
        case MAX:
          if ((acc.seen & bit) == 0 || input.longs[f] > longs[s]) {
            longs[s] = input.longs[f];
          }
          acc.seen |= bit;
          break;
        case MEAN:
          add128(longs, s, input.longs[f] >> 63, input.longs[f]);
          longs[s + 2]++;
          acc.seen |= bit;
          break;
        case LAST:
          last(acc, i, input.longs[f], input.eventTimeMillis, input.ingestionTimeMillis);
          break;
        case DISTINCT:
          if (stringField[i]) {
            addDistinct(acc, i, input.strings[f]);
          } else {
            addDistinct(acc, i, input.longs[f]);
          }
          break;
        default:
          break;
      }
    }
    return acc;
  }

  private boolean matches(int feature, FieldValues input) {
    int[] fields = conditionField[feature];
    for (int j = 0; j < fields.length; j++) {
      int f = fields[j];
      if (!input.isPresent(f)) {
        return false;
      }
      String text = conditionString[feature][j];
      if (text != null
          ? !text.equals(input.strings[f])
          : input.longs[f] != conditionLong[feature][j]) {
        return false;
      }
    }
    return true;
  }

  private static void later(Accumulator acc, long eventMillis, long ingestionMillis) {
    if (eventMillis > acc.latestEventMillis
        || (eventMillis == acc.latestEventMillis && ingestionMillis > acc.latestIngestionMillis)) {
      acc.latestEventMillis = eventMillis;
      acc.latestIngestionMillis = ingestionMillis;
    }
  }

  /** Adds the 128-bit value (high, low) to the 128-bit number at {@code longs[s]} (high), s+1. */
  private static void add128(long[] longs, int s, long high, long low) {
    long sum = longs[s + 1] + low;
    long carry = Long.compareUnsigned(sum, longs[s + 1]) < 0 ? 1 : 0;
    longs[s + 1] = sum;
    longs[s] += high + carry;
  }

  private void last(Accumulator acc, int i, long value, long eventMillis, long ingestionMillis) {
    long[] longs = acc.longs;
    int s = slot[i];
    long bit = 1L << i;
    if ((acc.seen & bit) == 0
        || eventMillis > longs[s + 1]
        || (eventMillis == longs[s + 1]
            && (ingestionMillis > longs[s + 2]
                || (ingestionMillis == longs[s + 2] && value > longs[s])))) {
      longs[s] = value;
      longs[s + 1] = eventMillis;
      longs[s + 2] = ingestionMillis;
      acc.seen |= bit;
    }
  }

  @SuppressWarnings("unchecked")
  private void addDistinct(Accumulator acc, int i, String value) {
    TreeSet<String> set = (TreeSet<String>) acc.sets[index[i]];
    if (set.size() < maxDistinct[i]) {
      set.add(value);
    } else if (!set.contains(value)) {
      acc.overflow |= 1L << i;
    }
  }

  private void addDistinct(Accumulator acc, int i, long value) {
    LongSet set = (LongSet) acc.sets[index[i]];
    if (!set.add(value, maxDistinct[i])) {
      acc.overflow |= 1L << i;
    }
  }

  @Override
  public Accumulator mergeAccumulators(Iterable<Accumulator> accumulators) {
    Iterator<Accumulator> it = accumulators.iterator();
    if (!it.hasNext()) {
      return createAccumulator();
    }
    Accumulator into = it.next();
    while (it.hasNext()) {
      mergeInto(into, it.next());
    }
    return into;
  }

  @SuppressWarnings("unchecked")
  private void mergeInto(Accumulator into, Accumulator other) {
    later(into, other.latestEventMillis, other.latestIngestionMillis);
    into.overflow |= other.overflow;
    for (int i = 0; i < features; i++) {
      int s = slot[i];
      long bit = 1L << i;
      boolean otherSeen = (other.seen & bit) != 0;
      switch (kind[i]) {
        case COUNT:
          into.longs[s] += other.longs[s];
          break;
        case SUM:
          add128(into.longs, s, other.longs[s], other.longs[s + 1]);
          break;
        case MIN:
          if (otherSeen && ((into.seen & bit) == 0 || other.longs[s] < into.longs[s])) {
            into.longs[s] = other.longs[s];
          }
          into.seen |= other.seen & bit;
          break;
        case MAX:
          if (otherSeen && ((into.seen & bit) == 0 || other.longs[s] > into.longs[s])) {
            into.longs[s] = other.longs[s];
          }
          into.seen |= other.seen & bit;
          break;
        case MEAN:
          add128(into.longs, s, other.longs[s], other.longs[s + 1]);
          into.longs[s + 2] += other.longs[s + 2];
          into.seen |= other.seen & bit;
          break;
        case LAST:
          if (otherSeen) {
            last(into, i, other.longs[s], other.longs[s + 1], other.longs[s + 2]);
          }
          break;
        case DISTINCT:
          if (stringField[i]) {
            for (String value : (TreeSet<String>) other.sets[index[i]]) {
              addDistinct(into, i, value);
            }
          } else {
            LongSet values = (LongSet) other.sets[index[i]];
            for (int j = 0; j < values.size; j++) {
              addDistinct(into, i, values.values[j]);
            }
          }
          break;
        case CUSTOM:
          into.custom[i] = customFns[i].mergeAccumulators(List.of(into.custom[i], other.custom[i]));
          break;
        default:
          break;
      }
    }
  }

  @Override
  public FeatureValues extractOutput(Accumulator acc) {
    long[] values = new long[features];
    long present = 0;
    long saturated = acc.overflow;
    for (int i = 0; i < features; i++) {
      int s = slot[i];
      long bit = 1L << i;
      switch (kind[i]) {
        case COUNT:
          values[i] = acc.longs[s];
          present |= bit;
          break;
        case SUM:
          long high = acc.longs[s];
          long low = acc.longs[s + 1];
          if (high == (low >> 63)) {
            values[i] = low;
          } else {
            values[i] = high < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
            saturated |= bit;
          }
          present |= bit;
          break;
        case MIN:
        case MAX:
        case LAST:
          values[i] = acc.longs[s];
          present |= acc.seen & bit;
          break;
        case MEAN:
          if ((acc.seen & bit) != 0) {
            values[i] =
                Double.doubleToLongBits(
                    mean(acc.longs[s], acc.longs[s + 1], acc.longs[s + 2]) / meanUnit[i]);
            present |= bit;
          }
          break;
        case DISTINCT:
          Object set = acc.sets[index[i]];
          values[i] = set instanceof LongSet ? ((LongSet) set).size : ((TreeSet<?>) set).size();
          present |= bit;
          break;
        case CUSTOM:
          Number number = customFns[i].extractOutput(acc.custom[i]);
          if (number != null) {
            values[i] =
                valueType[i] == ValueType.DOUBLE
                    ? Double.doubleToLongBits(number.doubleValue())
                    : number.longValue();
            present |= bit;
          }
          break;
        default:
          break;
      }
    }
    return new FeatureValues(
        values, present, saturated, acc.latestEventMillis, acc.latestIngestionMillis);
  }

  private static double mean(long high, long low, long count) {
    if (high == (low >> 63)) {
      return (double) low / count;
    }
    BigInteger sum =
        BigInteger.valueOf(high).shiftLeft(64).add(new BigInteger(Long.toUnsignedString(low)));
    return new BigDecimal(sum)
        .divide(BigDecimal.valueOf(count), java.math.MathContext.DECIMAL64)
        .doubleValue();
  }

  /** The features as model input, in the spec's order ({@link FeatureSchema#toVector}). */
  public float[] toVector(FeatureValues values) {
    return schema.toVector(values);
  }

  @Override
  public Coder<Accumulator> getAccumulatorCoder(
      CoderRegistry registry, Coder<FieldValues> inputCoder) throws CannotProvideCoderException {
    checkCustomFns();
    List<Coder<Object>> coders = new ArrayList<>();
    for (int i = 0; i < features; i++) {
      coders.add(kind[i] == CUSTOM ? customFns[i].getAccumulatorCoder(registry, inputCoder) : null);
    }
    return new AccumulatorCoder(this, coders);
  }

  @Override
  public Coder<FeatureValues> getDefaultOutputCoder(
      CoderRegistry registry, Coder<FieldValues> inputCoder) {
    return FeatureValues.Coder.of();
  }

  /** A set of distinct longs, sorted, growing to a bound. */
  static final class LongSet {
    long[] values = new long[4];
    int size;

    /** Adds {@code value}; false when it is new and the set already holds {@code bound} values. */
    boolean add(long value, int bound) {
      int at = Arrays.binarySearch(values, 0, size, value);
      if (at >= 0) {
        return true;
      }
      if (size >= bound) {
        return false;
      }
      int insert = -at - 1;
      if (size == values.length) {
        values = Arrays.copyOf(values, size * 2);
      }
      System.arraycopy(values, insert, values, insert + 1, size - insert);
      values[insert] = value;
      size++;
      return true;
    }
  }

  /**
   * The accumulator's coder. Format version 2: a version byte; the number slots; the seen and
   * overflow masks; each distinct set (its size, then its values in sorted order); each custom
   * feature's accumulator in its own coder; the latest event time, then the ingestion time less it.
   * Numbers are zig-zag variable-length integers, sizes and masks variable-length, strings their
   * UTF-8 length and bytes. Deterministic when the custom coders are.
   *
   * <p>Version 1 is the state of the payment features before they came from a spec (releases 0.1
   * and 0.2, whose savepoints restore into this one): count, amount sum in minor units and its
   * saturation flag, amount maximum, the merchant and country sets, the two clocks, in fixed-width
   * big-endian numbers and length-prefixed strings. It reads into the features {@code count, sum,
   * max, distinct, distinct} of a decimal and two string fields, in that order, as the payments
   * spec declares them; a spec whose features differ cannot take such state and the read fails
   * saying so.
   */
  static final class AccumulatorCoder extends CustomCoder<Accumulator> {
    private static final long serialVersionUID = 1L;

    private static final int LEGACY_PAYMENTS = 1;
    private static final int VERSION = 2;

    private final SpecFeaturesFn fn;
    private final List<Coder<Object>> customCoders;

    AccumulatorCoder(SpecFeaturesFn fn, List<Coder<Object>> customCoders) {
      this.fn = fn;
      this.customCoders = new ArrayList<>(customCoders);
    }

    @Override
    public boolean consistentWithEquals() {
      return false;
    }

    @Override
    public void verifyDeterministic() throws NonDeterministicException {
      for (Coder<Object> coder : customCoders) {
        if (coder != null) {
          coder.verifyDeterministic();
        }
      }
    }

    @Override
    @SuppressWarnings("unchecked")
    public void encode(Accumulator acc, OutputStream outStream) throws IOException {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + 8 * acc.longs.length);
      DataOutputStream out = new DataOutputStream(bytes);
      out.writeByte(VERSION);
      for (long value : acc.longs) {
        VarInts.writeSigned(value, out);
      }
      VarInts.writeUnsigned(acc.seen, out);
      VarInts.writeUnsigned(acc.overflow, out);
      for (Object set : acc.sets) {
        if (set instanceof LongSet) {
          LongSet longs = (LongSet) set;
          VarInts.writeUnsigned(longs.size, out);
          for (int j = 0; j < longs.size; j++) {
            VarInts.writeSigned(longs.values[j], out);
          }
        } else {
          TreeSet<String> strings = (TreeSet<String>) set;
          VarInts.writeUnsigned(strings.size(), out);
          for (String value : strings) {
            VarInts.writeString(value, out);
          }
        }
      }
      for (int i = 0; i < customCoders.size(); i++) {
        if (customCoders.get(i) != null) {
          customCoders.get(i).encode(acc.custom[i], out);
        }
      }
      VarInts.writeSigned(acc.latestEventMillis, out);
      VarInts.writeSigned(acc.latestIngestionMillis - acc.latestEventMillis, out);
      bytes.writeTo(outStream);
    }

    @Override
    @SuppressWarnings("unchecked")
    public Accumulator decode(InputStream inStream) throws IOException {
      DataInputStream in = new DataInputStream(inStream);
      int version = in.readUnsignedByte();
      if (version == LEGACY_PAYMENTS) {
        return readLegacyPayments(in);
      }
      if (version != VERSION) {
        throw new CoderException(
            "SpecFeaturesFn.AccumulatorCoder cannot read format version "
                + version
                + ": this build reads versions 1 and 2 (the bytes are another release's or not"
                + " this coder's)");
      }
      Accumulator acc = new Accumulator(fn.longSlots, fn.sets, fn.features);
      for (int j = 0; j < acc.longs.length; j++) {
        acc.longs[j] = VarInts.readSigned(in);
      }
      acc.seen = VarInts.readUnsigned(in);
      acc.overflow = VarInts.readUnsigned(in);
      for (int i = 0; i < fn.features; i++) {
        if (fn.kind[i] != DISTINCT) {
          continue;
        }
        int size = VarInts.readCount(in, fn.maxDistinct[i], "distinct values");
        if (fn.stringField[i]) {
          TreeSet<String> set = new TreeSet<>();
          for (int j = 0; j < size; j++) {
            set.add(VarInts.readString(in));
          }
          acc.sets[fn.index[i]] = set;
        } else {
          LongSet set = new LongSet();
          set.values = new long[Math.max(4, size)];
          for (int j = 0; j < size; j++) {
            set.values[j] = VarInts.readSigned(in);
          }
          set.size = size;
          acc.sets[fn.index[i]] = set;
        }
      }
      for (int i = 0; i < customCoders.size(); i++) {
        if (customCoders.get(i) != null) {
          acc.custom[i] = customCoders.get(i).decode(in);
        }
      }
      acc.latestEventMillis = VarInts.readSigned(in);
      acc.latestIngestionMillis = acc.latestEventMillis + VarInts.readSigned(in);
      return acc;
    }

    /** Reads format version 1, the payment features' state of releases 0.1 and 0.2. */
    private Accumulator readLegacyPayments(DataInputStream in) throws IOException {
      int[] expected = {COUNT, SUM, MAX, DISTINCT, DISTINCT};
      boolean fits = fn.features == expected.length;
      for (int i = 0; fits && i < expected.length; i++) {
        fits = fn.kind[i] == expected[i] && (i < 3 || fn.stringField[i]);
      }
      if (!fits) {
        throw new CoderException(
            "this state holds the payment features of Tidemark 0.1 or 0.2 (count, amount sum,"
                + " amount max, distinct merchants, distinct countries); the spec '"
                + fn.spec.name()
                + "' computes "
                + fn.schema.names()
                + ", which cannot take it: restore it with the payments spec");
      }
      Accumulator acc = new Accumulator(fn.longSlots, fn.sets, fn.features);
      long count = in.readLong();
      long sum = in.readLong();
      boolean sumSaturated = in.readBoolean();
      long max = in.readLong();
      acc.longs[fn.slot[0]] = count;
      // A saturated sum was at least 2^63 minor units: as a 128-bit number it does not fit 64 bits.
      acc.longs[fn.slot[1]] = 0;
      acc.longs[fn.slot[1] + 1] = sumSaturated ? Long.MIN_VALUE : sum;
      acc.longs[fn.slot[2]] = max;
      if (count > 0) {
        acc.seen |= 1L << 2;
      }
      for (int i = 3; i < 5; i++) {
        int size = in.readInt();
        if (size < 0) {
          throw new CoderException("negative set size " + size);
        }
        acc.sets[fn.index[i]] = new TreeSet<String>();
        for (int j = 0; j < size; j++) {
          int length = in.readInt();
          if (length < 0) {
            throw new CoderException("negative length " + length);
          }
          byte[] bytes = new byte[length];
          in.readFully(bytes);
          fn.addDistinct(acc, i, new String(bytes, java.nio.charset.StandardCharsets.UTF_8));
        }
      }
      acc.latestEventMillis = in.readLong();
      acc.latestIngestionMillis = in.readLong();
      return acc;
    }
  }
}
