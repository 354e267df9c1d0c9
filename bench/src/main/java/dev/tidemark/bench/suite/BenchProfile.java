package dev.tidemark.bench.suite;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The size of a suite run. {@code full} is the published run (the sizes the targets name); {@code
 * small} takes a few minutes a part on 2 cores; {@code smoke} runs every part's code on inputs so
 * small that start-up dominates (the smoke test in {@code mvn verify}: its figures say that a part
 * measures, not what). {@link #with} narrows a profile for one run (fewer accounts, fan-outs or
 * repeats); the overrides go to {@code latest.json}.
 */
public final class BenchProfile {
  public static final BenchProfile SMOKE =
      new BenchProfile(
          "smoke", 1_000, List.of(1_000, 10_000), List.of(1, 10), List.of(2), 0, 1, 2, "");

  public static final BenchProfile SMALL =
      new BenchProfile(
          "small", 20_000, List.of(1_000, 10_000), List.of(1, 10), List.of(1, 2), 1, 2, 2, "");

  public static final BenchProfile FULL =
      new BenchProfile(
          "full",
          1_000_000,
          List.of(1_000, 10_000, 100_000, 1_000_000),
          List.of(1, 10, 60),
          List.of(1, 2),
          1,
          3,
          10,
          "");

  private final String id;

  /** Events per measured run (the scaling curves use this count at every point). */
  public final int events;

  /** Accounts of the scaling curve; the first is the baseline of {@code scaling.*Vs1kAccounts}. */
  public final List<Integer> accounts;

  /** Window fan-outs (size / period) of the scaling curve. */
  public final List<Integer> fanOuts;

  /** Parallelisms of the scaling curve (Flink; the smoke profile runs the last one only). */
  public final List<Integer> parallelisms;

  /** Warm-up runs before measuring, discarded. */
  public final int warmups;

  /** Measured repeats; figures are their median, with min and max. */
  public final int repeats;

  /** Dedup horizons of event time the memory run spans (the target: at least 10). */
  public final int memoryHorizons;

  private final String overrides;

  private BenchProfile(
      String id,
      int events,
      List<Integer> accounts,
      List<Integer> fanOuts,
      List<Integer> parallelisms,
      int warmups,
      int repeats,
      int memoryHorizons,
      String overrides) {
    this.id = id;
    this.events = events;
    this.accounts = List.copyOf(accounts);
    this.fanOuts = List.copyOf(fanOuts);
    this.parallelisms = List.copyOf(parallelisms);
    this.warmups = warmups;
    this.repeats = repeats;
    this.memoryHorizons = memoryHorizons;
    this.overrides = overrides;
  }

  /** {@code smoke}, {@code small} or {@code full}, whatever was overridden. */
  public String id() {
    return id;
  }

  /** Whether this is the published {@code full} profile (a part sizes the others down). */
  public boolean isFull() {
    return id.equals(FULL.id);
  }

  /** Whether this is the {@code smoke} profile (a part runs each of its code paths once). */
  public boolean isSmoke() {
    return id.equals(SMOKE.id);
  }

  /**
   * What {@link #with} changed, as the command-line options that did it ({@code
   * --accounts=1000,1000000 --repeats=1}); empty for the published sizes.
   */
  public String overrides() {
    return overrides;
  }

  /**
   * This profile with other scaling points or repeat counts; null or empty keeps the profile's. The
   * first account count stays the baseline of the {@code *Vs1kAccounts} ratios.
   */
  public BenchProfile with(
      List<Integer> accounts, List<Integer> fanOuts, Integer warmups, Integer repeats) {
    List<String> changed = new ArrayList<>();
    if (!overrides.isEmpty()) {
      changed.add(overrides);
    }
    List<Integer> newAccounts = pick("accounts", accounts, this.accounts, changed);
    List<Integer> newFanOuts = pick("fanOuts", fanOuts, this.fanOuts, changed);
    int newWarmups = pick("warmups", warmups, this.warmups, 0, changed);
    int newRepeats = pick("repeats", repeats, this.repeats, 1, changed);
    return new BenchProfile(
        id,
        events,
        newAccounts,
        newFanOuts,
        parallelisms,
        newWarmups,
        newRepeats,
        memoryHorizons,
        String.join(" ", changed));
  }

  /**
   * This profile narrowed by {@code options} in the form {@link #overrides()} prints them ({@code
   * --accounts=1000,1000000 --repeats=1}, separated by white space): its inverse, for a part run in
   * a JVM of its own.
   */
  public BenchProfile withOverrides(String options) {
    List<Integer> accounts = new ArrayList<>();
    List<Integer> fanOuts = new ArrayList<>();
    Integer warmups = null;
    Integer repeats = null;
    for (String option : options.trim().isEmpty() ? new String[0] : options.trim().split("\\s+")) {
      String[] nameValue = option.split("=", 2);
      String value = nameValue.length == 2 ? nameValue[1] : "";
      switch (nameValue[0]) {
        case "--accounts":
          accounts = integers(value);
          break;
        case "--fanOuts":
          fanOuts = integers(value);
          break;
        case "--warmups":
          warmups = Integer.valueOf(value);
          break;
        case "--repeats":
          repeats = Integer.valueOf(value);
          break;
        default:
          throw new IllegalArgumentException("not a profile override: " + option);
      }
    }
    return with(accounts, fanOuts, warmups, repeats);
  }

  private static List<Integer> integers(String values) {
    List<Integer> list = new ArrayList<>();
    for (String value : values.split(",")) {
      list.add(Integer.valueOf(value));
    }
    return list;
  }

  private static List<Integer> pick(
      String name, List<Integer> given, List<Integer> current, List<String> changed) {
    if (given == null || given.isEmpty()) {
      return current;
    }
    for (int value : given) {
      if (value < 1) {
        throw new IllegalArgumentException("--" + name + " must be positive, got " + value);
      }
    }
    changed.add(
        "--" + name + "=" + given.stream().map(String::valueOf).collect(Collectors.joining(",")));
    return given;
  }

  private static int pick(
      String name, Integer given, int current, int least, List<String> changed) {
    if (given == null) {
      return current;
    }
    if (given < least) {
      throw new IllegalArgumentException(
          "--" + name + " must be at least " + least + ", got " + given);
    }
    changed.add("--" + name + "=" + given);
    return given;
  }

  /** The published profiles, smallest first. */
  public static List<BenchProfile> values() {
    return List.of(SMOKE, SMALL, FULL);
  }

  /** {@code smoke}, {@code small} or {@code full}. */
  public static BenchProfile fromId(String id) {
    for (BenchProfile profile : values()) {
      if (profile.id().equals(id)) {
        return profile;
      }
    }
    throw new IllegalArgumentException("--profile must be smoke, small or full, not " + id);
  }

  @Override
  public String toString() {
    return overrides.isEmpty() ? id : id + " (" + overrides + ")";
  }
}
