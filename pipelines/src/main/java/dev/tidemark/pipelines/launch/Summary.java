package dev.tidemark.pipelines.launch;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.model.ScoringMetrics;
import dev.tidemark.pipelines.Outputs;
import dev.tidemark.pipelines.RunSpecs;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.io.Sinks;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.Decision.Correction;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.DistributionResult;
import org.apache.beam.sdk.metrics.GaugeResult;
import org.apache.beam.sdk.metrics.MetricQueryResults;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * What a run did with every input record, from the pipeline's counters, and the accounting identity
 * that proves nothing was lost: {@code read = valid + deadLetters}, {@code valid = unique +
 * duplicates}, {@code unique = windowed + tooLate + droppedByRunner}.
 *
 * <p>{@code droppedByRunner} is what Beam's own late-data filters dropped (its {@code
 * droppedDueToLateness} counters, counted per event and window). Tidemark's too-late gate keeps it
 * at zero; if a runner ever drops anything it shows here and the identity fails loudly.
 */
public final class Summary {
  /** The prefix under which the scoring step's metrics ({@link ScoringMetrics}) are kept here. */
  private static final String SCORING = ScoringMetrics.NAMESPACE + "/";

  /** The summary.json keys for decision timings, always present. */
  static final List<String> TIMINGS = List.of("EARLY", "ON_TIME", "LATE");

  public final long read;
  public final long valid;
  public final long deadLetters;
  public final Map<String, Long> deadLettersByReason;
  public final long unique;
  public final long duplicates;
  public final long conflicts;
  public final long windowed;
  public final long tooLate;
  public final long partiallyLate;
  public final long droppedByRunner;
  public final Map<String, Long> decisionsByTiming;
  public final long decisions;
  public final long refined;
  public final long reversed;
  public final Duration wallTime;
  private final Map<String, Long> counters;
  private final Map<String, DistributionResult> distributions;
  private final Map<String, GaugeResult> gauges;
  private final @Nullable PipelineSpec spec;
  private final Map<String, String> destinations;

  private Summary(
      Map<String, Long> counters,
      Map<String, DistributionResult> distributions,
      Map<String, GaugeResult> gauges,
      long droppedByRunner,
      Duration wallTime,
      @Nullable PipelineSpec spec,
      Map<String, String> destinations) {
    this.spec = spec;
    this.destinations = Collections.unmodifiableMap(new LinkedHashMap<>(destinations));
    this.counters = Collections.unmodifiableMap(new TreeMap<>(counters));
    this.distributions = Collections.unmodifiableMap(new TreeMap<>(distributions));
    this.gauges = Collections.unmodifiableMap(new TreeMap<>(gauges));
    this.read = counters.getOrDefault(TidemarkMetrics.READ, 0L);
    this.valid = counters.getOrDefault(TidemarkMetrics.VALID, 0L);
    this.deadLetters = counters.getOrDefault(TidemarkMetrics.DEAD_LETTERS, 0L);
    Map<String, Long> reasons = new TreeMap<>();
    Map<String, Long> timings = new LinkedHashMap<>();
    for (String timing : TIMINGS) {
      timings.put(timing, counters.getOrDefault(TidemarkMetrics.DECISIONS_PREFIX + timing, 0L));
    }
    counters.forEach(
        (name, value) -> {
          if (name.startsWith(TidemarkMetrics.DEAD_LETTERS_PREFIX) && value > 0) {
            reasons.put(name.substring(TidemarkMetrics.DEAD_LETTERS_PREFIX.length()), value);
          }
        });
    this.deadLettersByReason = Collections.unmodifiableMap(reasons);
    this.unique = counters.getOrDefault(TidemarkMetrics.UNIQUE, 0L);
    this.duplicates = counters.getOrDefault(TidemarkMetrics.DUPLICATES, 0L);
    this.conflicts = counters.getOrDefault(TidemarkMetrics.CONFLICTS, 0L);
    this.windowed = counters.getOrDefault(TidemarkMetrics.WINDOWED, 0L);
    this.tooLate = counters.getOrDefault(TidemarkMetrics.TOO_LATE, 0L);
    this.partiallyLate = counters.getOrDefault(TidemarkMetrics.PARTIALLY_LATE, 0L);
    this.droppedByRunner = droppedByRunner;
    this.decisionsByTiming = Collections.unmodifiableMap(timings);
    this.decisions = counters.getOrDefault(TidemarkMetrics.DECISIONS, 0L);
    this.refined =
        counters.getOrDefault(
            TidemarkMetrics.CORRECTIONS_PREFIX + Correction.REFINED.jsonName(), 0L);
    this.reversed =
        counters.getOrDefault(
            TidemarkMetrics.CORRECTIONS_PREFIX + Correction.REVERSED.jsonName(), 0L);
    this.wallTime = wallTime;
  }

  /** Reads the counters of a finished run (committed values where the runner has them). */
  public static Summary from(PipelineResult result, Duration wallTime) {
    MetricQueryResults metrics = result.metrics().queryMetrics(MetricsFilter.builder().build());
    Map<String, Long> counters = new TreeMap<>();
    long droppedByRunner = 0;
    for (MetricResult<Long> counter : metrics.getCounters()) {
      long value = value(counter);
      String namespace = counter.getName().getNamespace();
      String name = counter.getName().getName();
      if (TidemarkMetrics.NAMESPACE.equals(namespace)) {
        counters.merge(name, value, Long::sum);
      } else if (ScoringMetrics.NAMESPACE.equals(namespace)) {
        counters.merge(SCORING + name, value, Long::sum);
      } else if (name.equalsIgnoreCase(TidemarkMetrics.RUNNER_DROPPED_DUE_TO_LATENESS)
          || name.equals(TidemarkMetrics.RUNNER_STATEFUL_PARDO_DROPPED)) {
        droppedByRunner += value;
      }
    }
    Map<String, DistributionResult> distributions = new TreeMap<>();
    for (MetricResult<DistributionResult> distribution : metrics.getDistributions()) {
      String namespace = distribution.getName().getNamespace();
      String name = distribution.getName().getName();
      if (TidemarkMetrics.NAMESPACE.equals(namespace)) {
        distributions.merge(name, value(distribution), Summary::combine);
      } else if (ScoringMetrics.NAMESPACE.equals(namespace)) {
        distributions.merge(SCORING + name, value(distribution), Summary::combine);
      }
    }
    Map<String, GaugeResult> gauges = new TreeMap<>();
    for (MetricResult<GaugeResult> gauge : metrics.getGauges()) {
      if (TidemarkMetrics.NAMESPACE.equals(gauge.getName().getNamespace())) {
        gauges.merge(gauge.getName().getName(), value(gauge), Summary::latest);
      }
    }
    return new Summary(counters, distributions, gauges, droppedByRunner, wallTime, null, Map.of());
  }

  private static DistributionResult combine(DistributionResult a, DistributionResult b) {
    return DistributionResult.create(
        a.getSum() + b.getSum(),
        a.getCount() + b.getCount(),
        Math.min(a.getMin(), b.getMin()),
        Math.max(a.getMax(), b.getMax()));
  }

  private static GaugeResult latest(GaugeResult a, GaugeResult b) {
    return b.getTimestamp().isAfter(a.getTimestamp()) ? b : a;
  }

  /**
   * The summary of runs over disjoint parts of one input: their counters added, with {@code
   * wallTime} for the whole and the first part's spec.
   */
  public static Summary sum(List<Summary> parts, Duration wallTime) {
    Map<String, Long> counters = new TreeMap<>();
    Map<String, DistributionResult> distributions = new TreeMap<>();
    Map<String, GaugeResult> gauges = new TreeMap<>();
    long droppedByRunner = 0;
    @Nullable PipelineSpec spec = null;
    Map<String, String> destinations = Map.of();
    for (Summary part : parts) {
      spec = spec == null ? part.spec : spec;
      destinations = destinations.isEmpty() ? part.destinations : destinations;
      part.counters.forEach((name, value) -> counters.merge(name, value, Long::sum));
      part.distributions.forEach(
          (name, value) -> distributions.merge(name, value, Summary::combine));
      part.gauges.forEach((name, value) -> gauges.merge(name, value, Summary::latest));
      droppedByRunner += part.droppedByRunner;
    }
    return new Summary(
        counters, distributions, gauges, droppedByRunner, wallTime, spec, destinations);
  }

  /**
   * This summary of the run {@code options} describe: summary.json then names the run's spec, its
   * key field and its decision labels, counts each model's decisions by label, and says where each
   * output went (the sink, and each output's directory, topic or table by the spec's output names,
   * {@link Sinks#destinations}).
   */
  public Summary withRun(TidemarkOptions options) {
    Map<String, String> outputs = new LinkedHashMap<>();
    outputs.put("sink", options.getSink().name());
    outputs.putAll(Sinks.destinations(options));
    return new Summary(
        counters, distributions, gauges, droppedByRunner, wallTime, RunSpecs.of(options), outputs);
  }

  /** A metric's committed value where the runner has one, else its attempted value. */
  private static <T> T value(MetricResult<T> metric) {
    try {
      T committed = metric.getCommitted();
      return committed == null ? metric.getAttempted() : committed;
    } catch (UnsupportedOperationException e) {
      return metric.getAttempted();
    }
  }

  /** The broken parts of the accounting identity; empty when every record is accounted for. */
  public List<String> identityViolations() {
    List<String> violations = new ArrayList<>();
    if (read != valid + deadLetters) {
      violations.add(
          String.format("read %d != valid %d + deadLetters %d", read, valid, deadLetters));
    }
    long byReason = deadLettersByReason.values().stream().mapToLong(Long::longValue).sum();
    if (byReason != deadLetters) {
      violations.add(String.format("deadLetters %d != sum by reason %d", deadLetters, byReason));
    }
    if (valid != unique + duplicates) {
      violations.add(
          String.format("valid %d != unique %d + duplicates %d", valid, unique, duplicates));
    }
    if (unique != windowed + tooLate + droppedByRunner) {
      violations.add(
          String.format(
              "unique %d != windowed %d + tooLate %d + droppedByRunner %d",
              unique, windowed, tooLate, droppedByRunner));
    }
    if (droppedByRunner != 0) {
      violations.add("the runner dropped " + droppedByRunner + " late event-windows itself");
    }
    if (readLabels()) {
      long read = label(TidemarkMetrics.READ);
      long valid = label(TidemarkMetrics.VALID);
      long deadLetters = label(TidemarkMetrics.DEAD_LETTERS);
      long unique = label(TidemarkMetrics.UNIQUE);
      long duplicates = label(TidemarkMetrics.DUPLICATES);
      long judged =
          counter(TidemarkMetrics.LABELS_MATCHED)
              + counter(TidemarkMetrics.LABELS_UNMATCHED)
              + counter(TidemarkMetrics.LABELS_WITHOUT_KEY_OR_TIME);
      if (read != valid + deadLetters) {
        violations.add(
            String.format(
                "labels: read %d != valid %d + deadLetters %d", read, valid, deadLetters));
      }
      if (valid != unique + duplicates) {
        violations.add(
            String.format(
                "labels: valid %d != unique %d + duplicates %d", valid, unique, duplicates));
      }
      if (unique != judged) {
        violations.add(
            String.format(
                "labels: unique %d != matched + unmatched + withoutKeyOrTime %d", unique, judged));
      }
    }
    return violations;
  }

  /** Whether the run read a labels stream ({@code --labelsInput}). */
  private boolean readLabels() {
    return counters.containsKey(TidemarkMetrics.LABELS_PREFIX + TidemarkMetrics.READ);
  }

  private long label(String name) {
    return counter(TidemarkMetrics.LABELS_PREFIX + name);
  }

  private long counter(String name) {
    return counters.getOrDefault(name, 0L);
  }

  /**
   * The drift alarms of the run: how many, the first one's time (null without alarms), and the
   * count by role, model version ({@code name:version}) and test ({@code score}, {@code error}).
   */
  private void writeDrift(ObjectNode drift) {
    String prefix = TidemarkMetrics.DRIFT_ALARMS_PREFIX;
    long alarms = 0;
    ObjectNode byModel = Json.MAPPER.createObjectNode();
    for (Map.Entry<String, Long> entry : counters.entrySet()) {
      String name = entry.getKey();
      if (!name.startsWith(prefix) || entry.getValue() == 0) {
        continue;
      }
      String[] parts = name.substring(prefix.length()).split("/", 3);
      if (parts.length != 3) {
        continue;
      }
      ObjectNode models =
          byModel.has(parts[0]) ? (ObjectNode) byModel.get(parts[0]) : byModel.putObject(parts[0]);
      ObjectNode model =
          models.has(parts[1]) ? (ObjectNode) models.get(parts[1]) : models.putObject(parts[1]);
      model.put(parts[2], entry.getValue());
      alarms += entry.getValue();
    }
    drift.put("alarms", alarms);
    DistributionResult times = distributions.get(TidemarkMetrics.DRIFT_ALARM_TIME);
    if (alarms > 0 && times != null && times.getCount() > 0) {
      drift.put("firstAlarmTime", Json.instant(new Instant(times.getMin())));
    } else {
      drift.putNull("firstAlarmTime");
    }
    drift.set("byModel", byModel);
  }

  /**
   * The labels stream's accounting and the evaluation per model version over the whole run, by role
   * ({@code deciding}, {@code shadow}) and {@code name:version}.
   */
  private void writeLabels(ObjectNode labels) {
    for (String name :
        List.of(
            TidemarkMetrics.READ,
            TidemarkMetrics.VALID,
            TidemarkMetrics.DEAD_LETTERS,
            TidemarkMetrics.UNIQUE,
            TidemarkMetrics.DUPLICATES,
            TidemarkMetrics.CONFLICTS)) {
      labels.put(name, label(name));
    }
    labels.put("matched", counter(TidemarkMetrics.LABELS_MATCHED));
    labels.put("unmatched", counter(TidemarkMetrics.LABELS_UNMATCHED));
    labels.put("withoutKeyOrTime", counter(TidemarkMetrics.LABELS_WITHOUT_KEY_OR_TIME));
    labels.put("evaluations", counter(TidemarkMetrics.LABELS_EVALUATIONS));
    ObjectNode byModel = labels.putObject("byModel");
    String prefix = TidemarkMetrics.EVALUATIONS_BY_MODEL_PREFIX;
    for (String name : counters.keySet()) {
      if (!name.startsWith(prefix) || !name.endsWith("/labels")) {
        continue;
      }
      String roleAndModel = name.substring(prefix.length(), name.length() - "/labels".length());
      int slash = roleAndModel.indexOf('/');
      String role = roleAndModel.substring(0, slash);
      String base = prefix + roleAndModel + "/";
      long judged = counter(base + "labels");
      long positives = counter(base + "positives");
      long flagged = counter(base + "flagged");
      long truePositives = counter(base + "truePositives");
      ObjectNode models =
          byModel.has(role) ? (ObjectNode) byModel.get(role) : byModel.putObject(role);
      ObjectNode model = models.putObject(roleAndModel.substring(slash + 1));
      model.put("labels", judged);
      model.put("positives", positives);
      model.put("flagged", flagged);
      model.put("truePositives", truePositives);
      model.put("falsePositives", flagged - truePositives);
      model.put("falseNegatives", positives - truePositives);
      rate(model, "precision", truePositives, flagged);
      rate(model, "recall", truePositives, positives);
      rate(model, "reviewRate", flagged, judged);
    }
  }

  private static void rate(ObjectNode out, String name, long part, long whole) {
    if (whole == 0) {
      out.putNull(name);
    } else {
      out.put(name, (double) part / whole);
    }
  }

  /** Records the source delivered. */
  public long read() {
    return read;
  }

  /** Decisions emitted (all panes). */
  public long decisions() {
    return decisions;
  }

  /** Records dead-lettered. */
  public long deadLetters() {
    return deadLetters;
  }

  /** Duplicates recorded. */
  public long duplicates() {
    return duplicates;
  }

  /** Too-late records captured. */
  public long tooLate() {
    return tooLate;
  }

  public boolean identityHolds() {
    return identityViolations().isEmpty();
  }

  /** summary.json: the figures under their contract keys, plus the wall time. */
  public String toJson() {
    ObjectNode json = Json.MAPPER.createObjectNode();
    if (spec != null) {
      ObjectNode about = json.putObject("spec");
      about.put("name", spec.name());
      about.put("key", spec.events().key());
      ObjectNode labels = about.putObject("labels");
      labels.put("atOrAbove", spec.model().positiveLabel());
      labels.put("below", spec.model().negativeLabel());
    }
    if (!destinations.isEmpty()) {
      ObjectNode outputs = json.putObject("outputs");
      destinations.forEach(outputs::put);
    }
    json.put("read", read);
    json.put("valid", valid);
    json.put("deadLetters", deadLetters);
    ObjectNode reasons = json.putObject("deadLettersByReason");
    deadLettersByReason.forEach(reasons::put);
    json.put("unique", unique);
    json.put("duplicates", duplicates);
    json.put("conflicts", conflicts);
    json.put("windowed", windowed);
    json.put("tooLate", tooLate);
    json.put("partiallyLate", partiallyLate);
    json.put("droppedByRunner", droppedByRunner);
    ObjectNode timings = json.putObject("decisionsByTiming");
    decisionsByTiming.forEach(timings::put);
    json.put("decisions", decisions);
    ObjectNode corrections = json.putObject("corrections");
    corrections.put("refined", refined);
    corrections.put("reversed", reversed);
    writeModels(json.putObject("models"), "");
    ObjectNode shadow = Json.MAPPER.createObjectNode();
    writeModels(shadow, ScoringMetrics.SHADOW_PREFIX);
    if (!shadow.isEmpty()) {
      json.set("shadowModels", shadow);
    }
    writeSignals(json.putObject("signals"));
    if (readLabels()) {
      writeLabels(json.putObject("labels"));
    }
    writeDrift(json.putObject("drift"));
    json.put("identityHolds", identityHolds());
    json.put("wallTimeMillis", wallTime.getMillis());
    try {
      return Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(json) + "\n";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The operating signals (docs/operations.md): state size, lag, watermark progress, correction
   * rate and replay behaviour, as the run's metrics left them.
   */
  private void writeSignals(ObjectNode signals) {
    signals.put("liveIdentities", counters.getOrDefault(TidemarkMetrics.LIVE_IDENTITIES, 0L));
    signals.put("openWindows", counters.getOrDefault(TidemarkMetrics.OPEN_WINDOWS, 0L));
    ObjectNode lag = signals.putObject("lagMillis");
    writeDistribution(lag.putObject("ingestionMinusEvent"), TidemarkMetrics.INGESTION_LAG);
    writeDistribution(lag.putObject("decisionMinusIngestion"), TidemarkMetrics.DECISION_LAG);
    ObjectNode watermark = signals.putObject("watermarkLagMillis");
    writeGauge(watermark, "gate", TidemarkMetrics.GATE_WATERMARK_LAG);
    writeGauge(watermark, "windows", TidemarkMetrics.WINDOWS_WATERMARK_LAG);
    ObjectNode rate = signals.putObject("correctionsPerDecision");
    rate.put("refined", decisions == 0 ? 0.0 : (double) refined / decisions);
    rate.put("reversed", decisions == 0 ? 0.0 : (double) reversed / decisions);
    ObjectNode replay = signals.putObject("perMinuteOfProcessing");
    double minutes = Math.max(wallTime.getMillis(), 1) / 60_000.0;
    replay.put("duplicates", duplicates / minutes);
    replay.put("conflicts", conflicts / minutes);
    replay.put("tooLate", tooLate / minutes);
    replay.put("partiallyLate", partiallyLate / minutes);
  }

  /**
   * Per model version ({@code name:version}), from the scoring step's per-version metrics: the
   * decisions it scored, how many scored at or above the threshold ({@code review}) and below it
   * ({@code allow}), the share at or above, the same counts under the spec's labels ({@code
   * byLabel}, when the spec is known), the score's minimum, mean and maximum, and the count of
   * scores in each tenth of [0, 1].
   */
  private void writeModels(ObjectNode out, String prefix) {
    String atOrAboveLabel = spec == null ? "review" : spec.model().positiveLabel();
    String belowLabel = spec == null ? "allow" : spec.model().negativeLabel();
    String review = SCORING + prefix + ScoringMetrics.decisions(atOrAboveLabel) + "/";
    String allow = SCORING + prefix + ScoringMetrics.decisions(belowLabel) + "/";
    Set<String> versions = new TreeSet<>();
    for (String name : counters.keySet()) {
      if (name.startsWith(review)) {
        versions.add(name.substring(review.length()));
      } else if (name.startsWith(allow)) {
        versions.add(name.substring(allow.length()));
      }
    }
    for (String version : versions) {
      long reviewed = counters.getOrDefault(review + version, 0L);
      long allowed = counters.getOrDefault(allow + version, 0L);
      long scored = reviewed + allowed;
      ObjectNode model = out.putObject(version);
      model.put("decisions", scored);
      model.put("review", reviewed);
      model.put("allow", allowed);
      model.put("reviewShare", scored == 0 ? 0.0 : (double) reviewed / scored);
      if (spec != null) {
        ObjectNode byLabel = model.putObject("byLabel");
        byLabel.put(atOrAboveLabel, reviewed);
        byLabel.put(belowLabel, allowed);
      }
      DistributionResult scores =
          distributions.get(SCORING + prefix + ScoringMetrics.SCORE_MILLIONTHS + "/" + version);
      ObjectNode score = model.putObject("score");
      if (scores != null && scores.getCount() > 0) {
        score.put("min", scores.getMin() / 1e6);
        score.put("mean", scores.getMean() / 1e6);
        score.put("max", scores.getMax() / 1e6);
      }
      ArrayNode deciles = model.putArray("scoreDeciles");
      for (int d = 0; d < 10; d++) {
        deciles.add(
            counters.getOrDefault(
                SCORING + prefix + ScoringMetrics.SCORE_DECILE + d + "/" + version, 0L));
      }
    }
  }

  private void writeDistribution(ObjectNode out, String name) {
    DistributionResult result = distributions.get(name);
    long count = result == null ? 0 : result.getCount();
    out.put("count", count);
    if (result != null && count > 0) {
      out.put("min", result.getMin());
      out.put("mean", result.getMean());
      out.put("max", result.getMax());
    }
  }

  private void writeGauge(ObjectNode out, String key, String name) {
    GaugeResult result = gauges.get(name);
    if (result == null || result == GaugeResult.empty()) {
      out.putNull(key);
    } else {
      out.put(key, result.getValue());
    }
  }

  /**
   * summary.json without what depends on the wall clock (the wall time, the watermark lags, the
   * rates per minute and the decision lag): what two runs of one input must agree on.
   */
  public String toJsonWithoutWallClock() {
    return withoutWallClock(toJson());
  }

  /** {@link #toJsonWithoutWallClock} of a summary.json a run wrote. */
  public static String withoutWallClock(String summaryJson) {
    try {
      ObjectNode json = (ObjectNode) Json.MAPPER.readTree(summaryJson);
      json.remove("wallTimeMillis");
      ObjectNode signals = (ObjectNode) json.get("signals");
      signals.remove("watermarkLagMillis");
      signals.remove("perMinuteOfProcessing");
      ((ObjectNode) signals.get("lagMillis")).remove("decisionMinusIngestion");
      return Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(json) + "\n";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public void writeTo(Path file) {
    try {
      Files.createDirectories(file.getParent());
      Files.writeString(file, toJson(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file, e);
    }
  }

  /** The directories of a file-sink run's outputs: {@link Outputs#NAMES} unless renamed. */
  private List<String> fileNames() {
    if (!"files".equals(destinations.get("sink"))) {
      return Outputs.NAMES;
    }
    return PipelineSpec.OUTPUTS.stream().map(destinations::get).toList();
  }

  /** The short human summary printed at the end of a run. */
  public void print(PrintStream out, Path outputDirectory) {
    out.printf("Tidemark run finished in %.1f s%n", wallTime.getMillis() / 1000.0);
    out.printf(
        "  events read       %,d  (%,.0f records/s)%n",
        read, read / Math.max(0.001, wallTime.getMillis() / 1000.0));
    out.printf("  valid             %,d%n", valid);
    out.printf("  dead-lettered     %,d  %s%n", deadLetters, deadLettersByReason);
    out.printf(
        "  duplicates        %,d  (%,d conflicts: same source+id, different content)%n",
        duplicates, conflicts);
    out.printf("  unique            %,d%n", unique);
    out.printf("  windowed          %,d  (%,d partially late)%n", windowed, partiallyLate);
    out.printf("  too late          %,d%n", tooLate);
    out.printf("  dropped by runner %,d%n", droppedByRunner);
    out.printf("  decisions         %,d  %s%n", decisions, decisionsByTiming);
    out.printf(
        "  corrections       %,d refined, %,d reversed (a later edition kept or changed the"
            + " verdict)%n",
        refined, reversed);
    out.printf("Accounting identity:%n");
    out.printf("  read %,d = valid %,d + deadLetters %,d%n", read, valid, deadLetters);
    out.printf("  valid %,d = unique %,d + duplicates %,d%n", valid, unique, duplicates);
    out.printf(
        "  unique %,d = windowed %,d + tooLate %,d + droppedByRunner %,d%n",
        unique, windowed, tooLate, droppedByRunner);
    List<String> violations = identityViolations();
    out.println(violations.isEmpty() ? "  HOLDS" : "  BROKEN: " + String.join("; ", violations));
    out.printf("Outputs in %s:%n", outputDirectory.toAbsolutePath().normalize());
    for (String name : fileNames()) {
      out.printf("  %s/%n", name);
    }
    out.printf("  summary.json%n");
  }
}
