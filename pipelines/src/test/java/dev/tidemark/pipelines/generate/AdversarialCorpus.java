package dev.tidemark.pipelines.generate;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;

/**
 * A deterministic corpus of hostile input lines for a backfill run: valid payment events mixed with
 * random bytes, lines over the size limit, deep nesting, lone surrogates, NUL and control
 * characters in identifiers, huge exponents, repeated member names, byte-order marks, CRLF line
 * ends, {@code NaN} and {@code Infinity}, times in the future and in antiquity, and maximum
 * amounts. Every line knows what the pipeline must make of it ({@link Line#expected}): {@link
 * #VALID}, or the dead-letter reason code. The same seed gives the same bytes.
 *
 * <p>Valid event times lie in May 2026; the file's ingestion time (its last-modified time, see
 * {@link #INGESTED_AT}) is after them, so only the deliberately future events are {@code
 * time_in_future}.
 */
public final class AdversarialCorpus {
  /** The expectation of a line the parser must accept. */
  public static final String VALID = "valid";

  /** The last-modified time to give the corpus file: its backfill ingestion time. */
  public static final java.time.Instant INGESTED_AT =
      java.time.Instant.parse("2026-06-01T00:00:00Z");

  /** The largest amount the parser accepts: 15 integer digits, 2 decimals. */
  public static final String MAX_AMOUNT = "999999999999999.99";

  /** One corpus line: its bytes (without the line end), its kind and its expected outcome. */
  public static final class Line {
    public final byte[] bytes;
    public final String kind;
    public final String expected;
    final boolean crlf;

    Line(byte[] bytes, String kind, String expected, boolean crlf) {
      this.bytes = bytes;
      this.kind = kind;
      this.expected = expected;
      this.crlf = crlf;
    }
  }

  private final SplittableRandom random;
  private final int maxEventBytes;
  private final List<String> validLines = new ArrayList<>();
  private int nextId;

  public AdversarialCorpus(long seed, int maxEventBytes) {
    this.random = new SplittableRandom(seed);
    this.maxEventBytes = maxEventBytes;
  }

  /** {@code count} lines; about half are valid events, the rest one of each hostile kind. */
  public List<Line> lines(int count) {
    List<Line> lines = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      lines.add(next());
    }
    return lines;
  }

  /** Writes the lines as a file, each ended by {@code \n} or {@code \r\n}, and dates it. */
  public static void write(List<Line> lines, Path file) throws IOException {
    try (OutputStream out = new java.io.BufferedOutputStream(Files.newOutputStream(file))) {
      for (Line line : lines) {
        out.write(line.bytes);
        if (line.crlf) {
          out.write('\r');
        }
        out.write('\n');
      }
    }
    Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.from(INGESTED_AT));
  }

  private Line next() {
    int pick = random.nextInt(100);
    if (pick < 45) {
      return valid("valid", event(amount(), time()), false);
    }
    switch (pick) {
      case 45:
      case 46:
      case 47:
        return valid("valid-crlf", event(amount(), time()), true);
      case 48:
      case 49:
        return validLines.isEmpty()
            ? valid("valid", event(amount(), time()), false)
            : new Line(
                bytes(validLines.get(random.nextInt(validLines.size()))),
                "exact-duplicate",
                VALID,
                false);
      case 50:
      case 51:
        return valid("max-amount", event(MAX_AMOUNT, time(), "acct-max"), false);
      case 52:
        return valid("ancient-in-range", event(amount(), "1900-01-01T00:00:00Z"), false);
      case 53:
        {
          byte[] json = bytes(event(amount(), time()));
          byte[] bom = new byte[json.length + 3];
          bom[0] = (byte) 0xEF;
          bom[1] = (byte) 0xBB;
          bom[2] = (byte) 0xBF;
          System.arraycopy(json, 0, bom, 3, json.length);
          return new Line(bom, "bom", VALID, false);
        }
      case 54:
      case 55:
      case 56:
        return bad("random-bytes", randomBytes(), "invalid_utf8");
      case 57:
      case 58:
        return bad("oversized", oversized(), "oversized_record");
      case 59:
      case 60:
        return bad("deep-nesting", deepNesting(), "invalid_json");
      case 61:
      case 62:
        return bad(
            "lone-surrogate-escaped-id",
            bytes(event(amount(), time()).replace("\"id\":\"", "\"id\":\"\\ud800")),
            "invalid_attribute");
      case 63:
        return bad("lone-surrogate-cesu8", cesuSurrogate(), "invalid_utf8");
      case 64:
      case 65:
        return bad(
            "nul-escaped-id",
            bytes(event(amount(), time()).replace("\"id\":\"", "\"id\":\"a\\u0000")),
            "invalid_attribute");
      case 66:
        return bad(
            "control-in-source",
            bytes(event(amount(), time()).replace("\"source\":\"", "\"source\":\"\\u001b[31m")),
            "invalid_attribute");
      case 67:
        return bad(
            "raw-nul-in-id",
            bytes(event(amount(), time()).replace("\"id\":\"", "\"id\":\"a\u0000")),
            "invalid_json");
      case 68:
        return bad(
            "control-in-account",
            bytes(event(amount(), time()).replace("\"accountId\":\"", "\"accountId\":\"\\u0007")),
            "invalid_account_id");
      case 69:
      case 70:
        return bad("huge-exponent", bytes(event("1e999999999", time())), "invalid_amount");
      case 71:
        return bad("tiny-exponent", bytes(event("1e-999999999", time())), "invalid_amount");
      case 72:
      case 73:
        return bad(
            "repeated-member",
            bytes(
                event(amount(), time())
                    .replace("{\"specversion\"", "{\"id\":\"x\",\"specversion\"")),
            "invalid_json");
      case 74:
        return bad(
            "repeated-member-in-data",
            bytes(event(amount(), time()).replace("\"data\":{", "\"data\":{\"amount\":1,")),
            "invalid_json");
      case 75:
        return bad("nan", bytes(event("NaN", time())), "invalid_json");
      case 76:
        return bad("infinity", bytes(event("Infinity", time())), "invalid_json");
      case 77:
      case 78:
      case 79:
        return bad("future", bytes(event(amount(), "2099-01-01T00:00:00Z")), "time_in_future");
      case 80:
        return bad(
            "before-earliest", bytes(event(amount(), "0001-01-01T00:00:00Z")), "invalid_time");
      case 81:
        return bad("truncated", truncated(), "invalid_json");
      case 82:
        return bad("empty", new byte[0], "invalid_json");
      case 83:
        return bad("not-an-object", bytes("[1,2,3]"), "not_a_cloudevent");
      case 84:
        return bad("negative-amount", bytes(event("-5.00", time())), "invalid_amount");
      case 85:
        return bad("three-decimals", bytes(event("1.005", time())), "invalid_amount");
      case 86:
        return bad("amount-as-string", bytes(event("\"12.00\"", time())), "invalid_amount");
      case 87:
        return bad("too-many-digits", bytes(event("1000000000000000", time())), "invalid_amount");
      case 88:
        return bad(
            "wrong-type",
            bytes(event(amount(), time()).replace("payments.transaction.v1", "payments.refund.v9")),
            "unsupported_type");
      case 89:
        return bad(
            "wrong-specversion",
            bytes(event(amount(), time()).replace("\"1.0\"", "\"0.3\"")),
            "unsupported_specversion");
      case 90:
        return bad("bad-time", bytes(event(amount(), "2026-13-45T99:00:00Z")), "invalid_time");
      case 91:
        return bad(
            "wrong-currency",
            bytes(event(amount(), time()).replace("\"GBP\"", "\"EUR\"")),
            "invalid_currency");
      case 92:
        return bad(
            "bad-country",
            bytes(event(amount(), time()).replace("\"country\":\"GB\"", "\"country\":\"ZZ\"")),
            "invalid_country");
      case 93:
        return bad(
            "no-data",
            bytes(
                "{\"specversion\":\"1.0\",\"id\":\"nodata-"
                    + nextId++
                    + "\",\"source\":\"/adversarial\",\"type\":\"payments.transaction.v1\","
                    + "\"time\":\""
                    + time()
                    + "\"}"),
            "invalid_data");
      case 94:
        return bad(
            "missing-id",
            bytes(event(amount(), time()).replaceFirst("\"id\":\"[^\"]*\",", "")),
            "missing_attribute");
      case 95:
        return bad(
            "long-account",
            bytes(
                event(amount(), time())
                    .replace("\"accountId\":\"", "\"accountId\":\"" + "a".repeat(200))),
            "invalid_account_id");
      case 96:
        return bad("whitespace", bytes("   \t  "), "invalid_json");
      case 97:
        return bad("trailing-garbage", bytes(event(amount(), time()) + "}"), "invalid_json");
      case 98:
        return bad("number-line", bytes("12345"), "not_a_cloudevent");
      default:
        // Nesting a parser follows (within its depth limit) in a field Tidemark ignores.
        return valid(
            "nested-extra-field",
            event(amount(), time())
                .replace(
                    "\"data\":{", "\"data\":{\"x\":" + "[".repeat(300) + "]".repeat(300) + ","),
            false);
    }
  }

  private Line valid(String kind, String json, boolean crlf) {
    validLines.add(json);
    return new Line(bytes(json), kind, VALID, crlf);
  }

  private static Line bad(String kind, byte[] bytes, String reason) {
    return new Line(bytes, kind, reason, false);
  }

  private String event(String amount, String time) {
    return event(amount, time, String.format("acct-%03d", random.nextInt(200)));
  }

  private String event(String amount, String time, String account) {
    return "{\"specversion\":\"1.0\",\"id\":\"adv-"
        + String.format("%06d", nextId++)
        + "\",\"source\":\"/adversarial/"
        + random.nextInt(3)
        + "\",\"type\":\"payments.transaction.v1\",\"time\":\""
        + time
        + "\",\"datacontenttype\":\"application/json\",\"data\":{\"accountId\":\""
        + account
        + "\",\"amount\":"
        + amount
        + ",\"currency\":\"GBP\",\"merchantId\":\"m-"
        + random.nextInt(50)
        + "\",\"country\":\"GB\"}}";
  }

  private String amount() {
    return (1 + random.nextInt(500_000)) / 100 + "." + String.format("%02d", random.nextInt(100));
  }

  /** A time in May 2026, to the millisecond. */
  private String time() {
    long start = java.time.Instant.parse("2026-05-01T00:00:00Z").toEpochMilli();
    return java.time.Instant.ofEpochMilli(start + random.nextLong(30L * 24 * 3600 * 1000))
        .toString();
  }

  /** Random bytes without line ends, with at least one byte that is never valid UTF-8. */
  private byte[] randomBytes() {
    byte[] bytes = new byte[1 + random.nextInt(300)];
    new Random(random.nextLong()).nextBytes(bytes);
    for (int i = 0; i < bytes.length; i++) {
      if (bytes[i] == '\n' || bytes[i] == '\r') {
        bytes[i] = ' ';
      }
    }
    bytes[random.nextInt(bytes.length)] = (byte) 0xFF;
    return bytes;
  }

  /** A valid event padded past the size limit. */
  private byte[] oversized() {
    String event = event(amount(), time());
    int pad = maxEventBytes + 1 + random.nextInt(4096) - event.length();
    return bytes(event.replace("\"data\":{", "\"data\":{\"pad\":\"" + "x".repeat(pad) + "\","));
  }

  /** Arrays nested deeper than any JSON parser should follow, within the size limit. */
  private byte[] deepNesting() {
    int depth = 2_000 + random.nextInt(20_000);
    return bytes(
        event(amount(), time())
            .replace(
                "\"data\":{", "\"data\":{\"deep\":" + "[".repeat(depth) + "]".repeat(depth) + ","));
  }

  /** A surrogate encoded on its own as three bytes (CESU-8): invalid UTF-8. */
  private byte[] cesuSurrogate() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] event = bytes(event(amount(), time()));
    int cut = Collections.indexOfSubList(toList(event), toList(bytes("\"id\":\""))) + 6;
    out.write(event, 0, cut);
    out.write(0xED);
    out.write(0xA0);
    out.write(0x80);
    out.write(event, cut, event.length - cut);
    return out.toByteArray();
  }

  private byte[] truncated() {
    byte[] event = bytes(event(amount(), time()));
    return java.util.Arrays.copyOf(event, 1 + random.nextInt(event.length - 1));
  }

  private static List<Byte> toList(byte[] bytes) {
    List<Byte> list = new ArrayList<>(bytes.length);
    for (byte b : bytes) {
      list.add(b);
    }
    return list;
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
