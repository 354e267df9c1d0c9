package dev.tidemark.pipelines.io.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.util.Sha256;
import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.DeadLetter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.transforms.ProcessFunction;
import org.apache.beam.sdk.values.KV;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Dead letters as Kafka records that the producer can always send: key = origin, value = the dead
 * letter's JSON line, as in the file sink.
 *
 * <p>A record over the producer's {@code max.request.size} (or the topic's {@code
 * max.message.bytes}) fails its send, and with it the bundle, on every retry: the dead-letter sink
 * would stop the job on the one record it exists to keep. The payload bound of the dead letter
 * itself keeps records far below that; this is the last guard. A record whose key and value exceed
 * {@code maxRecordBytes} is sent without its payload: {@code payload} / {@code payloadBase64} are
 * removed, {@code payloadOmitted: true} is set with the payload's size and SHA-256 ({@code
 * payloadBytes}, {@code payloadSha256}, kept when the dead letter already has them), and {@code
 * message}, {@code exception} and the key are cut to {@value #MAX_TEXT_CHARS} characters. Each such
 * record is counted ({@code tidemark/}{@value #SHRUNK_COUNTER}) and logged with its origin, size
 * and hash, never its payload.
 */
public final class DeadLetterRecords
    implements ProcessFunction<DeadLetter, KV<String, HeaderedValue>> {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(DeadLetterRecords.class);

  /** Counter of dead letters sent without their payload. */
  public static final String SHRUNK_COUNTER = "kafkaDeadLettersWithoutPayload";

  /** Characters kept of the message, the exception and the key of a record that was too large. */
  static final int MAX_TEXT_CHARS = 4096;

  private final int maxRecordBytes;
  private final Counter shrunk = Metrics.counter(TidemarkMetrics.NAMESPACE, SHRUNK_COUNTER);

  /** Records of at most {@code maxRecordBytes} of key and value. */
  public DeadLetterRecords(int maxRecordBytes) {
    if (maxRecordBytes < 4 * MAX_TEXT_CHARS * 4) {
      throw new IllegalArgumentException(
          "maxRecordBytes must leave room for a dead letter without payload, at least "
              + 4 * MAX_TEXT_CHARS * 4
              + " bytes; got "
              + maxRecordBytes);
    }
    this.maxRecordBytes = maxRecordBytes;
  }

  @Override
  public KV<String, HeaderedValue> apply(DeadLetter letter) {
    String json = letter.toJson();
    String key = letter.origin();
    int size = utf8Length(key) + utf8Length(json);
    if (size <= maxRecordBytes) {
      return KV.of(key, HeaderedValue.of(json));
    }
    String sha256 = HexFormat.of().formatHex(Sha256.newDigest().digest(letter.payload()));
    String bounded = withoutPayload(json, letter, sha256);
    shrunk.inc();
    LOG.warn(
        "dead letter from {} is {} bytes as a Kafka record, over the {} bytes the producer sends;"
            + " sent without its payload ({} bytes, SHA-256 {})",
        cut(key),
        size,
        maxRecordBytes,
        letter.payload().length,
        sha256);
    return KV.of(cut(key), HeaderedValue.of(bounded));
  }

  /** The dead letter's JSON without its payload, with its size and hash, texts cut. */
  static String withoutPayload(String json, DeadLetter letter, String sha256) {
    ObjectNode node;
    try {
      JsonNode parsed = Json.MAPPER.readTree(json);
      node = parsed instanceof ObjectNode ? (ObjectNode) parsed : Json.MAPPER.createObjectNode();
    } catch (IOException e) {
      node = Json.MAPPER.createObjectNode();
    }
    node.remove("payload");
    node.remove("payloadBase64");
    node.put("reason", letter.reasonCode());
    node.put("step", cut(letter.step()));
    node.put("origin", cut(letter.origin()));
    node.put("message", cut(letter.message()));
    if (letter.exception() != null) {
      node.put("exception", cut(letter.exception()));
    }
    if (!node.has("payloadBytes")) {
      node.put("payloadBytes", letter.payload().length);
    }
    if (!node.has("payloadSha256")) {
      node.put("payloadSha256", sha256);
    }
    node.put("payloadOmitted", true);
    try {
      return Json.MAPPER.writeValueAsString(node);
    } catch (IOException e) {
      throw new IllegalStateException("a JSON tree of strings and numbers always serializes", e);
    }
  }

  private static String cut(String text) {
    if (text.length() <= MAX_TEXT_CHARS) {
      return text;
    }
    int end = MAX_TEXT_CHARS;
    if (Character.isHighSurrogate(text.charAt(end - 1))) {
      end--;
    }
    return text.substring(0, end);
  }

  private static int utf8Length(String text) {
    return text.getBytes(StandardCharsets.UTF_8).length;
  }
}
