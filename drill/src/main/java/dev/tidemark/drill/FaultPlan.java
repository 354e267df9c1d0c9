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
    RESTART_BROKER
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
    if (kills < 0 || brokerRestarts < 0) {
      throw new IllegalArgumentException("fault counts must be >= 0");
    }
    SplittableRandom random = new SplittableRandom(seed);
    List<Fault> faults = new ArrayList<>();
    long span = feed.toMillis();
    for (int i = 0; i < kills + brokerRestarts; i++) {
      long at = span / 10 + (long) (random.nextDouble() * span * 8 / 10);
      Kind kind = i < kills ? Kind.KILL_TASK_MANAGER : Kind.RESTART_BROKER;
      faults.add(new Fault(Duration.ofMillis(at), kind, random.nextLong()));
    }
    faults.sort(Comparator.comparing(Fault::at));
    return new FaultPlan(faults);
  }

  /** How many faults of this kind the plan holds. */
  public long count(Kind kind) {
    return faults.stream().filter(fault -> fault.kind() == kind).count();
  }
}
