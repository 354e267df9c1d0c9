package dev.tidemark.act;

import java.time.Instant;

/**
 * Decision records as the pipeline writes them ({@code --outputFormat=json}, accumulating mode),
 * for tests: one edition of one decision, with wall clocks that differ per call.
 */
final class Editions {
  static final Instant WINDOW_START = Instant.parse("2026-01-01T00:05:00Z");
  static final Instant WINDOW_END = Instant.parse("2026-01-01T00:10:00Z");

  private Editions() {}

  /** The first edition of a decision: correction none, no supersedes. */
  static String first(String decisionId, String account, double score, String decision) {
    return json(decisionId, account, 0, score, decision, "none", -1, 0, null, Instant.now());
  }

  /**
   * Edition {@code version} after {@code before} (version - 1, {@code beforeScore}, {@code
   * beforeDecision}): refined if the verdict stayed, reversed if it changed.
   */
  static String next(
      String decisionId,
      String account,
      long version,
      double score,
      String decision,
      double beforeScore,
      String beforeDecision) {
    String correction = decision.equals(beforeDecision) ? "refined" : "reversed";
    return json(
        decisionId,
        account,
        version,
        score,
        decision,
        correction,
        version - 1,
        beforeScore,
        beforeDecision,
        Instant.now());
  }

  /** A decision record; {@code correction} null leaves correction and supersedes out. */
  static String json(
      String decisionId,
      String account,
      long version,
      double score,
      String decision,
      String correction,
      long beforeVersion,
      double beforeScore,
      String beforeDecision,
      Instant wallClock) {
    StringBuilder json = new StringBuilder("{");
    json.append("\"decisionId\":\"").append(decisionId).append('"');
    json.append(",\"version\":").append(version);
    json.append(",\"accountId\":\"").append(account).append('"');
    json.append(",\"windowStart\":\"").append(WINDOW_START).append('"');
    json.append(",\"windowEnd\":\"").append(WINDOW_END).append('"');
    json.append(",\"pane\":{\"timing\":\"")
        .append(version == 0 ? "ON_TIME" : "LATE")
        .append("\",\"index\":")
        .append(version)
        .append(",\"isFirst\":")
        .append(version == 0)
        .append(",\"isLast\":false}");
    json.append(",\"features\":{\"txnCount\":")
        .append(version + 1)
        .append(",\"amountSum\":41.5,\"amountMax\":30.0,\"distinctMerchants\":1,")
        .append("\"distinctCountries\":1,\"amountSumSaturated\":false}");
    json.append(",\"clocks\":{\"eventTime\":\"")
        .append(WINDOW_END.minusSeconds(1))
        .append("\",\"ingestionTime\":\"")
        .append(WINDOW_END)
        .append("\",\"processingTime\":\"")
        .append(wallClock)
        .append("\",\"decisionTime\":\"")
        .append(wallClock)
        .append("\"}");
    json.append(",\"score\":").append(score);
    json.append(",\"decision\":\"").append(decision).append('"');
    json.append(",\"model\":{\"name\":\"default\",\"version\":\"1\",\"engine\":\"XGBoost\"}");
    if (correction != null) {
      json.append(",\"correction\":\"").append(correction).append('"');
      if (beforeDecision != null) {
        json.append(",\"supersedes\":{\"version\":")
            .append(beforeVersion)
            .append(",\"score\":")
            .append(beforeScore)
            .append(",\"decision\":\"")
            .append(beforeDecision)
            .append("\"}");
      }
    }
    return json.append('}').toString();
  }
}
