package dev.tidemark.act;

import dev.tidemark.act.Edition.Verdict;
import java.util.OptionalLong;

/**
 * What an edition does to the case of its decision. A case exists for every decisionId that was
 * ever judged {@code review}; it is open while the latest applied edition says {@code review} and
 * closed while it says {@code allow}. On a stream without gaps that is exactly:
 *
 * <ul>
 *   <li>the first {@code review} edition opens the case ({@code case_opened});
 *   <li>a {@code reversed} edition to {@code allow} closes the open case ({@code case_closed});
 *   <li>a {@code reversed} edition back to {@code review} reopens it ({@code case_reopened});
 *   <li>a {@code refined} edition (same verdict, another score) opens and closes nothing.
 * </ul>
 *
 * <p>The rule follows the verdict rather than the {@code correction} label, so that an edition the
 * consumer never saw (deleted by the topic's retention before it was read) cannot leave a case in
 * the wrong state: the next edition it does see puts it right.
 */
public final class CaseRules {
  private CaseRules() {}

  /** The state of a decision's case. */
  public enum CaseStatus {
    OPEN("open"),
    CLOSED("closed");

    private final String sql;

    CaseStatus(String sql) {
      this.sql = sql;
    }

    public String sql() {
      return sql;
    }

    public static CaseStatus ofSql(String sql) {
      for (CaseStatus status : values()) {
        if (status.sql.equals(sql)) {
          return status;
        }
      }
      throw new IllegalArgumentException("unknown case status " + sql);
    }
  }

  /** A change to a case, and the outbox event that announces it. */
  public enum Transition {
    OPEN("case_opened"),
    CLOSE("case_closed"),
    REOPEN("case_reopened"),
    /** The case stays as it is (or there is none); only its latest version and score move. */
    NONE(null);

    private final String event;

    Transition(String event) {
      this.event = event;
    }

    /** The outbox event type, or null for {@link #NONE}. */
    public String event() {
      return event;
    }
  }

  /** The transition of a case in {@code status} (null: no case yet) on an edition of {@code to}. */
  public static Transition transition(CaseStatus status, Verdict to) {
    if (status == null) {
      return to == Verdict.REVIEW ? Transition.OPEN : Transition.NONE;
    }
    if (status == CaseStatus.OPEN) {
      return to == Verdict.ALLOW ? Transition.CLOSE : Transition.NONE;
    }
    return to == Verdict.REVIEW ? Transition.REOPEN : Transition.NONE;
  }

  /**
   * Whether an edition of {@code version} is stale: not above the version last applied for its
   * decisionId (empty: none applied yet). A stale edition is recorded, never applied.
   */
  public static boolean isStale(OptionalLong lastApplied, long version) {
    return lastApplied.isPresent() && version <= lastApplied.getAsLong();
  }
}
