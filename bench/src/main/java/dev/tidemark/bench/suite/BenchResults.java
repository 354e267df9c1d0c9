package dev.tidemark.bench.suite;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Everything a suite run measured, and {@code bench-results/latest.json}, a contract that tools
 * read. Its keys are fixed: the numbers of {@link #NUMBER_KEYS} (a dotted path is a nested object,
 * so {@code scaling.speedupP2VsP1} is {@code {"tidemark": x, "native": y}}), {@code machine},
 * {@code notes}: numbers, or {@code null} with the reason under {@code notes}. Further keys ({@code
 * profile}, {@code measurements}, {@code series}) carry the detail.
 */
public final class BenchResults {
  /** The ratio keys, in contract order. */
  public static final List<String> RATIOS =
      List.of(
          "tidemarkVsNativeFlinkBackfill",
          "tidemarkVsNativeFlinkStreaming",
          "tidemarkVsFlinkSqlBackfill",
          "tidemarkVsFlinkSqlStreaming",
          "dedupVsBeamDeduplicate",
          "featuresVsNaiveCombine",
          "tidemarkVsNativeFlinkRocksDb",
          "tidemarkVsFlinkSqlRocksDb",
          "eosThroughputCost");

  /**
   * The numeric contract keys as dotted paths into the JSON, in contract order ({@code machine} and
   * {@code notes} follow them).
   */
  public static final List<String> NUMBER_KEYS =
      List.of(
          "ratios.tidemarkVsNativeFlinkBackfill",
          "ratios.tidemarkVsNativeFlinkStreaming",
          "ratios.tidemarkVsFlinkSqlBackfill",
          "ratios.tidemarkVsFlinkSqlStreaming",
          "ratios.dedupVsBeamDeduplicate",
          "ratios.featuresVsNaiveCombine",
          "ratios.tidemarkVsNativeFlinkRocksDb",
          "ratios.tidemarkVsFlinkSqlRocksDb",
          "ratios.eosThroughputCost",
          "scaling.throughput1MVs1kAccounts",
          "scaling.speedupP2VsP1.tidemark",
          "scaling.speedupP2VsP1.native",
          "latencyMs.p50",
          "latencyMs.p95",
          "latencyMs.p99",
          "latencyMs.rocksDb.p50",
          "latencyMs.rocksDb.p95",
          "latencyMs.rocksDb.p99",
          "stateBytesPerDedupKey",
          "stateBytesPerDedupKeyRocksDb",
          "scoring.transformVsRaw.xgboost",
          "scoring.transformVsRaw.onnx",
          "scoring.batch256VsBatch1.xgboost",
          "scoring.batch256VsBatch1.onnx");

  /** One measured figure: what, the statistics, the unit, and how it was measured. */
  public static final class Measurement {
    public final String part;
    public final String name;
    public final Stats stats;
    public final String unit;

    Measurement(String part, String name, Stats stats, String unit) {
      this.part = part;
      this.name = name;
      this.stats = stats;
      this.unit = unit;
    }
  }

  /** A chart series: x and y values with a label, for one chart. */
  public static final class Series {
    public final String chart;
    public final String label;
    public final List<double[]> points = new ArrayList<>();

    Series(String chart, String label) {
      this.chart = chart;
      this.label = label;
    }
  }

  private final BenchProfile profile;

  /** Every {@link #NUMBER_KEYS} figure by its dotted path, null until measured. */
  private final Map<String, @Nullable Double> figures = new LinkedHashMap<>();

  private final List<String> notes = new ArrayList<>();
  private final List<Measurement> measurements = new ArrayList<>();
  private final Map<String, Series> series = new LinkedHashMap<>();

  public BenchResults(BenchProfile profile) {
    this.profile = profile;
    NUMBER_KEYS.forEach(key -> figures.put(key, null));
  }

  public BenchProfile profile() {
    return profile;
  }

  /** Sets one of {@link #NUMBER_KEYS}, by its dotted path. */
  public synchronized void figure(String key, @Nullable Double value) {
    if (!figures.containsKey(key)) {
      throw new IllegalArgumentException("not a contract figure: " + key);
    }
    figures.put(key, value);
  }

  /** Sets one of {@link #RATIOS}: Tidemark's throughput divided by the baseline's. */
  public synchronized void ratio(String key, @Nullable Double value) {
    if (!RATIOS.contains(key)) {
      throw new IllegalArgumentException("not a contract ratio: " + key);
    }
    figure("ratios." + key, value);
  }

  public synchronized @Nullable Double ratio(String key) {
    return figures.get("ratios." + key);
  }

  public synchronized void throughput1MVs1kAccounts(@Nullable Double value) {
    figure("scaling.throughput1MVs1kAccounts", value);
  }

  public synchronized void latencyMs(
      @Nullable Double p50, @Nullable Double p95, @Nullable Double p99) {
    figure("latencyMs.p50", p50);
    figure("latencyMs.p95", p95);
    figure("latencyMs.p99", p99);
  }

  public synchronized void stateBytesPerDedupKey(@Nullable Double value) {
    figure("stateBytesPerDedupKey", value);
  }

  /**
   * The numeric contract figures by {@link #NUMBER_KEYS} path, in contract order; {@code null}
   * where not measured (NaN and infinities count as not measured).
   */
  public synchronized Map<String, @Nullable Double> numbers() {
    Map<String, @Nullable Double> numbers = new LinkedHashMap<>();
    figures.forEach((k, v) -> numbers.put(k, finite(v)));
    return numbers;
  }

  /**
   * Adds a note for every null contract figure that no note names yet by its dotted path (as in
   * {@link #NUMBER_KEYS}), so that every null in {@code latest.json} has a reason.
   */
  public synchronized void noteUnmeasured(String part) {
    numbers()
        .forEach(
            (key, value) -> {
              if (value == null && notes.stream().noneMatch(n -> mentions(n, key))) {
                note(part, key + " is null: no part of this run measured it");
              }
            });
  }

  /** Whether {@code note} names {@code key} as a whole word (not as the start of a longer key). */
  private static boolean mentions(String note, String key) {
    return java.util.regex.Pattern.compile(java.util.regex.Pattern.quote(key) + "(?![A-Za-z0-9])")
        .matcher(note)
        .find();
  }

  /** A note for {@code notes}: how something was measured, or why it is null. */
  public synchronized void note(String part, String text) {
    notes.add(part + ": " + text);
  }

  /** Records a measured figure for the table and the JSON. */
  public synchronized Measurement measure(String part, String name, Stats stats, String unit) {
    Measurement m = new Measurement(part, name, stats, unit);
    measurements.add(m);
    return m;
  }

  /** Adds a point to a chart series ({@code chart} names the PNG, {@code label} the line). */
  public synchronized void point(String chart, String label, double x, double y) {
    series
        .computeIfAbsent(chart + "\u0000" + label, k -> new Series(chart, label))
        .points
        .add(new double[] {x, y});
  }

  public synchronized List<Series> series() {
    return new ArrayList<>(series.values());
  }

  public synchronized List<Measurement> measurements() {
    return new ArrayList<>(measurements);
  }

  public synchronized List<String> notes() {
    return new ArrayList<>(notes);
  }

  /** The machine the run measured, as the JSON's {@code machine}. */
  public static String machine() {
    Runtime rt = Runtime.getRuntime();
    return String.format(
        Locale.ROOT,
        "%s %s, %d cores, max heap %d MiB, %s %s, load average %.2f at start",
        System.getProperty("os.name"),
        System.getProperty("os.arch"),
        rt.availableProcessors(),
        rt.maxMemory() >> 20,
        System.getProperty("java.vm.name"),
        System.getProperty("java.version"),
        ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
  }

  /** The results as the contract JSON. */
  public synchronized String toJson(String machine) {
    ObjectNode root = Json.MAPPER.createObjectNode();
    figures.forEach(
        (key, value) -> {
          // "a.b.c" is c in object b in object a.
          String[] path = key.split("\\.");
          ObjectNode parent = root;
          for (int i = 0; i < path.length - 1; i++) {
            parent =
                parent.has(path[i]) ? (ObjectNode) parent.get(path[i]) : parent.putObject(path[i]);
          }
          put(parent, path[path.length - 1], value);
        });
    root.put("machine", machine);
    ArrayNode n = root.putArray("notes");
    notes.forEach(n::add);
    root.put("profile", profile.id());
    if (!profile.overrides().isEmpty()) {
      root.put("profileOverrides", profile.overrides());
    }
    ArrayNode ms = root.putArray("measurements");
    for (Measurement m : measurements) {
      ObjectNode o = ms.addObject();
      o.put("part", m.part);
      o.put("name", m.name);
      o.put("unit", m.unit);
      put(o, "median", m.stats.median());
      put(o, "min", m.stats.min());
      put(o, "max", m.stats.max());
      o.put("repeats", m.stats.count());
    }
    ArrayNode ss = root.putArray("series");
    for (Series s : series.values()) {
      ObjectNode o = ss.addObject();
      o.put("chart", s.chart);
      o.put("label", s.label);
      ArrayNode points = o.putArray("points");
      for (double[] p : s.points) {
        ArrayNode point = points.addArray();
        add(point, p[0]);
        add(point, p[1]);
      }
    }
    try {
      return Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n";
    } catch (IOException e) {
      throw new IllegalStateException("cannot write the results", e);
    }
  }

  /**
   * Adds what one part recorded in another JVM, read back from that JVM's {@link #toJson}: its
   * non-null contract figures, notes, measurements and chart points. ({@code NaN} figures come back
   * as not measured, as JSON has no NaN.)
   */
  public synchronized void merge(JsonNode part) {
    for (String key : NUMBER_KEYS) {
      Double value = number(part.at("/" + key.replace('.', '/')));
      if (value != null) {
        figures.put(key, value);
      }
    }
    part.path("notes").forEach(note -> notes.add(note.asText()));
    for (JsonNode m : part.path("measurements")) {
      measure(
          m.path("part").asText(),
          m.path("name").asText(),
          Stats.summary(
              orNaN(m.path("median")),
              orNaN(m.path("min")),
              orNaN(m.path("max")),
              m.path("repeats").asInt()),
          m.path("unit").asText());
    }
    for (JsonNode s : part.path("series")) {
      for (JsonNode p : s.path("points")) {
        point(s.path("chart").asText(), s.path("label").asText(), orNaN(p.get(0)), orNaN(p.get(1)));
      }
    }
  }

  private static @Nullable Double number(JsonNode node) {
    return node.isNumber() ? node.asDouble() : null;
  }

  private static double orNaN(JsonNode node) {
    return node.isNumber() ? node.asDouble() : Double.NaN;
  }

  private static void put(ObjectNode node, String key, @Nullable Double value) {
    Double v = finite(value);
    if (v == null) {
      node.putNull(key);
    } else {
      node.put(key, v);
    }
  }

  private static void add(ArrayNode node, double value) {
    Double v = finite(value);
    if (v == null) {
      node.addNull();
    } else {
      node.add(v);
    }
  }

  /** JSON has no NaN or infinity: those are null, like a figure that was not measured. */
  private static @Nullable Double finite(@Nullable Double value) {
    return value == null || value.isNaN() || value.isInfinite() ? null : value;
  }

  public void writeJson(Path file, String machine) throws IOException {
    Files.createDirectories(file.toAbsolutePath().getParent());
    Files.writeString(file, toJson(machine), StandardCharsets.UTF_8);
  }

  /** The one table a run prints. */
  public synchronized void print(PrintStream out) {
    out.printf("Tidemark benchmark suite, profile %s%n", profile);
    out.printf(
        "%-22s %-48s %14s %14s %14s %s%n", "part", "measurement", "median", "min", "max", "unit");
    for (Measurement m : measurements) {
      out.printf(
          Locale.ROOT,
          "%-22s %-48s %14.2f %14.2f %14.2f %s%n",
          m.part,
          m.name,
          m.stats.median(),
          m.stats.min(),
          m.stats.max(),
          m.unit);
    }
    out.println("contract figures (ratios: Tidemark / baseline, same run):");
    figures.forEach(
        (k, v) ->
            out.printf(
                Locale.ROOT,
                "  %-34s %s%n",
                k,
                v == null ? "null" : String.format(Locale.ROOT, "%.3f", v)));
    notes.forEach(n -> out.println("note: " + n));
  }
}
