package dev.tidemark.launcher.check;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.launcher.LiveRun;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import org.joda.time.Duration;

/**
 * A streaming run's committed outputs compared with the expected outputs of the same input, in the
 * figures of {@code drill.json}.
 *
 * <ul>
 *   <li>{@code decisionsCommitted}: decision records read (every version, every copy).
 *   <li>{@code duplicateVersions}: {@code decisionId+version} pairs committed more than once (each
 *       extra copy counts); zero with the transactional sink, allowed with the idempotent one.
 *   <li>{@code missingVersions}: {@code decisionId+version} pairs missing below a decision's
 *       highest committed version (versions are pane indices, 0, 1, 2, ... with no gap).
 *   <li>{@code finalStateMismatches}: decisions whose keep-latest final state is missing, extra or
 *       different, compared in {@link OutputView#stableDecision stable form}.
 *   <li>{@code deadLetterMismatches}: {@code reason|identity} keys whose count differs.
 *   <li>{@code duplicateMismatches}: {@code source|id} keys whose duplicate records differ
 *       (missing, extra, a copy more or fewer, a conflict flag or clock changed).
 *   <li>{@code tooLateMismatches}: {@code source|id} keys whose too-late records differ (without
 *       the watermark each was judged against).
 *   <li>{@code identityHolds}: every fed record is accounted for exactly once in the committed
 *       outputs. The rule: the expected run's own accounting identity holds ({@code read = valid +
 *       deadLetters}, {@code valid = unique + duplicates}, {@code unique = windowed + tooLate}),
 *       and from the observed outputs alone {@code fed + endMarkers = deadLetters + duplicates +
 *       tooLate + windowed}, where {@code tooLate} counts the events in no window ({@code
 *       partiallyLate} ones are windowed) and {@code windowed} is derived exactly from the
 *       decisions ({@link OutputView#windowedEvents}: the final {@code txnCount} over the windows
 *       that tile event time without overlap). With at-least-once delivery each output's repeated
 *       deliveries are collapsed first (dead letters by origin, other records when identical).
 * </ul>
 *
 * <p>End-of-stream markers ({@link dev.tidemark.launcher.LiveRun#sendEndMarkers}) are dead letters
 * of the streaming run only: they are taken out of the dead-letter comparison and must number
 * exactly the markers sent.
 */
public final class Comparison {
  /** How the sink delivers: what repeated records mean. */
  public enum Delivery {
    /** The transactional sink: any record committed twice is an error. */
    EXACTLY_ONCE,
    /** The idempotent sink: a record may be committed more than once; state must still match. */
    AT_LEAST_ONCE
  }

  /** How many example keys each category keeps, for a report a human reads. */
  static final int EXAMPLES = 5;

  private final Delivery delivery;
  private final long decisionsCommitted;
  private final List<String> duplicateVersions;
  private final List<String> missingVersions;
  private final List<String> finalStateMismatches;
  private final List<String> deadLetterMismatches;
  private final List<String> duplicateMismatches;
  private final List<String> tooLateMismatches;
  private final Map<String, Long> accounting;
  private final List<String> identityViolations;

  private Comparison(
      Delivery delivery,
      OutputView observed,
      List<String> finalStateMismatches,
      List<String> deadLetterMismatches,
      List<String> duplicateMismatches,
      List<String> tooLateMismatches,
      Map<String, Long> accounting,
      List<String> identityViolations) {
    this.delivery = delivery;
    this.decisionsCommitted = observed.decisionsCommitted();
    this.duplicateVersions = observed.duplicateVersions();
    this.missingVersions = observed.missingVersions();
    this.finalStateMismatches = finalStateMismatches;
    this.deadLetterMismatches = deadLetterMismatches;
    this.duplicateMismatches = duplicateMismatches;
    this.tooLateMismatches = tooLateMismatches;
    this.accounting = accounting;
    this.identityViolations = identityViolations;
  }

  /**
   * Compares a streaming run's committed outputs with the batch reference of its input.
   *
   * @param fed records produced to the input topic ({@code KafkaFeed.Fed.records}), without markers
   * @param markers end-of-stream markers sent after them
   */
  public static Comparison compare(
      Reference reference,
      OutputView observed,
      long fed,
      int markers,
      Delivery delivery,
      Rule... rules) {
    return compare(
        reference.outputs(),
        reference.summary().identityViolations(),
        observed,
        fed,
        markers,
        reference.windowSize(),
        delivery,
        rules);
  }

  /**
   * Whether {@code observed} accounts for every record fed and every end-of-stream marker (the
   * accounting identity alone, without a reference): what a streaming run's outputs reach once
   * every window it will close has its final pane committed.
   */
  public static boolean accountsFor(
      OutputView observed, long fed, int markers, Duration windowSize, Delivery delivery) {
    return identityViolations(
            observed,
            delivery == Delivery.AT_LEAST_ONCE,
            fed,
            markers,
            windowSize,
            new LinkedHashMap<>())
        .isEmpty();
  }

  /** A documented relaxation of the comparison, for runs whose input legitimately differs. */
  public enum Rule {
    /**
     * Compares decisions, duplicates and too-late records without their {@code ingestionTime}: for
     * an input fed in parts, each part's ingestion clock starting at its own first event.
     */
    IGNORE_INGESTION_TIME
  }

  /**
   * Compares {@code observed} with {@code expected}, a run whose own accounting identity has the
   * violations {@code expectedViolations} (empty when it holds). End-of-stream markers are taken
   * out of both sides' dead letters: the expected run may be a streaming run too.
   */
  public static Comparison compare(
      OutputView expected,
      List<String> expectedViolations,
      OutputView observed,
      long fed,
      int markers,
      Duration windowSize,
      Delivery delivery,
      Rule... rules) {
    boolean collapse = delivery == Delivery.AT_LEAST_ONCE;
    boolean withoutIngestion = List.of(rules).contains(Rule.IGNORE_INGESTION_TIME);
    Map<String, Long> expectedLetters = new TreeMap<>(expected.deadLetters());
    removeEndMarkers(expectedLetters);
    Map<String, Long> observedLetters =
        new TreeMap<>(collapse ? observed.deadLettersByOrigin() : observed.deadLetters());
    removeEndMarkers(observedLetters);
    Map<String, List<String>> observedDuplicates =
        collapse ? distinct(observed.duplicates()) : observed.duplicates();
    Map<String, List<String>> observedTooLate =
        collapse ? distinct(observed.tooLate()) : observed.tooLate();
    List<String> finalStateMismatches =
        withoutIngestion
            ? differing(
                withoutIngestionTime(expected.finalState()),
                withoutIngestionTime(observed.finalState()))
            : differing(expected.finalState(), observed.finalState());
    List<String> letterMismatches = differing(expectedLetters, observedLetters);
    List<String> duplicateMismatches =
        withoutIngestion
            ? differing(
                withoutIngestionTimes(expected.duplicates()),
                withoutIngestionTimes(observedDuplicates))
            : differing(expected.duplicates(), observedDuplicates);
    List<String> tooLateMismatches =
        withoutIngestion
            ? differing(
                withoutIngestionTimes(expected.tooLate()), withoutIngestionTimes(observedTooLate))
            : differing(expected.tooLate(), observedTooLate);

    Map<String, Long> accounting = new LinkedHashMap<>();
    List<String> violations = new ArrayList<>();
    for (String violation : expectedViolations) {
      violations.add("expected run: " + violation);
    }
    violations.addAll(identityViolations(observed, collapse, fed, markers, windowSize, accounting));
    return new Comparison(
        delivery,
        observed,
        finalStateMismatches,
        letterMismatches,
        duplicateMismatches,
        tooLateMismatches,
        accounting,
        violations);
  }

  /**
   * The accounting identity of {@code observed}: fed records and end-of-stream markers against dead
   * letters, duplicates, too-late and windowed records, each counted into {@code accounting};
   * returns why it does not hold (empty when it does). {@code collapse}: at-least-once delivery,
   * where a record delivered twice counts once.
   */
  private static List<String> identityViolations(
      OutputView observed,
      boolean collapse,
      long fed,
      int markers,
      Duration windowSize,
      Map<String, Long> accounting) {
    Map<String, Long> letters =
        new TreeMap<>(collapse ? observed.deadLettersByOrigin() : observed.deadLetters());
    long endMarkers = removeEndMarkers(letters);
    long deadLetters = sum(letters) + endMarkers;
    long duplicates =
        (collapse ? distinct(observed.duplicates()) : observed.duplicates())
            .values().stream().mapToLong(List::size).sum();
    long tooLate = observed.fullyTooLate(collapse);
    long windowed = observed.windowedEvents(windowSize, collapse);
    accounting.put("fed", fed);
    accounting.put("endMarkers", endMarkers);
    accounting.put("deadLetters", deadLetters);
    accounting.put("duplicates", duplicates);
    accounting.put("tooLate", tooLate);
    accounting.put("windowed", windowed);
    List<String> violations = new ArrayList<>();
    if (endMarkers != markers) {
      violations.add("end-of-stream markers: sent " + markers + ", dead-lettered " + endMarkers);
    }
    if (fed + markers != deadLetters + duplicates + tooLate + windowed) {
      violations.add(
          String.format(
              "fed %d + markers %d != deadLetters %d + duplicates %d + tooLate %d + windowed %d",
              fed, markers, deadLetters, duplicates, tooLate, windowed));
    }
    return violations;
  }

  private static long removeEndMarkers(Map<String, Long> letters) {
    long markers = 0;
    for (String key : new ArrayList<>(letters.keySet())) {
      if (key.contains("|" + LiveRun.END_MARKER_SOURCE + "|")) {
        markers += letters.remove(key);
      }
    }
    return markers;
  }

  private static Map<String, String> withoutIngestionTime(Map<String, String> records) {
    Map<String, String> stripped = new TreeMap<>();
    records.forEach((key, record) -> stripped.put(key, withoutIngestionTime(record)));
    return stripped;
  }

  private static Map<String, List<String>> withoutIngestionTimes(
      Map<String, List<String>> records) {
    Map<String, List<String>> stripped = new TreeMap<>();
    records.forEach(
        (key, list) ->
            stripped.put(key, list.stream().map(Comparison::withoutIngestionTime).toList()));
    return stripped;
  }

  /**
   * A record's canonical JSON without {@code ingestionTime}, at the top or under {@code clocks}.
   */
  static String withoutIngestionTime(String record) {
    try {
      ObjectNode node = (ObjectNode) Json.MAPPER.readTree(record);
      node.remove("ingestionTime");
      if (node.get("clocks") instanceof ObjectNode) {
        ((ObjectNode) node.get("clocks")).remove("ingestionTime");
      }
      return Json.canonical(node);
    } catch (IOException e) {
      throw new UncheckedIOException("not a JSON record: " + record, e);
    }
  }

  private static long sum(Map<String, Long> counts) {
    return counts.values().stream().mapToLong(Long::longValue).sum();
  }

  private static Map<String, List<String>> distinct(Map<String, List<String>> records) {
    Map<String, List<String>> distinct = new TreeMap<>();
    records.forEach((key, list) -> distinct.put(key, new ArrayList<>(new TreeSet<>(list))));
    return distinct;
  }

  /** The keys whose values differ: in one map only, or in both with different values. */
  static <V> List<String> differing(Map<String, V> expected, Map<String, V> observed) {
    TreeSet<String> keys = new TreeSet<>(expected.keySet());
    keys.addAll(observed.keySet());
    List<String> differing = new ArrayList<>();
    for (String key : keys) {
      V want = expected.get(key);
      V got = observed.get(key);
      if (want instanceof List && got instanceof List) {
        List<?> a = new ArrayList<>((List<?>) want);
        List<?> b = new ArrayList<>((List<?>) got);
        a.sort(null);
        b.sort(null);
        if (!a.equals(b)) {
          differing.add(key);
        }
      } else if (!Objects.equals(want, got)) {
        differing.add(key);
      }
    }
    return differing;
  }

  public long decisionsCommitted() {
    return decisionsCommitted;
  }

  public int duplicateVersions() {
    return duplicateVersions.size();
  }

  public int missingVersions() {
    return missingVersions.size();
  }

  public int finalStateMismatches() {
    return finalStateMismatches.size();
  }

  public int deadLetterMismatches() {
    return deadLetterMismatches.size();
  }

  public int duplicateMismatches() {
    return duplicateMismatches.size();
  }

  public int tooLateMismatches() {
    return tooLateMismatches.size();
  }

  public boolean identityHolds() {
    return identityViolations.isEmpty();
  }

  /** Why the identity does not hold; empty when it does. */
  public List<String> identityViolations() {
    return Collections.unmodifiableList(identityViolations);
  }

  /** The observed accounting: fed, endMarkers, deadLetters, duplicates, tooLate, windowed. */
  public Map<String, Long> accounting() {
    return Collections.unmodifiableMap(accounting);
  }

  /**
   * Whether the run passed: no mismatch, no missing version, the identity holds, and with {@link
   * Delivery#EXACTLY_ONCE} no version committed twice.
   */
  public boolean passed() {
    return finalStateMismatches.isEmpty()
        && deadLetterMismatches.isEmpty()
        && duplicateMismatches.isEmpty()
        && tooLateMismatches.isEmpty()
        && missingVersions.isEmpty()
        && (delivery == Delivery.AT_LEAST_ONCE || duplicateVersions.isEmpty())
        && identityHolds();
  }

  /** The comparison's figures under their {@code drill.json} names. */
  public ObjectNode toJsonNode() {
    ObjectNode json = Json.MAPPER.createObjectNode();
    json.put("decisionsCommitted", decisionsCommitted);
    json.put("duplicateVersions", duplicateVersions.size());
    json.put("missingVersions", missingVersions.size());
    json.put("finalStateMismatches", finalStateMismatches.size());
    json.put("deadLetterMismatches", deadLetterMismatches.size());
    json.put("duplicateMismatches", duplicateMismatches.size());
    json.put("tooLateMismatches", tooLateMismatches.size());
    json.put("identityHolds", identityHolds());
    return json;
  }

  /** {@link #toJsonNode()} as pretty-printed JSON. */
  public String toJson() {
    return pretty(toJsonNode());
  }

  /**
   * The whole {@code drill.json}: the drill's own figures first ({@code events}, {@code kills},
   * {@code brokerRestarts}, {@code jobRestarts}), then the comparison's.
   */
  public String toJson(long events, int kills, int brokerRestarts, int jobRestarts) {
    ObjectNode json = Json.MAPPER.createObjectNode();
    json.put("events", events);
    json.put("kills", kills);
    json.put("brokerRestarts", brokerRestarts);
    json.put("jobRestarts", jobRestarts);
    json.setAll(toJsonNode());
    return pretty(json);
  }

  private static String pretty(ObjectNode json) {
    try {
      return Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(json) + "\n";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A few lines for a human: the accounting and up to five example keys per mismatch. */
  public String describe() {
    StringBuilder text = new StringBuilder();
    text.append("accounting ").append(accounting).append('\n');
    example(text, "duplicate versions", duplicateVersions);
    example(text, "missing versions", missingVersions);
    example(text, "final state mismatches", finalStateMismatches);
    example(text, "dead letter mismatches", deadLetterMismatches);
    example(text, "duplicate mismatches", duplicateMismatches);
    example(text, "too-late mismatches", tooLateMismatches);
    example(text, "identity violations", identityViolations);
    return text.toString();
  }

  /** The keys of each category that differ (all of them). */
  public Map<String, List<String>> mismatches() {
    Map<String, List<String>> all = new LinkedHashMap<>();
    all.put("duplicateVersions", duplicateVersions);
    all.put("missingVersions", missingVersions);
    all.put("finalStateMismatches", finalStateMismatches);
    all.put("deadLetterMismatches", deadLetterMismatches);
    all.put("duplicateMismatches", duplicateMismatches);
    all.put("tooLateMismatches", tooLateMismatches);
    return Collections.unmodifiableMap(all);
  }

  private static void example(StringBuilder text, String what, List<String> keys) {
    if (!keys.isEmpty()) {
      text.append(what)
          .append(' ')
          .append(keys.size())
          .append(": ")
          .append(keys.subList(0, Math.min(EXAMPLES, keys.size())))
          .append('\n');
    }
  }
}
