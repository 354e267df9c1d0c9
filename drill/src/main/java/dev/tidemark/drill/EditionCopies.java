package dev.tidemark.drill;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * The copies of each ({@code decisionId}, {@code version}) a sink committed, compared: an
 * at-least-once sink may write an edition twice, but both copies must be the same edition. Two
 * copies are the same edition when {@link #fingerprint} agrees: the fields the {@code act} consumer
 * fingerprints an edition by (account, window, version, verdict and score), so the drill and {@code
 * act} call the same copies conflicting.
 */
final class EditionCopies {
  /** Copies beyond the first, per {@code decisionId@version}, and those with other content. */
  record Result(long repeatedCopies, List<String> conflicting, List<String> conflictingFinal) {}

  private EditionCopies() {}

  /**
   * Compares the copies of every edition in {@code decisions} (committed records, in order). {@code
   * conflictingFinal} lists the conflicting editions that are their decision's highest version:
   * their final state depends on which copy a reader keeps.
   */
  static Result compare(List<ConsumerRecord<byte[], byte[]>> decisions) {
    Map<String, String> first = new TreeMap<>();
    Map<String, Long> highest = new TreeMap<>();
    List<String> conflicting = new ArrayList<>();
    long repeated = 0;
    for (ConsumerRecord<byte[], byte[]> record : decisions) {
      JsonNode decision = parse(record.value());
      String id = decision.path("decisionId").asText();
      long version = decision.path("version").asLong();
      highest.merge(id, version, Math::max);
      String key = id + "@" + version;
      String fingerprint = fingerprint(decision);
      String known = first.putIfAbsent(key, fingerprint);
      if (known != null) {
        repeated++;
        if (!known.equals(fingerprint) && !conflicting.contains(key)) {
          conflicting.add(key);
        }
      }
    }
    List<String> conflictingFinal = new ArrayList<>();
    for (String key : conflicting) {
      int at = key.lastIndexOf('@');
      if (highest.get(key.substring(0, at)) == Long.parseLong(key.substring(at + 1))) {
        conflictingFinal.add(key);
      }
    }
    return new Result(repeated, conflicting, conflictingFinal);
  }

  /**
   * What identifies an edition's content, as {@code act}'s {@code Edition.fingerprint} computes it:
   * SHA-256 over decisionId, version, accountId, windowStart, windowEnd, decision and score, each
   * as {@code name=<length>:value;}.
   */
  static String fingerprint(JsonNode decision) {
    StringBuilder canonical = new StringBuilder();
    field(canonical, "decisionId", decision.path("decisionId").asText());
    field(canonical, "version", Long.toString(decision.path("version").asLong()));
    field(canonical, "accountId", decision.path("accountId").asText());
    field(canonical, "windowStart", decision.path("windowStart").asText());
    field(canonical, "windowEnd", decision.path("windowEnd").asText());
    field(canonical, "decision", decision.path("decision").asText());
    field(canonical, "score", Double.toString(decision.path("score").asDouble()));
    try {
      MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
      return HexFormat.of()
          .formatHex(sha256.digest(canonical.toString().getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
  }

  private static void field(StringBuilder out, String name, String value) {
    out.append(name).append('=').append(value.length()).append(':').append(value).append(';');
  }

  private static JsonNode parse(byte[] value) {
    try {
      return Json.MAPPER.readTree(value);
    } catch (IOException e) {
      throw new UncheckedIOException("a committed decision is not JSON", e);
    }
  }
}
