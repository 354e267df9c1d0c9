package dev.tidemark.transforms.values;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.endsWith;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThanOrEqualTo;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.sameInstance;
import static org.junit.Assert.assertArrayEquals;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.transforms.util.Json;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import org.apache.beam.sdk.testing.CoderProperties;
import org.apache.beam.sdk.util.CoderUtils;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** {@link DeadLetter}: payload limits, original size and digest, bounded texts, JSON, coder. */
@RunWith(JUnit4.class)
public class DeadLetterTest {
  /** SHA-256 of the three bytes "abc" (FIPS 180-2, appendix B.1). */
  private static final String SHA256_OF_ABC =
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

  /** SHA-256 of no bytes at all. */
  private static final String SHA256_OF_NOTHING =
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

  private static DeadLetter letter(byte[] payload) {
    return new DeadLetter(
        DeadLetterReason.INVALID_JSON,
        "not JSON",
        "ParseCloudEvents",
        "replay:line 1",
        payload,
        null);
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static JsonNode json(DeadLetter letter) throws Exception {
    return Json.MAPPER.readTree(letter.toJson());
  }

  @Test
  public void aWholePayloadCarriesItsSizeAndDigestAndIsNotTruncated() throws Exception {
    DeadLetter whole = letter(utf8("abc"));
    assertThat(whole.payloadBytes(), is(3L));
    assertThat(whole.payloadSha256(), is(SHA256_OF_ABC));
    assertThat(whole.truncated(), is(false));
    assertThat(whole.withPayloadLimit(3), sameInstance(whole));
    JsonNode json = json(whole);
    assertThat(json.get("payload").asText(), is("abc"));
    assertThat(json.get("payloadBytes").asLong(), is(3L));
    assertThat(json.get("payloadSha256").asText(), is(SHA256_OF_ABC));
    assertThat(json.get("truncated").isBoolean(), is(true));
    assertThat(json.get("truncated").booleanValue(), is(false));
    assertThat(letter(new byte[0]).payloadSha256(), is(SHA256_OF_NOTHING));
  }

  @Test
  public void aLongTextPayloadIsCutOnACodePointBoundary() throws Exception {
    // "ab" then four euro signs of three bytes each (E2 82 AC): 14 bytes. A limit of 6 falls
    // inside the second euro sign (bytes 5 to 7), so the cut keeps "ab€", five bytes.
    byte[] original = utf8("ab€€€€");
    assertThat(original.length, is(14));
    DeadLetter cut = letter(original).withPayloadLimit(6);
    assertArrayEquals(utf8("ab€"), cut.payload());
    assertThat(cut.payloadText(), is("ab€"));
    assertThat(cut.truncated(), is(true));
    assertThat(cut.payloadBytes(), is(14L));
    assertThat(cut.payloadSha256(), is(letter(original).payloadSha256()));
    assertThat(cut.payloadSha256(), not(letter(cut.payload()).payloadSha256()));
    JsonNode json = json(cut);
    assertThat(json.get("payload").asText(), is("ab€"));
    assertThat(json.get("payloadBytes").asLong(), is(14L));
    assertThat(json.get("truncated").booleanValue(), is(true));

    // A four-byte code point (U+1F600, F0 9F 98 80) after "a": limits 1 to 4 keep only "a".
    byte[] emoji = utf8("a\uD83D\uDE00b");
    for (int limit = 1; limit <= 4; limit++) {
      assertThat("limit " + limit, letter(emoji).withPayloadLimit(limit).payloadText(), is("a"));
    }
    assertThat(letter(emoji).withPayloadLimit(5).payloadText(), is("a\uD83D\uDE00"));
  }

  @Test
  public void aPayloadThatIsNotUtf8IsCutAtTheLimitAndStaysBase64() throws Exception {
    byte[] binary = new byte[300];
    for (int i = 0; i < binary.length; i++) {
      binary[i] = (byte) (0x80 + i % 64); // continuation bytes only: never valid UTF-8
    }
    DeadLetter cut = letter(binary).withPayloadLimit(256);
    assertArrayEquals(Arrays.copyOf(binary, 256), cut.payload());
    assertThat(cut.payloadBytes(), is(300L));
    JsonNode json = json(cut);
    assertThat(json.has("payload"), is(false));
    assertArrayEquals(
        Arrays.copyOf(binary, 256), Base64.getDecoder().decode(json.get("payloadBase64").asText()));
    assertThat(json.get("truncated").booleanValue(), is(true));
  }

  @Test
  public void aTruncatedDeadLetterRoundTripsThroughItsCoder() throws Exception {
    DeadLetter.DeadLetterCoder coder = DeadLetter.DeadLetterCoder.of();
    byte[] original = utf8("x".repeat(1000) + "é");
    DeadLetter cut = letter(original).withPayloadLimit(256);
    CoderProperties.coderDecodeEncodeEqual(coder, cut);
    DeadLetter back =
        CoderUtils.decodeFromByteArray(coder, CoderUtils.encodeToByteArray(coder, cut));
    assertThat(back.truncated(), is(true));
    assertThat(back.payloadBytes(), is(1002L));
    assertThat(back.payloadSha256(), is(letter(original).payloadSha256()));
    assertThat(back.payload().length, is(256));
    assertThat(back.toJson(), is(cut.toJson()));
    // A whole one round-trips too, and differs from a cut one with the same kept bytes.
    DeadLetter whole = letter(original);
    CoderProperties.coderDecodeEncodeEqual(coder, whole);
    assertThat(letter(cut.payload()).equals(cut), is(false));
  }

  @Test
  public void textsAreBoundedSoADeadLetterHasABoundedSize() throws Exception {
    String huge = "é".repeat(100_000); // 200,000 bytes of UTF-8
    DeadLetter letter =
        new DeadLetter(DeadLetterReason.INVALID_TIME, huge, huge, huge, new byte[200_000], huge)
            .withPayloadLimit(1024);
    for (String text :
        new String[] {letter.message(), letter.step(), letter.origin(), letter.exception()}) {
      assertThat(
          text.getBytes(StandardCharsets.UTF_8).length,
          lessThanOrEqualTo(DeadLetter.MAX_TEXT_BYTES));
      assertThat(text, endsWith(DeadLetter.CUT_MARK));
    }
    // 4096 bytes less the six of the mark leave 4090: 2045 two-byte characters.
    assertThat(letter.message().length(), is(2045 + DeadLetter.CUT_MARK.length()));
    int encoded = CoderUtils.encodeToByteArray(DeadLetter.DeadLetterCoder.of(), letter).length;
    assertThat(encoded, lessThanOrEqualTo(1024 + DeadLetter.MAX_BYTES_BEYOND_PAYLOAD));
    // A short text is kept as it is.
    assertThat(letter(utf8("{")).message(), is("not JSON"));
  }
}
