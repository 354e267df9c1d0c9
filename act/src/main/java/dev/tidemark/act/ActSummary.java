package dev.tidemark.act;

import dev.tidemark.act.CaseRules.Transition;
import dev.tidemark.act.CaseStore.Outcome;
import dev.tidemark.act.CaseStore.Result;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a run of the consumer did, counted per committed batch: a batch that was rolled back counts
 * for nothing, as it changed nothing.
 */
public final class ActSummary {
  private long read;
  private long applied;
  private long opened;
  private long closed;
  private long reopened;
  private long redelivered;
  private long stale;
  private long conflicts;
  private long unsupported;
  private long unstorable;
  private long purgedKeys;
  private final Map<Integer, Long> offsets = new TreeMap<>();

  /** Counts one record's result. */
  void add(Result result) {
    read++;
    switch (result.outcome()) {
      case APPLIED -> applied++;
      case REDELIVERED -> redelivered++;
      case CONFLICT -> conflicts++;
      case STALE -> stale++;
      case UNSUPPORTED -> unsupported++;
      case UNSTORABLE -> unstorable++;
    }
    if (result.outcome() == Outcome.APPLIED) {
      if (result.transition() == Transition.OPEN) {
        opened++;
      } else if (result.transition() == Transition.CLOSE) {
        closed++;
      } else if (result.transition() == Transition.REOPEN) {
        reopened++;
      }
    }
  }

  /** Adds a committed batch's counts to these. */
  void addAll(ActSummary batch) {
    read += batch.read;
    applied += batch.applied;
    opened += batch.opened;
    closed += batch.closed;
    reopened += batch.reopened;
    redelivered += batch.redelivered;
    stale += batch.stale;
    conflicts += batch.conflicts;
    unsupported += batch.unsupported;
    unstorable += batch.unstorable;
    purgedKeys += batch.purgedKeys;
  }

  void purged(long keys) {
    purgedKeys += keys;
  }

  void offset(int partition, long next) {
    offsets.put(partition, next);
  }

  public long read() {
    return read;
  }

  public long applied() {
    return applied;
  }

  public long opened() {
    return opened;
  }

  public long closed() {
    return closed;
  }

  public long reopened() {
    return reopened;
  }

  public long redelivered() {
    return redelivered;
  }

  public long stale() {
    return stale;
  }

  public long conflicts() {
    return conflicts;
  }

  public long unsupported() {
    return unsupported;
  }

  public long unstorable() {
    return unstorable;
  }

  public long purgedKeys() {
    return purgedKeys;
  }

  /** The next offset per partition stored at the end of the run. */
  public Map<Integer, Long> offsets() {
    return Map.copyOf(offsets);
  }

  /** The summary the command prints. */
  public String render() {
    StringBuilder text = new StringBuilder();
    line(text, "records read", read, "");
    line(text, "editions applied", applied, "");
    line(text, "cases opened", opened, "");
    line(text, "cases closed", closed, "");
    line(text, "cases reopened", reopened, "");
    line(text, "redelivered", redelivered, "  (same key, same content: no effect)");
    line(text, "stale", stale, "  (version not above the last applied: recorded in rejected)");
    line(text, "conflicts", conflicts, "  (same key, other content: recorded in conflicts)");
    line(text, "unsupported", unsupported, "  (not an edition to act on: recorded in rejected)");
    line(text, "unstorable", unstorable, "  (PostgreSQL cannot store it: recorded in rejected)");
    line(text, "inbox keys purged", purgedKeys, "");
    StringBuilder positions = new StringBuilder();
    offsets.forEach(
        (partition, next) ->
            positions
                .append(positions.length() == 0 ? "" : ", ")
                .append(partition)
                .append(':')
                .append(next));
    text.append(String.format("  %-18s %s%n", "next offsets", positions));
    return text.toString();
  }

  private static void line(StringBuilder text, String name, long value, String note) {
    text.append(String.format("  %-18s %,d%s%n", name, value, note));
  }
}
