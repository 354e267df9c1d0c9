package dev.tidemark.pipelines.io.kafka;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThanOrEqualTo;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.util.Sha256;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.DeadLetterReason;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import org.apache.beam.sdk.values.KV;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The Kafka dead-letter records: unchanged below the producer's limit, without payload above. */
@RunWith(JUnit4.class)
public class DeadLetterRecordsTest {
  private static final String ORIGIN = "kafka:payments/0@42";

  private static DeadLetter letter(byte[] payload, String message) {
    return new DeadLetter(
        DeadLetterReason.OVERSIZED_RECORD, message, "ParseCloudEvents", ORIGIN, payload, null);
  }

  private static byte[] bytes(int size, char fill) {
    byte[] payload = new byte[size];
    Arrays.fill(payload, (byte) fill);
    return payload;
  }

  private static int recordBytes(KV<String, HeaderedValue> record) {
    return record.getKey().getBytes(StandardCharsets.UTF_8).length
        + record.getValue().value().length;
  }

  @Test
  public void aSmallDeadLetterIsItsJsonLine() {
    DeadLetter small = letter(bytes(100, 'a'), "too big");
    KV<String, HeaderedValue> record =
        new DeadLetterRecords(KafkaSinks.MAX_DEAD_LETTER_RECORD_BYTES).apply(small);
    assertThat(record.getKey(), is(ORIGIN));
    assertThat(new String(record.getValue().value(), StandardCharsets.UTF_8), is(small.toJson()));
  }

  /**
   * Payloads just over the limit, and ones whose JSON escaping (a control character becomes six
   * bytes) takes them over: the record stays under the limit and keeps size and hash.
   */
  @Test
  public void aDeadLetterOverTheProducerLimitIsSentWithoutItsPayload() throws IOException {
    int limit = KafkaSinks.MAX_DEAD_LETTER_RECORD_BYTES;
    for (byte[] payload : new byte[][] {bytes(limit, 'x'), bytes(limit / 5, '\u0001')}) {
      DeadLetter big = letter(payload, "m".repeat(100_000));
      assertThat(big.toJson().getBytes(StandardCharsets.UTF_8).length > limit, is(true));
      KV<String, HeaderedValue> record = new DeadLetterRecords(limit).apply(big);
      assertThat(recordBytes(record), lessThanOrEqualTo(limit));
      JsonNode json = Json.MAPPER.readTree(record.getValue().value());
      assertThat(json.has("payload") || json.has("payloadBase64"), is(false));
      assertThat(json.get("payloadOmitted").asBoolean(), is(true));
      assertThat(json.get("payloadBytes").asLong(), is((long) payload.length));
      assertThat(
          json.get("payloadSha256").asText(),
          is(HexFormat.of().formatHex(Sha256.newDigest().digest(payload))));
      assertThat(json.get("reason").asText(), is("oversized_record"));
      assertThat(json.get("origin").asText(), is(ORIGIN));
      assertThat(json.get("message").asText().length(), is(DeadLetterRecords.MAX_TEXT_CHARS));
      assertThat(record.getKey(), is(ORIGIN));
    }
  }
}
