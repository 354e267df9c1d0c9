package dev.tidemark.transforms.values;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The one rule for copies of a decision edition, for every reader of the decisions that sees the
 * same ({@code decisionId}, {@code version}) more than once (the idempotent Kafka sink repeats
 * panes after a recovery): {@code ./tidemark act} and the drill's checks both apply it.
 *
 * <p><b>The rule.</b> The first copy of a ({@code decisionId}, {@code version}) read is kept. A
 * later copy with the same {@link #fingerprint content} is a redelivery and changes nothing ({@link
 * Copy#SAME}); a later copy with other content is a conflict ({@link Copy#CONFLICT}): it is never
 * applied, and is reported with both fingerprints. A pipeline that works as documented never writes
 * a conflict: a pane's content depends only on the events in it, so a conflict means two runs (or
 * two models) wrote one decisionId, or a record was changed on the way.
 *
 * <p><b>Content</b> is what an edition says about its window: account, window, version, verdict and
 * score. Left out are the wall clocks ({@code processingTime}, {@code decisionTime}), the pane and
 * the features (the score covers what they decide), the model, and {@code correction} and {@code
 * supersedes}: those name the edition that reached the pipeline's corrections step before this one,
 * and two runs of one input may deliver a window's panes there in different orders.
 */
public final class DecisionCopies {
  /** What a later copy of a ({@code decisionId}, {@code version}) is, compared to the first. */
  public enum Copy {
    /** The same content: a redelivery, which changes nothing. */
    SAME,
    /** Other content under the same (decisionId, version): never applied, reported. */
    CONFLICT
  }

  private DecisionCopies() {}

  /** What {@code later} is to the kept copy {@code first}; both {@link #fingerprint}s. */
  public static Copy compare(String first, String later) {
    return first.equals(later) ? Copy.SAME : Copy.CONFLICT;
  }

  /**
   * The SHA-256 (hex) of an edition's content. {@code windowStart} and {@code windowEnd} are taken
   * as written (RFC 3339 text); {@code decision} is {@code allow} or {@code review}.
   */
  public static String fingerprint(
      String decisionId,
      long version,
      String accountId,
      String windowStart,
      String windowEnd,
      String decision,
      double score) {
    StringBuilder canonical = new StringBuilder();
    field(canonical, "decisionId", decisionId);
    field(canonical, "version", Long.toString(version));
    field(canonical, "accountId", accountId);
    field(canonical, "windowStart", windowStart);
    field(canonical, "windowEnd", windowEnd);
    field(canonical, "decision", decision);
    field(canonical, "score", Double.toString(score));
    try {
      MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
      return HexFormat.of()
          .formatHex(sha256.digest(canonical.toString().getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
  }

  /**
   * The fingerprint of a decision record's JSON (the files' and the Kafka topic's schema).
   *
   * @throws IllegalArgumentException naming the field, when one of the fingerprinted fields is
   *     missing or has the wrong type
   */
  public static String fingerprint(JsonNode decision) {
    return fingerprint(
        text(decision, "decisionId"),
        version(decision),
        text(decision, "accountId"),
        text(decision, "windowStart"),
        text(decision, "windowEnd"),
        text(decision, "decision"),
        score(decision));
  }

  private static String text(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || !value.isTextual()) {
      throw new IllegalArgumentException(field + ": expected a string");
    }
    return value.asText();
  }

  private static long version(JsonNode node) {
    JsonNode value = node.get("version");
    if (value == null || !value.isIntegralNumber() || !value.canConvertToLong()) {
      throw new IllegalArgumentException("version: expected an integer");
    }
    return value.asLong();
  }

  private static double score(JsonNode node) {
    JsonNode value = node.get("score");
    if (value == null || !value.isNumber()) {
      throw new IllegalArgumentException("score: expected a number");
    }
    return value.asDouble();
  }

  /** {@code name=<length>:value;}: no value can be mistaken for a field boundary. */
  private static void field(StringBuilder out, String name, String value) {
    out.append(name).append('=').append(value.length()).append(':').append(value).append(';');
  }
}
