package dev.tidemark.testkit.generate;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * Immutable settings of the {@link EventGenerator}. Build one with {@link #builder()} (every field
 * starts at its {@code DEFAULT_*} constant) or change an existing one with {@link #toBuilder()}.
 * All values are validated when the config is created; an invalid value throws {@link
 * IllegalArgumentException} with a message that says how to fix it.
 *
 * <p>Fields:
 *
 * <ul>
 *   <li>{@code seed}: the random seed; the same config (seed included) always yields a
 *       byte-identical replay file.
 *   <li>{@code numAccounts}: accounts {@code acct-00001 .. acct-NNNNN}, picked with a skewed
 *       (Zipf-like) distribution.
 *   <li>{@code numEvents}: distinct valid events (legit and fraud), before duplicates and malformed
 *       lines are added.
 *   <li>{@code eventsPerSecond}: rate of the legit event-time process (exponential gaps with mean
 *       {@code 1 / eventsPerSecond}); fraud bursts are laid over it. The stream lasts about {@code
 *       numEvents / eventsPerSecond} seconds of event time.
 *   <li>{@code start}: event time of the first event (whole milliseconds).
 *   <li>{@code meanDelay}, {@code maxOutOfOrderness}: the normal arrival delay is exponential with
 *       mean {@code meanDelay}, capped at {@code maxOutOfOrderness}.
 *   <li>{@code windowSize}, {@code allowedLateness}: the window and lateness the late and too-late
 *       events are aimed at.
 *   <li>{@code lateFraction}: share of events (of {@code numEvents}) that arrive after the
 *       watermark passed the end of their window but within the allowed lateness. Their delay is
 *       uniform in ({@link #lateDelayMin()}, {@link #lateDelayMax()}), with the defaults (6 min, 60
 *       min), and they are drawn only among events whose late arrival still falls within the
 *       stream, so a short stream gets fewer (or no) late events.
 *   <li>{@code tooLateFraction}: share of events that arrive after their window's allowed lateness
 *       expired, with a delay uniform in ({@link #tooLateDelayMin()}, {@link #tooLateDelayMax()}),
 *       with the defaults (70 min, 85 min). They are drawn only among events early enough that the
 *       stream still runs past their arrival: event time at most the last event time minus {@link
 *       #tooLateDelayMax()} minus 5 minutes (90 minutes with the defaults). <b>So too-late events
 *       need a stream longer than about 1.5 hours of event time</b> ({@code numEvents /
 *       eventsPerSecond > 5400 s} with the defaults, e.g. more than 2,700 events at 0.5 per
 *       second); a shorter stream gets no too-late events rather than wrong ones.
 *   <li>{@code duplicateRate}: re-sends (of {@code numEvents}) of an earlier event with the same
 *       source and id, arriving 1 to 120 seconds after the original.
 *   <li>{@code conflictFraction}: share of those duplicates whose payload differs (amount + 1.00).
 *   <li>{@code malformedFraction}: lines (of {@code numEvents}) that a reader must reject; the
 *       kinds cycle, so every kind appears once there are at least 16 malformed lines.
 *   <li>{@code cardTestingBurstsPerThousand}, {@code takeoverBurstsPerThousand}: fraud bursts per
 *       1000 events (rounded to a whole number of bursts; fraud never exceeds half of the events).
 *       The logins workload has no card testing: its account-takeover episodes are {@code
 *       takeoverBurstsPerThousand}.
 *   <li>{@code cardTestingStyle}: what a card-testing burst looks like ({@link CardTestingStyle}):
 *       tiny payments at many merchants (the default, what the shipped models learnt), or small
 *       ones at one merchant, a pattern those models never saw. Only payments have card testing.
 *   <li>{@code workload}: what the events are ({@link Workload}): payments (the default) or logins.
 *       With logins, {@code numAccounts} is the number of users.
 *   <li>{@code inlineLabels}: whether each valid event carries its true outcome in {@code
 *       data.label}, as the training files have it (the default). No real source does: a stream
 *       meant to be evaluated gets its labels as a stream of their own ({@link LabelStream}).
 * </ul>
 */
public record GeneratorConfig(
    long seed,
    int numAccounts,
    int numEvents,
    double eventsPerSecond,
    Instant start,
    Duration meanDelay,
    Duration maxOutOfOrderness,
    Duration windowSize,
    Duration allowedLateness,
    double lateFraction,
    double tooLateFraction,
    double duplicateRate,
    double conflictFraction,
    double malformedFraction,
    double cardTestingBurstsPerThousand,
    double takeoverBurstsPerThousand,
    CardTestingStyle cardTestingStyle,
    Workload workload,
    boolean inlineLabels) {

  public static final long DEFAULT_SEED = 42L;
  public static final int DEFAULT_NUM_ACCOUNTS = 200;
  public static final int DEFAULT_NUM_EVENTS = 4000;
  public static final double DEFAULT_EVENTS_PER_SECOND = 0.5;
  public static final Instant DEFAULT_START = Instant.parse("2026-01-01T00:00:00Z");
  public static final Duration DEFAULT_MEAN_DELAY = Duration.ofSeconds(2);
  public static final Duration DEFAULT_MAX_OUT_OF_ORDERNESS = Duration.ofSeconds(30);
  public static final Duration DEFAULT_WINDOW_SIZE = Duration.ofMinutes(5);
  public static final Duration DEFAULT_ALLOWED_LATENESS = Duration.ofHours(1);
  public static final double DEFAULT_LATE_FRACTION = 0.02;
  public static final double DEFAULT_TOO_LATE_FRACTION = 0.01;
  public static final double DEFAULT_DUPLICATE_RATE = 0.03;
  public static final double DEFAULT_CONFLICT_FRACTION = 0.25;
  public static final double DEFAULT_MALFORMED_FRACTION = 0.01;
  public static final double DEFAULT_CARD_TESTING_BURSTS_PER_THOUSAND = 2.0;
  public static final double DEFAULT_TAKEOVER_BURSTS_PER_THOUSAND = 1.0;
  public static final boolean DEFAULT_INLINE_LABELS = true;
  public static final CardTestingStyle DEFAULT_CARD_TESTING_STYLE = CardTestingStyle.SPREAD;
  public static final Workload DEFAULT_WORKLOAD = Workload.PAYMENTS;

  /** Margin past the window end (or past the out-of-orderness) before an event counts as late. */
  private static final Duration LATE_MARGIN = Duration.ofMinutes(1);

  /** Margin kept before the allowed lateness expires, for late events. */
  private static final Duration LATE_SAFETY = Duration.ofMinutes(5);

  /** Margin past the allowed lateness before an event counts as too late. */
  private static final Duration TOO_LATE_MARGIN = Duration.ofMinutes(5);

  /** Width of the too-late delay range. */
  private static final Duration TOO_LATE_SPREAD = Duration.ofMinutes(15);

  /** Validates every field; see the class documentation for their meaning. */
  public GeneratorConfig {
    Objects.requireNonNull(workload, "workload must not be null; pass e.g. " + DEFAULT_WORKLOAD);
    Objects.requireNonNull(
        cardTestingStyle,
        "cardTestingStyle must not be null; pass e.g. " + DEFAULT_CARD_TESTING_STYLE);
    if (workload != Workload.PAYMENTS && cardTestingStyle != DEFAULT_CARD_TESTING_STYLE) {
      throw new IllegalArgumentException(
          "cardTestingStyle "
              + cardTestingStyle
              + " is a payments pattern; the "
              + workload
              + " workload has no card testing: leave cardTestingStyle at "
              + DEFAULT_CARD_TESTING_STYLE);
    }
    requirePositive("numAccounts", numAccounts, "e.g. 200");
    requirePositive("numEvents", numEvents, "e.g. 4000");
    if (!(eventsPerSecond > 0) || !Double.isFinite(eventsPerSecond)) {
      throw new IllegalArgumentException(
          "eventsPerSecond must be a finite number > 0 but was "
              + eventsPerSecond
              + "; pass an event rate such as 0.5");
    }
    Objects.requireNonNull(
        start, "start must not be null; pass an Instant such as " + DEFAULT_START);
    if (start.getNano() % 1_000_000 != 0) {
      throw new IllegalArgumentException(
          "start must have at most millisecond precision but was "
              + start
              + "; pass start.truncatedTo(ChronoUnit.MILLIS)");
    }
    requireNonNegative("meanDelay", meanDelay, DEFAULT_MEAN_DELAY);
    requireNonNegative("maxOutOfOrderness", maxOutOfOrderness, DEFAULT_MAX_OUT_OF_ORDERNESS);
    requireNonNegative("windowSize", windowSize, DEFAULT_WINDOW_SIZE);
    if (windowSize.isZero()) {
      throw new IllegalArgumentException(
          "windowSize must be > 0; pass a window length such as " + DEFAULT_WINDOW_SIZE);
    }
    requireNonNegative("allowedLateness", allowedLateness, DEFAULT_ALLOWED_LATENESS);
    requireFraction("lateFraction", lateFraction, DEFAULT_LATE_FRACTION);
    requireFraction("tooLateFraction", tooLateFraction, DEFAULT_TOO_LATE_FRACTION);
    requireFraction("duplicateRate", duplicateRate, DEFAULT_DUPLICATE_RATE);
    requireFraction("conflictFraction", conflictFraction, DEFAULT_CONFLICT_FRACTION);
    requireFraction("malformedFraction", malformedFraction, DEFAULT_MALFORMED_FRACTION);
    if (lateFraction + tooLateFraction > 1) {
      throw new IllegalArgumentException(
          "lateFraction + tooLateFraction must be <= 1 but was "
              + (lateFraction + tooLateFraction)
              + "; lower one of them");
    }
    requireRate(
        "cardTestingBurstsPerThousand",
        cardTestingBurstsPerThousand,
        DEFAULT_CARD_TESTING_BURSTS_PER_THOUSAND);
    requireRate(
        "takeoverBurstsPerThousand",
        takeoverBurstsPerThousand,
        DEFAULT_TAKEOVER_BURSTS_PER_THOUSAND);
    Duration lateMin = lateDelayMin(windowSize, maxOutOfOrderness);
    Duration lateMax = lateDelayMax(windowSize, allowedLateness);
    if (lateFraction > 0 && lateMin.compareTo(lateMax) >= 0) {
      throw new IllegalArgumentException(
          "late events need a delay longer than "
              + lateMin
              + " (windowSize + max(1 min, maxOutOfOrderness + 30 s)) but shorter than "
              + lateMax
              + " (min(allowedLateness, windowSize + allowedLateness - 5 min))"
              + "; raise allowedLateness (e.g. to "
              + DEFAULT_ALLOWED_LATENESS
              + "), lower maxOutOfOrderness, or set lateFraction to 0");
    }
  }

  /**
   * The stream the shipped models of {@code workload} were trained on ({@code ./tidemark train}
   * without {@code --input}): seed 42, 20,000 events from 500 accounts at 2 per second; for logins
   * 3 takeover episodes per 1000 events. Windows and lateness stay at the defaults; aim them at a
   * spec's before building.
   */
  public static Builder trainingStream(Workload workload) {
    Builder builder =
        builder().seed(42).numEvents(20000).numAccounts(500).eventsPerSecond(2).workload(workload);
    return workload == Workload.LOGINS ? builder.takeoverBurstsPerThousand(3) : builder;
  }

  /** The {@code ./tidemark generate} flags of {@link #trainingStream}, without the spec. */
  public static String trainingStreamFlags(Workload workload) {
    String flags = "--seed=42 --events=20000 --accounts=500 --eventsPerSecond=2";
    return workload == Workload.LOGINS ? flags + " --takeoverBurstsPerThousand=3" : flags;
  }

  /** A config with every field at its default. */
  public static GeneratorConfig defaults() {
    return builder().build();
  }

  /** A builder with every field at its default. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder initialised from this config. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /**
   * Smallest delay (exclusive) of a late event: {@code windowSize + max(1 min, maxOutOfOrderness +
   * 30 s)}, so that the watermark (max event time - maxOutOfOrderness) has passed its window.
   */
  public Duration lateDelayMin() {
    return lateDelayMin(windowSize, maxOutOfOrderness);
  }

  /**
   * Largest delay (exclusive) of a late event: {@code min(allowedLateness, windowSize +
   * allowedLateness - 5 min)}, so that it still arrives within the allowed lateness of its window
   * even if its window ends just after its event time.
   */
  public Duration lateDelayMax() {
    return lateDelayMax(windowSize, allowedLateness);
  }

  /**
   * Smallest delay (exclusive) of a too-late event: {@code windowSize + allowedLateness + max(5
   * min, maxOutOfOrderness + 1 min)}.
   */
  public Duration tooLateDelayMin() {
    Duration margin = maxOutOfOrderness.plus(LATE_MARGIN);
    return windowSize
        .plus(allowedLateness)
        .plus(margin.compareTo(TOO_LATE_MARGIN) > 0 ? margin : TOO_LATE_MARGIN);
  }

  /** Largest delay (exclusive) of a too-late event: {@link #tooLateDelayMin()} + 15 min. */
  public Duration tooLateDelayMax() {
    return tooLateDelayMin().plus(TOO_LATE_SPREAD);
  }

  private static Duration lateDelayMin(Duration windowSize, Duration maxOutOfOrderness) {
    Duration margin = maxOutOfOrderness.plusSeconds(30);
    return windowSize.plus(margin.compareTo(LATE_MARGIN) > 0 ? margin : LATE_MARGIN);
  }

  private static Duration lateDelayMax(Duration windowSize, Duration allowedLateness) {
    Duration bound = windowSize.plus(allowedLateness).minus(LATE_SAFETY);
    return bound.compareTo(allowedLateness) < 0 ? bound : allowedLateness;
  }

  private static void requirePositive(String name, int value, String example) {
    if (value <= 0) {
      throw new IllegalArgumentException(
          name + " must be > 0 but was " + value + "; pass a positive count, " + example);
    }
  }

  private static void requireNonNegative(String name, Duration value, Duration example) {
    Objects.requireNonNull(value, name + " must not be null; pass a duration such as " + example);
    if (value.isNegative()) {
      throw new IllegalArgumentException(
          name + " must not be negative but was " + value + "; pass a duration such as " + example);
    }
  }

  private static void requireFraction(String name, double value, double example) {
    if (!(value >= 0 && value <= 1)) {
      throw new IllegalArgumentException(
          name
              + " must be a fraction in [0, 1] but was "
              + value
              + "; pass e.g. "
              + example
              + " for "
              + example * 100
              + "%, or 0 to turn it off");
    }
  }

  private static void requireRate(String name, double value, double example) {
    if (!(value >= 0) || !Double.isFinite(value)) {
      throw new IllegalArgumentException(
          name
              + " must be a finite number >= 0 but was "
              + value
              + "; pass e.g. "
              + example
              + ", or 0 to turn it off");
    }
  }

  /** Mutable builder of {@link GeneratorConfig}; {@link #build()} validates. */
  public static final class Builder {
    private long seed = DEFAULT_SEED;
    private int numAccounts = DEFAULT_NUM_ACCOUNTS;
    private int numEvents = DEFAULT_NUM_EVENTS;
    private double eventsPerSecond = DEFAULT_EVENTS_PER_SECOND;
    private Instant start = DEFAULT_START;
    private Duration meanDelay = DEFAULT_MEAN_DELAY;
    private Duration maxOutOfOrderness = DEFAULT_MAX_OUT_OF_ORDERNESS;
    private Duration windowSize = DEFAULT_WINDOW_SIZE;
    private Duration allowedLateness = DEFAULT_ALLOWED_LATENESS;
    private double lateFraction = DEFAULT_LATE_FRACTION;
    private double tooLateFraction = DEFAULT_TOO_LATE_FRACTION;
    private double duplicateRate = DEFAULT_DUPLICATE_RATE;
    private double conflictFraction = DEFAULT_CONFLICT_FRACTION;
    private double malformedFraction = DEFAULT_MALFORMED_FRACTION;
    private double cardTestingBurstsPerThousand = DEFAULT_CARD_TESTING_BURSTS_PER_THOUSAND;
    private double takeoverBurstsPerThousand = DEFAULT_TAKEOVER_BURSTS_PER_THOUSAND;
    private CardTestingStyle cardTestingStyle = DEFAULT_CARD_TESTING_STYLE;
    private Workload workload = DEFAULT_WORKLOAD;
    private boolean inlineLabels = DEFAULT_INLINE_LABELS;

    private Builder() {}

    private Builder(GeneratorConfig config) {
      seed = config.seed;
      numAccounts = config.numAccounts;
      numEvents = config.numEvents;
      eventsPerSecond = config.eventsPerSecond;
      start = config.start;
      meanDelay = config.meanDelay;
      maxOutOfOrderness = config.maxOutOfOrderness;
      windowSize = config.windowSize;
      allowedLateness = config.allowedLateness;
      lateFraction = config.lateFraction;
      tooLateFraction = config.tooLateFraction;
      duplicateRate = config.duplicateRate;
      conflictFraction = config.conflictFraction;
      malformedFraction = config.malformedFraction;
      cardTestingBurstsPerThousand = config.cardTestingBurstsPerThousand;
      takeoverBurstsPerThousand = config.takeoverBurstsPerThousand;
      cardTestingStyle = config.cardTestingStyle;
      workload = config.workload;
      inlineLabels = config.inlineLabels;
    }

    public Builder seed(long seed) {
      this.seed = seed;
      return this;
    }

    public Builder numAccounts(int numAccounts) {
      this.numAccounts = numAccounts;
      return this;
    }

    public Builder numEvents(int numEvents) {
      this.numEvents = numEvents;
      return this;
    }

    public Builder eventsPerSecond(double eventsPerSecond) {
      this.eventsPerSecond = eventsPerSecond;
      return this;
    }

    public Builder start(Instant start) {
      this.start = start;
      return this;
    }

    public Builder meanDelay(Duration meanDelay) {
      this.meanDelay = meanDelay;
      return this;
    }

    public Builder maxOutOfOrderness(Duration maxOutOfOrderness) {
      this.maxOutOfOrderness = maxOutOfOrderness;
      return this;
    }

    public Builder windowSize(Duration windowSize) {
      this.windowSize = windowSize;
      return this;
    }

    public Builder allowedLateness(Duration allowedLateness) {
      this.allowedLateness = allowedLateness;
      return this;
    }

    public Builder lateFraction(double lateFraction) {
      this.lateFraction = lateFraction;
      return this;
    }

    public Builder tooLateFraction(double tooLateFraction) {
      this.tooLateFraction = tooLateFraction;
      return this;
    }

    public Builder duplicateRate(double duplicateRate) {
      this.duplicateRate = duplicateRate;
      return this;
    }

    public Builder conflictFraction(double conflictFraction) {
      this.conflictFraction = conflictFraction;
      return this;
    }

    public Builder malformedFraction(double malformedFraction) {
      this.malformedFraction = malformedFraction;
      return this;
    }

    public Builder cardTestingBurstsPerThousand(double cardTestingBurstsPerThousand) {
      this.cardTestingBurstsPerThousand = cardTestingBurstsPerThousand;
      return this;
    }

    public Builder takeoverBurstsPerThousand(double takeoverBurstsPerThousand) {
      this.takeoverBurstsPerThousand = takeoverBurstsPerThousand;
      return this;
    }

    public Builder cardTestingStyle(CardTestingStyle cardTestingStyle) {
      this.cardTestingStyle = cardTestingStyle;
      return this;
    }

    public Builder workload(Workload workload) {
      this.workload = workload;
      return this;
    }

    public Builder inlineLabels(boolean inlineLabels) {
      this.inlineLabels = inlineLabels;
      return this;
    }

    /** Validates and returns the config; throws {@link IllegalArgumentException} if invalid. */
    public GeneratorConfig build() {
      return new GeneratorConfig(
          seed,
          numAccounts,
          numEvents,
          eventsPerSecond,
          start,
          meanDelay,
          maxOutOfOrderness,
          windowSize,
          allowedLateness,
          lateFraction,
          tooLateFraction,
          duplicateRate,
          conflictFraction,
          malformedFraction,
          cardTestingBurstsPerThousand,
          takeoverBurstsPerThousand,
          cardTestingStyle,
          workload,
          inlineLabels);
    }
  }
}
