package dev.tidemark.transforms.values;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import dev.tidemark.spec.FieldValues;
import dev.tidemark.spec.SpecLoader;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.IOException;
import java.io.ObjectStreamClass;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.testing.CoderProperties;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.util.CoderUtils;
import org.joda.time.Instant;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The format versions of the value coders: each writes its current version, reads bytes of that
 * version written by hand (what state kept by this release holds) and of every older version it
 * still reads, and refuses a version it does not know with a message naming the coder and the
 * version.
 */
@RunWith(JUnit4.class)
public class FormatVersionsTest {
  private static final Instant T0 = Instant.ofEpochMilli(1_767_225_600_000L);
  private static final byte[] FINGERPRINT = new byte[16];

  static {
    for (int i = 0; i < FINGERPRINT.length; i++) {
      FINGERPRINT[i] = (byte) (i * 17);
    }
  }

  /** A coder, a value and the bytes of that value in the coder's current version, by hand. */
  private static final class Case<T> {
    final Codec.DataCoder<T> coder;
    final T value;
    final byte[] current;

    Case(Codec.DataCoder<T> coder, T value, FormatBytes current) {
      this.coder = coder;
      this.value = value;
      this.current = current.toBytes();
    }
  }

  static Event event() {
    return PaymentFields.bundled()
        .event(
            "/shop",
            "evt-1",
            "payment.authorized",
            T0,
            T0.plus(5),
            "acct-1",
            1250,
            "EUR",
            "m-7",
            null,
            FINGERPRINT);
  }

  static Features features() {
    return PaymentFeatures.of(3, 1234, 900, 2, 1, T0.plus(5), T0.plus(9), false);
  }

  /** The payment features in format version 1, which held exactly those five. */
  static FormatBytes featuresVersion1Fields(FormatBytes bytes) {
    return bytes
        .i64(3)
        .i64(1234)
        .i64(900)
        .i64(2)
        .i64(1)
        .i64(T0.getMillis() + 5)
        .i64(T0.getMillis() + 9)
        .bool(false);
  }

  /** A variable-length unsigned integer, 7 bits a byte, low bits first. */
  private static byte[] varint(long value) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    while ((value & ~0x7FL) != 0) {
      out.write((int) ((value & 0x7F) | 0x80));
      value >>>= 7;
    }
    out.write((int) value);
    return out.toByteArray();
  }

  /** A string as its UTF-8 length (a variable-length integer) and bytes. */
  private static byte[] varString(String value) {
    byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    out.writeBytes(varint(utf8.length));
    out.writeBytes(utf8);
    return out.toByteArray();
  }

  private static byte[] zigzag(long value) {
    return varint((value << 1) ^ (value >> 63));
  }

  /**
   * {@link #features()} in format version 2: the schema (its length, then version 1, the count and
   * each feature's name, type, scale and sum flag), then the values (version 1, the count, each
   * value zig-zag, the presence and saturation masks, the event time and the ingestion time less
   * it).
   */
  static FormatBytes featuresVersion2Fields(FormatBytes bytes) {
    java.io.ByteArrayOutputStream schema = new java.io.ByteArrayOutputStream();
    schema.write(2);
    schema.writeBytes(varString("accountId"));
    schema.write(5);
    Object[][] features = {
      {"txnCount", 0, 0, 0},
      {"amountSum", 1, 2, 1},
      {"amountMax", 1, 2, 0},
      {"distinctMerchants", 0, 0, 0},
      {"distinctCountries", 0, 0, 0}
    };
    for (Object[] feature : features) {
      byte[] name = ((String) feature[0]).getBytes(StandardCharsets.UTF_8);
      schema.writeBytes(varint(name.length));
      schema.writeBytes(name);
      schema.write((Integer) feature[1]); // INTEGER 0, DECIMAL 1
      schema.write((Integer) feature[2]);
      schema.write((Integer) feature[3]);
    }
    byte[] schemaBytes = schema.toByteArray();
    bytes.raw(varint(schemaBytes.length)).raw(schemaBytes).u8(1).u8(5);
    for (long value : new long[] {3, 1234, 900, 2, 1}) {
      bytes.raw(zigzag(value));
    }
    return bytes.raw(varint(0b11111)).raw(varint(0)).raw(zigzag(T0.getMillis() + 5)).raw(zigzag(4));
  }

  /** A scored decision, without the fields of version 2. */
  static Decision scoredDecision() {
    return Decision.unscored(
            "acct-1", T0, T0.plus(300_000), "ON_TIME", 4, false, true, features(), T0.plus(20))
        .withScore(
            0.25,
            "review",
            new Decision.ModelRef("tidemark-fraud-xgb", "1", "XGBoost"),
            T0.plus(21));
  }

  /** A scored decision reversing an earlier {@code allow}, with a shadow model's verdict. */
  static Decision decision() {
    return scoredDecision()
        .withCorrection(new Decision.Supersedes(3, 0.125, "allow"))
        .withShadow(
            new Decision.Shadow(
                0.75,
                "review",
                new Decision.ModelRef("tidemark-fraud-logreg", "2", "OnnxRuntime")));
  }

  /**
   * The bytes of {@link #scoredDecision()} in {@code version}, up to the model, with its features
   * in their format version 1 (as decisions of version 1 held them) or 2.
   */
  static FormatBytes decisionFields(FormatBytes version, int featuresVersion) {
    Decision decision = scoredDecision();
    FormatBytes head =
        version
            .str(decision.decisionId())
            .str("acct-1")
            .i64(T0.getMillis())
            .i64(T0.getMillis() + 300_000)
            .u8(1) // ON_TIME, the second of the known timings
            .i64(4)
            .bool(false)
            .bool(true)
            .u8(featuresVersion); // the version of the nested features
    return (featuresVersion == 1 ? featuresVersion1Fields(head) : featuresVersion2Fields(head))
        .i64(T0.getMillis() + 20)
        .i64(T0.getMillis() + 21)
        .bool(true)
        .f64(0.25)
        .u8(1) // review, the second of the known labels
        .str("tidemark-fraud-xgb")
        .str("1")
        .str("XGBoost");
  }

  private static List<Case<?>> cases() {
    byte[] payload = "{\"id\":\"x\"}".getBytes(StandardCharsets.UTF_8);
    Decision decision = decision();
    return List.of(
        new Case<>(
            Event.EventCoder.of(),
            event(),
            FormatBytes.version(2)
                .str("/shop")
                .str("evt-1")
                .str("payment.authorized")
                .u8(0) // the key: accountId, the first field
                .raw(varint(5)) // the payments spec's five fields
                .raw(varint(0b01111)) // present: all but country
                .raw(varint(0b01101)) // strings: accountId, currency, merchantId
                .raw(varString("acct-1"))
                .raw(zigzag(1250))
                .raw(varString("EUR"))
                .raw(varString("m-7"))
                .raw(zigzag(T0.getMillis()))
                .raw(zigzag(5))
                .bytes(FINGERPRINT)),
        new Case<>(
            DuplicateRecord.DuplicateRecordCoder.of(),
            new DuplicateRecord("/shop", "evt-1", T0, true, T0.minus(1000), T0.plus(9)),
            FormatBytes.version(1)
                .str("/shop")
                .str("evt-1")
                .i64(T0.getMillis())
                .bool(true)
                .i64(T0.getMillis() - 1000)
                .i64(T0.getMillis() + 9)),
        new Case<>(
            TooLateRecord.TooLateRecordCoder.of(),
            new TooLateRecord(
                "/shop",
                "evt-2",
                "accountId",
                "acct-1",
                T0,
                List.of(
                    new IntervalWindow(T0.minus(300_000), T0.plus(1)),
                    new IntervalWindow(T0.minus(270_000), T0.plus(30_001))),
                true,
                T0.plus(7),
                T0.plus(3_600_000)),
            FormatBytes.version(2)
                .str("/shop")
                .str("evt-2")
                .str("accountId")
                .str("acct-1")
                .i64(T0.getMillis())
                .i32(2)
                .i64(T0.getMillis() - 300_000)
                .i64(T0.getMillis() + 1)
                .i64(T0.getMillis() - 270_000)
                .i64(T0.getMillis() + 30_001)
                .bool(true)
                .i64(T0.getMillis() + 7)
                .i64(T0.getMillis() + 3_600_000)),
        new Case<>(
            RawRecord.RawRecordCoder.of(),
            RawRecord.of(payload, T0, "kafka:payments/1@42"),
            FormatBytes.version(1)
                .bytes(payload)
                .i64(T0.getMillis())
                .str("kafka:payments/1@42")
                .nullableStr(null)
                .nullableStr(null)),
        new Case<>(
            Features.FeaturesCoder.of(),
            features(),
            featuresVersion2Fields(FormatBytes.version(2))),
        new Case<>(
            DeadLetter.DeadLetterCoder.of(),
            new DeadLetter(
                DeadLetterReason.INVALID_JSON,
                "not JSON",
                "ParseCloudEvents",
                "kafka:payments/0@7",
                payload,
                null),
            FormatBytes.version(2)
                .str("invalid_json")
                .str("not JSON")
                .str("ParseCloudEvents")
                .str("kafka:payments/0@7")
                .bytes(payload)
                .nullableStr(null)
                .bool(false)),
        new Case<>(
            EvaluationCounts.CountsCoder.of(),
            EvaluationCounts.of(0.75, true, true, 7_200_000L),
            evaluationCountsFields(FormatBytes.version(2))
                .raw(new byte[] {0, (byte) (1 << 7)}) // the bin mask: bin 7 alone
                .i64(1)
                .f64(0.75)
                .i64(1)),
        new Case<>(
            Decision.DecisionCoder.of(),
            decision,
            decisionFields(FormatBytes.version(2), 2)
                .bool(true)
                .u8(2) // REVERSED, the third of the correction kinds
                .bool(true)
                .i64(3)
                .f64(0.125)
                .u8(0) // allow, the first of the known labels
                .bool(true) // a shadow
                .f64(0.75)
                .u8(1) // review
                .str("tidemark-fraud-logreg")
                .str("2")
                .str("OnnxRuntime")));
  }

  /**
   * One flagged positive scored 0.75, labelled two hours after its event (bin 7 of ten): the six
   * counts.
   */
  private static FormatBytes evaluationCountsFields(FormatBytes bytes) {
    return bytes.i64(1).i64(1).i64(1).i64(1).i64(7_200_000L).i64(7_200_000L);
  }

  @Test
  public void evaluationCountsOfVersionOneReadWithEveryBin() throws Exception {
    FormatBytes version1 = evaluationCountsFields(FormatBytes.version(1));
    for (int bin = 0; bin < EvaluationCounts.BINS; bin++) {
      version1.i64(bin == 7 ? 1 : 0).f64(bin == 7 ? 0.75 : 0).i64(bin == 7 ? 1 : 0);
    }
    EvaluationCounts.CountsCoder coder = EvaluationCounts.CountsCoder.of();
    assertThat(
        decode(coder, version1.toBytes()),
        equalTo(EvaluationCounts.of(0.75, true, true, 7_200_000L)));
  }

  @Test
  public void evaluationCountsOfManyBinsKeepEveryBinAndABinMaskBeyondTheBinsIsRefused()
      throws Exception {
    EvaluationCounts counts = new EvaluationCounts();
    for (double score : new double[] {0, 0.05, 0.31, 0.5, 0.99, 1.0}) {
      counts.add(score, score >= 0.5, score > 0.3, 1000);
    }
    CoderProperties.coderDecodeEncodeEqual(EvaluationCounts.CountsCoder.of(), counts);
    CoderProperties.coderDecodeEncodeEqual(
        EvaluationCounts.CountsCoder.of(), new EvaluationCounts());
    byte[] badMask =
        evaluationCountsFields(FormatBytes.version(2))
            .raw(new byte[] {(byte) 0x04, 0}) // bit 10: there are ten bins, 0 to 9
            .toBytes();
    CoderException refused =
        assertThrows(
            CoderException.class, () -> decode(EvaluationCounts.CountsCoder.of(), badMask));
    assertThat(refused.getMessage(), containsString("bin mask 1024"));
  }

  @Test
  public void everyCoderWritesItsCurrentVersionAndReadsItsBytesWrittenByHand() throws Exception {
    for (Case<?> c : cases()) {
      check(c);
    }
  }

  private static <T> void check(Case<T> c) throws Exception {
    String name = c.coder.getClass().getSimpleName();
    CoderProperties.coderDecodeEncodeEqual(c.coder, c.value);
    assertThat(name + " decodes its bytes", decode(c.coder, c.current), equalTo(c.value));
    assertThat(
        name + " writes version " + c.coder.version(),
        CoderUtils.encodeToByteArray(c.coder, c.value),
        equalTo(c.current));
  }

  @Test
  public void aDecisionOfVersionOneReadsWithoutACorrection() throws Exception {
    byte[] version1 = decisionFields(FormatBytes.version(1), 1).toBytes();
    Decision read = decode(Decision.DecisionCoder.of(), version1);
    assertThat(read, equalTo(scoredDecision()));
    assertThat(read.correction(), is((Decision.Correction) null));
    assertThat(read.shadow(), is((Decision.Shadow) null));
  }

  @Test
  public void featuresOfVersionOneReadAsThePaymentFeatures() throws Exception {
    byte[] version1 = featuresVersion1Fields(FormatBytes.version(1)).toBytes();
    Features read = decode(Features.FeaturesCoder.of(), version1);
    assertThat(read, equalTo(features()));
    assertThat(read.schema(), equalTo(PaymentFeatures.SCHEMA));
  }

  @Test
  public void aPaymentEventOfReleaseTwoReadsAsThePaymentsSpecsFields() throws Exception {
    byte[] version1 =
        FormatBytes.version(1)
            .str("/shop")
            .str("evt-1")
            .str("payment.authorized")
            .i64(T0.getMillis())
            .i64(T0.getMillis() + 5)
            .str("acct-1")
            .i64(1250)
            .str("EUR")
            .nullableStr("m-7")
            .nullableStr(null)
            .bytes(FINGERPRINT)
            .toBytes();
    Event read = decode(Event.EventCoder.of(), version1);
    assertThat(read, equalTo(event()));
    assertThat(read.key(), is("acct-1"));
    assertThat(PaymentFields.bundled().amountCents(read), is(1250L));
    assertThat(PaymentFields.bundled().country(read), is((String) null));
  }

  @Test
  public void aTooLateRecordOfVersionOneReadsItsKeyAsTheAccount() throws Exception {
    byte[] version1 =
        FormatBytes.version(1)
            .str("/shop")
            .str("evt-2")
            .str("acct-1")
            .i64(T0.getMillis())
            .i32(0)
            .bool(false)
            .i64(T0.getMillis() + 7)
            .i64(T0.getMillis() + 9)
            .toBytes();
    TooLateRecord read = decode(TooLateRecord.TooLateRecordCoder.of(), version1);
    assertThat(read.keyName(), is("accountId"));
    assertThat(read.key(), is("acct-1"));
    assertThat(read.toJson(), containsString("\"accountId\":\"acct-1\""));
  }

  @Test
  public void theFeatureInputOfReleaseTwoReadsAsThePaymentFieldValues() throws Exception {
    byte[] version1 =
        FormatBytes.version(1)
            .i64(1250)
            .nullableStr("m-7")
            .nullableStr(null)
            .i64(T0.getMillis())
            .i64(T0.getMillis() + 5)
            .toBytes();
    FeatureInput.FeatureInputCoder coder = new FeatureInput.FeatureInputCoder();
    FieldValues read = decode(coder, version1);
    PaymentFields fields = PaymentFields.of(SpecLoader.loadBundled("payments").events());
    assertThat(read.getLong(fields.amount), is(1250L));
    assertThat(read.getString(fields.merchantId), is("m-7"));
    assertThat(read.isPresent(fields.country), is(false));
    assertThat(read.eventTimeMillis(), is(T0.getMillis()));
    assertThat(read.ingestionTimeMillis(), is(T0.getMillis() + 5));
    assertThat(CoderUtils.encodeToByteArray(coder, read), equalTo(version1));
  }

  @Test
  public void aDeadLetterOfVersionOneReadsItsReasonAsTheCode() throws Exception {
    byte[] payload = "{oops".getBytes(StandardCharsets.UTF_8);
    byte[] version1 =
        FormatBytes.version(1)
            .str("INVALID_MERCHANT_ID")
            .str("bad merchant")
            .str("ParseCloudEvents")
            .str("replay:3")
            .bytes(payload)
            .nullableStr(null)
            .bool(false)
            .toBytes();
    DeadLetter read = decode(DeadLetter.DeadLetterCoder.of(), version1);
    assertThat(read.reasonCode(), is("invalid_merchant_id"));
    assertThat(read.reason(), is(DeadLetterReason.INVALID_MERCHANT_ID));
    assertThat(
        read,
        equalTo(
            new DeadLetter(
                DeadLetterReason.INVALID_MERCHANT_ID,
                "bad merchant",
                "ParseCloudEvents",
                "replay:3",
                payload,
                null)));
  }

  @Test
  public void aDeadLetterKeepsASpecFieldsOwnReasonCode() throws Exception {
    byte[] payload = "{}".getBytes(StandardCharsets.UTF_8);
    DeadLetter letter =
        new DeadLetter("invalid_user_id", "no user", "ParseCloudEvents", "replay:1", payload, null);
    assertThat(letter.reason(), is((DeadLetterReason) null));
    assertThat(letter.toJson(), containsString("\"reason\":\"invalid_user_id\""));
    byte[] bytes = CoderUtils.encodeToByteArray(DeadLetter.DeadLetterCoder.of(), letter);
    assertThat(
        bytes,
        equalTo(
            FormatBytes.version(2)
                .str("invalid_user_id")
                .str("no user")
                .str("ParseCloudEvents")
                .str("replay:1")
                .bytes(payload)
                .nullableStr(null)
                .bool(false)
                .toBytes()));
    assertThat(decode(DeadLetter.DeadLetterCoder.of(), bytes), equalTo(letter));
    assertThrows(
        IllegalArgumentException.class,
        () -> new DeadLetter("Invalid User", "x", "s", "o", payload, null));
  }

  @Test
  public void anUnknownVersionFailsNamingTheCoderAndTheVersion() {
    for (Case<?> c : cases()) {
      for (int version : new int[] {0, c.coder.version() + 1, 255}) {
        byte[] bytes = c.current.clone();
        bytes[0] = (byte) version;
        CoderException e = assertThrows(CoderException.class, () -> decode(c.coder, bytes));
        String coder = c.coder.getClass().getSimpleName();
        assertThat(
            e.getMessage(), containsString(coder + " cannot read format version " + version));
        assertThat(e.getMessage(), containsString("reads versions 1 to " + c.coder.version()));
      }
    }
  }

  @Test
  public void aDecisionWithFeaturesOfAnUnknownVersionNamesTheFeaturesCoder() {
    byte[] bytes = cases().get(cases().size() - 1).current.clone();
    Decision decision = decision();
    // The nested version byte follows the fixed-size head of the decision.
    int at = 1 + 4 + decision.decisionId().length() + 4 + "acct-1".length() + 8 + 8 + 1 + 8 + 1 + 1;
    assertThat(bytes[at], is((byte) 2));
    bytes[at] = 9;
    CoderException e =
        assertThrows(CoderException.class, () -> decode(Decision.DecisionCoder.of(), bytes));
    assertThat(
        e.getMessage(), containsString("Features.FeaturesCoder cannot read format version 9"));
  }

  @Test
  public void everyCoderClassKeepsItsSerialVersionUid() {
    // Flink keeps the coder objects themselves in a savepoint, Java-serialized: a class whose
    // computed serialVersionUID changed with an edit could not be read back.
    for (Case<?> c : cases()) {
      assertThat(
          c.coder.getClass().getName(),
          ObjectStreamClass.lookup(c.coder.getClass()).getSerialVersionUID(),
          is(1L));
    }
    assertThat(ObjectStreamClass.lookup(Codec.DataCoder.class).getSerialVersionUID(), is(1L));
  }

  /** Writes version 2 (a field added), reads versions 1 and 2. */
  static final class EvolvedCoder extends Codec.DataCoder<Map<String, String>> {
    private static final long serialVersionUID = 1L;

    @Override
    protected int version() {
      return 2;
    }

    @Override
    protected void write(Map<String, String> value, DataOutput out) throws IOException {
      Codec.writeString(value.get("name"), out);
      Codec.writeString(value.get("added"), out);
    }

    @Override
    protected Map<String, String> read(int version, DataInputStream in) throws IOException {
      String name = Codec.readString(in);
      return Map.of("name", name, "added", version >= 2 ? Codec.readString(in) : "default");
    }
  }

  /** Reads version 2 only: version 1 was retired. */
  static final class RetiringCoder extends Codec.DataCoder<Map<String, String>> {
    private static final long serialVersionUID = 1L;
    private final EvolvedCoder evolved = new EvolvedCoder();

    @Override
    protected int version() {
      return 2;
    }

    @Override
    protected int oldestVersion() {
      return 2;
    }

    @Override
    protected void write(Map<String, String> value, DataOutput out) throws IOException {
      evolved.write(value, out);
    }

    @Override
    protected Map<String, String> read(int version, DataInputStream in) throws IOException {
      return evolved.read(version, in);
    }
  }

  @Test
  public void aCoderReadsEveryVersionItKnowsAndWritesItsNewest() throws Exception {
    EvolvedCoder coder = new EvolvedCoder();
    byte[] version1 = FormatBytes.version(1).str("a").toBytes();
    byte[] version2 = FormatBytes.version(2).str("a").str("b").toBytes();
    assertThat(decode(coder, version1), equalTo(Map.of("name", "a", "added", "default")));
    assertThat(decode(coder, version2), equalTo(Map.of("name", "a", "added", "b")));
    assertThat(
        CoderUtils.encodeToByteArray(coder, Map.of("name", "a", "added", "b")), equalTo(version2));
    CoderException e =
        assertThrows(CoderException.class, () -> decode(coder, FormatBytes.version(3).toBytes()));
    assertThat(
        e.getMessage(),
        containsString("FormatVersionsTest.EvolvedCoder cannot read format version 3"));
    assertThat(e.getMessage(), containsString("reads versions 1 to 2"));

    RetiringCoder retiring = new RetiringCoder();
    assertThat(decode(retiring, version2), equalTo(Map.of("name", "a", "added", "b")));
    CoderException retired = assertThrows(CoderException.class, () -> decode(retiring, version1));
    assertThat(retired.getMessage(), containsString("cannot read format version 1"));
    assertThat(retired.getMessage(), containsString("reads versions 2 to 2"));
  }

  private static <T> T decode(Codec.DataCoder<T> coder, byte[] bytes) throws CoderException {
    return CoderUtils.decodeFromByteArray(coder, bytes);
  }
}
