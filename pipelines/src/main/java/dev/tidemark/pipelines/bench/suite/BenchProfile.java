package dev.tidemark.pipelines.bench.suite;

import java.util.List;
import java.util.Locale;

/**
 * The size of a suite run. {@code small} finishes in a few minutes on 2 cores and is the smoke test
 * in {@code mvn verify}; {@code full} is the published run (issue 6's sizes).
 */
public enum BenchProfile {
  SMALL(20_000, List.of(1_000, 10_000), List.of(1, 10), List.of(1, 2), 1, 2, 2),
  FULL(
      1_000_000,
      List.of(1_000, 10_000, 100_000, 1_000_000),
      List.of(1, 10, 60),
      List.of(1, 2),
      1,
      3,
      10);

  /** Events per measured run (the scaling curves use this count at every point). */
  public final int events;

  /** Accounts of the scaling curve; the first is the baseline of {@code scaling.*Vs1kAccounts}. */
  public final List<Integer> accounts;

  /** Window fan-outs (size / period) of the scaling curve. */
  public final List<Integer> fanOuts;

  /** Parallelisms of the scaling curve (Flink). */
  public final List<Integer> parallelisms;

  /** Warm-up runs before measuring, discarded. */
  public final int warmups;

  /** Measured repeats; figures are their median, with min and max. */
  public final int repeats;

  /** Dedup horizons of event time the memory run spans (issue 6: at least 10). */
  public final int memoryHorizons;

  BenchProfile(
      int events,
      List<Integer> accounts,
      List<Integer> fanOuts,
      List<Integer> parallelisms,
      int warmups,
      int repeats,
      int memoryHorizons) {
    this.events = events;
    this.accounts = accounts;
    this.fanOuts = fanOuts;
    this.parallelisms = parallelisms;
    this.warmups = warmups;
    this.repeats = repeats;
    this.memoryHorizons = memoryHorizons;
  }

  public String id() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** {@code small} or {@code full}. */
  public static BenchProfile fromId(String id) {
    for (BenchProfile profile : values()) {
      if (profile.id().equals(id)) {
        return profile;
      }
    }
    throw new IllegalArgumentException("--profile must be small or full, not " + id);
  }
}
