package dev.tidemark.drill;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.DecisionCopies;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * The copies of each ({@code decisionId}, {@code version}) a sink committed, compared: an
 * at-least-once sink may write an edition twice, but both copies must be the same edition. Two
 * copies are the same edition by {@link DecisionCopies}, the one rule {@code act} applies too: the
 * first copy is kept, a later copy with other content is a conflict.
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
      String fingerprint = DecisionCopies.fingerprint(decision);
      String known = first.putIfAbsent(key, fingerprint);
      if (known != null) {
        repeated++;
        if (DecisionCopies.compare(known, fingerprint) == DecisionCopies.Copy.CONFLICT
            && !conflicting.contains(key)) {
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

  private static JsonNode parse(byte[] value) {
    try {
      return Json.MAPPER.readTree(value);
    } catch (IOException e) {
      throw new UncheckedIOException("a committed decision is not JSON", e);
    }
  }
}
