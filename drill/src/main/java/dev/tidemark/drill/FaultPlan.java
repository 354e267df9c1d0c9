package dev.tidemark.drill;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

/**
 * When the drill strikes, drawn from a seed: each fault at a uniformly random moment in the middle
 * four fifths of the feed (so every fault meets events flowing before and after it), in time order.
 * The same seed, feed length and counts give the same plan.
 *
 * @param faults the faults in the order they happen
 */
public record FaultPlan(List<Fault> faults) {
  /** What a fault does. */
  public enum Kind {
    /** SIGKILL one of the TaskManagers that run the job's tasks, then start it again. */
    KILL_TASK_MANAGER,
    /** Stop the broker (SIGTERM) and start it again on the same data. */
    RESTART_BROKER,
    /**
     * SIGKILL the broker that leads a partition of the job's decisions topic (with one broker, the
     * broker) while a transaction is open, and start it again later on the same data.
     */
    KILL_BROKER,
    /** SIGKILL the leading JobManager of a highly available cluster; the standby takes over. */
    KILL_JOB_MANAGER
  }

  /**
   * One fault.
   *
   * @param at when, from the start of the feed
   * @param kind what
   * @param pick a random number for the choices the fault makes when it strikes (which TaskManager)
   */
  public record Fault(Duration at, Kind kind, long pick) {}

  public FaultPlan {
    faults = List.copyOf(faults);
  }

  /** A plan of {@code kills} TaskManager kills and {@code brokerRestarts} broker restarts. */
  public static FaultPlan draw(long seed, Duration feed, int kills, int brokerRestarts) {
    return draw(seed, feed, kills, brokerRestarts, 0, 0);
  }

  /** A plan with every kind of fault, as many as each count says. */
  public static FaultPlan draw(
      long seed,
      Duration feed,
      int kills,
      int brokerRestarts,
      int brokerKills,
      int jobManagerKills) {
    if (kills < 0 || brokerRestarts < 0 || brokerKills < 0 || jobManagerKills < 0) {
      throw new IllegalArgumentException("fault counts must be >= 0");
    }
    SplittableRandom random = new SplittableRandom(seed);
    List<Fault> faults = new ArrayList<>();
    long span = feed.toMillis();
    int[] counts = {kills, brokerRestarts, brokerKills, jobManagerKills};
    Kind[] kinds = Kind.values();
    for (int k = 0; k < kinds.length; k++) {
      for (int i = 0; i < counts[k]; i++) {
        long at = span / 10 + (long) (random.nextDouble() * span * 8 / 10);
        faults.add(new Fault(Duration.ofMillis(at), kinds[k], random.nextLong()));
      }
    }
    faults.sort(Comparator.comparing(Fault::at));
    return new FaultPlan(faults);
  }

  /** How many faults of this kind the plan holds. */
  public long count(Kind kind) {
    return faults.stream().filter(fault -> fault.kind() == kind).count();
  }
}
