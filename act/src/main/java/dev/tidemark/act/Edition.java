package dev.tidemark.act;

import dev.tidemark.transforms.values.DecisionCopies;
import java.util.Objects;
import java.util.Optional;

/**
 * One edition of a decision as the consumer acts on it: the fields of a decision record that say
 * what was decided, for which account and window, and what the edition corrects. The wall clocks
 * ({@code processingTime}, {@code decisionTime}), the pane, the features and the model are not
 * here: they differ between a run and its replay, or say nothing the side effect depends on.
 *
 * @param decisionId the idempotency key: the same for every edition of one (account, window)
 * @param version the pane index; a higher version supersedes a lower one
 * @param correction {@code none} (the first edition), {@code refined} or {@code reversed}
 * @param supersedes the edition this one follows, absent on the first edition
 */
public record Edition(
    String decisionId,
    long version,
    String accountId,
    String windowStart,
    String windowEnd,
    double score,
    Verdict verdict,
    Correction correction,
    Optional<Superseded> supersedes) {

  public Edition {
    Objects.requireNonNull(decisionId, "decisionId");
    Objects.requireNonNull(accountId, "accountId");
    Objects.requireNonNull(windowStart, "windowStart");
    Objects.requireNonNull(windowEnd, "windowEnd");
    Objects.requireNonNull(verdict, "verdict");
    Objects.requireNonNull(correction, "correction");
    Objects.requireNonNull(supersedes, "supersedes");
  }

  /** The verdict of an edition: the decision record's {@code decision}. */
  public enum Verdict {
    ALLOW("allow"),
    REVIEW("review");

    private final String json;

    Verdict(String json) {
      this.json = json;
    }

    public String json() {
      return json;
    }

    /** The verdict named {@code json}, if there is one. */
    public static Optional<Verdict> parse(String json) {
      for (Verdict verdict : values()) {
        if (verdict.json.equals(json)) {
          return Optional.of(verdict);
        }
      }
      return Optional.empty();
    }
  }

  /** What an edition changes relative to the one before it. */
  public enum Correction {
    NONE("none"),
    REFINED("refined"),
    REVERSED("reversed");

    private final String json;

    Correction(String json) {
      this.json = json;
    }

    public String json() {
      return json;
    }

    /** The correction named {@code json}, if there is one. */
    public static Optional<Correction> parse(String json) {
      for (Correction correction : values()) {
        if (correction.json.equals(json)) {
          return Optional.of(correction);
        }
      }
      return Optional.empty();
    }
  }

  /** The edition an edition supersedes, as the record's {@code supersedes} member states it. */
  public record Superseded(long version, double score, Verdict verdict) {}

  /**
   * The SHA-256 (hex) of this edition's content, as {@link DecisionCopies#fingerprint} defines it
   * for every reader of the decisions: account, window, version, verdict and score. Two deliveries
   * of one edition have the same fingerprint, however often and whenever it is written; an edition
   * that reuses a (decisionId, version) with other content (another model, other input) has
   * another. {@code correction} and {@code supersedes} are left out: they say which edition arrived
   * before this one at the pipeline's corrections step, and two runs of one capture may deliver a
   * window's panes there in different orders.
   */
  public String fingerprint() {
    return DecisionCopies.fingerprint(
        decisionId, version, accountId, windowStart, windowEnd, verdict.json(), score);
  }
}
