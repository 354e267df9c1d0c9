package dev.tidemark.tools.report;

import dev.tidemark.tools.report.RunData.DecisionPoint;
import dev.tidemark.tools.report.RunData.TooLatePoint;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * The report's charts, as inline SVG drawn from {@link RunData}.
 *
 * <p>Nothing is drawn per decision: a run of the bundled sample has about 20,000 decisions and a
 * long run millions. Every chart aggregates first, into at most {@value #TIME_BINS} time bins (the
 * clocks into a {@value #TIME_BINS} by {@value #CLOCK_ROWS} density grid per clock), so the page
 * holds a few thousand SVG elements at most, however large the run.
 */
final class Charts {
  static final int WIDTH = 920;
  static final int TIME_BINS = 120;
  static final int CLOCK_ROWS = 30;

  /** A chart with its heading and a sentence on how to read it. */
  record Chart(String id, String title, String caption, String svg) {}

  private Charts() {}

  private static final String[][] CLOCKS = {
    {"eventTime", "#1f77b4"},
    {"ingestionTime", "#2ca02c"},
    {"processingTime", "#ff7f0e"},
    {"decisionTime", "#9467bd"}
  };

  /**
   * The four clocks of every decision against its window's end, one panel per clock, each with its
   * own time axis: on a replay the event and ingestion clocks are the replay's, processing and
   * decision time the wall clock of the run.
   */
  static Chart clocks(List<DecisionPoint> decisions) {
    String caption =
        "Each decision's four clocks (y) against the end of its window (x), as a density: the"
            + " darker a cell, the more decisions. Each clock has its own axis; on a replay,"
            + " processing and decision time are the run's wall clock.";
    if (decisions.isEmpty()) {
      return empty("clocks", "The four clocks over event time", caption);
    }
    long xMin = min(decisions, DecisionPoint::windowEnd);
    long xMax = max(decisions, DecisionPoint::windowEnd);
    int panel = 150;
    List<String> groups = new ArrayList<>();
    List<ToLongFunction<DecisionPoint>> clocks =
        List.of(
            DecisionPoint::eventTime,
            DecisionPoint::ingestionTime,
            DecisionPoint::processingTime,
            DecisionPoint::decisionTime);
    for (int c = 0; c < clocks.size(); c++) {
      ToLongFunction<DecisionPoint> clock = clocks.get(c);
      long yMin = min(decisions, clock);
      long yMax = Math.max(yMin + 1, max(decisions, clock));
      long xStep = Math.max(1, (xMax - xMin + TIME_BINS) / TIME_BINS);
      long yStep = Math.max(1, (yMax - yMin + CLOCK_ROWS) / CLOCK_ROWS);
      Map<Long, Integer> cells = new TreeMap<>();
      for (DecisionPoint d : decisions) {
        long column = (d.windowEnd() - xMin) / xStep;
        long row = (clock.applyAsLong(d) - yMin) / yStep;
        cells.merge(column * (CLOCK_ROWS + 1) + row, 1, Integer::sum);
      }
      int most = cells.values().stream().mapToInt(Integer::intValue).max().orElse(1);
      Plot plot =
          new Plot(WIDTH, panel, c * panel)
              .x(xMin, xMin + xStep * (double) TIME_BINS)
              .y(yMin, yMin + yStep * (double) CLOCK_ROWS);
      for (Map.Entry<Long, Integer> cell : cells.entrySet()) {
        long column = cell.getKey() / (CLOCK_ROWS + 1);
        long row = cell.getKey() % (CLOCK_ROWS + 1);
        double x = xMin + column * (double) xStep;
        double y = yMin + row * (double) yStep;
        plot.rect(
            x,
            x + xStep,
            y,
            y + yStep,
            CLOCKS[c][1],
            0.25 + 0.75 * Math.log1p(cell.getValue()) / Math.log1p(most),
            null);
      }
      List<Double> yTicks = Plot.timeTicks(yMin, yMax, 4);
      List<Double> xTicks = Plot.timeTicks(xMin, xMax, 10);
      plot.note(CLOCKS[c][0])
          .yAxis(yTicks, Plot.timeLabels(yTicks, yMin, yMax), Plot.date(yMin))
          .xAxis(
              xTicks,
              Plot.timeLabels(xTicks, xMin, xMax),
              "window end (event time, UTC " + Plot.date(xMin) + ")");
      groups.add(plot.group());
    }
    List<String[]> legend = new ArrayList<>();
    for (String[] clock : CLOCKS) {
      legend.add(new String[] {clock[1], clock[0]});
    }
    return new Chart(
        "clocks",
        "The four clocks over event time",
        caption,
        Plot.svg(
            WIDTH, panel * clocks.size(), "four clocks", legend, groups.toArray(String[]::new)));
  }

  /** Lag ticks, in seconds: 0, 1 s, 10 s, 1 min, 10 min, 1 h, 6 h, 1 d, 7 d, 30 d. */
  private static final long[] LAG_TICKS = {0, 1, 10, 60, 600, 3600, 21600, 86400, 604800, 2592000};

  private static final String[] LAG_LABELS = {
    "0", "1 s", "10 s", "1 min", "10 min", "1 h", "6 h", "1 d", "7 d", "30 d"
  };

  /**
   * Ingestion minus event time, on a logarithmic axis: of the events the decisions carry (each
   * event once, however many panes carry it) and of the too-late records, with the allowed lateness
   * marked.
   */
  static Chart lateness(
      List<DecisionPoint> decisions, List<TooLatePoint> tooLate, java.time.Duration allowed) {
    String caption =
        "How long after its event time each event was ingested (log scale), for the events the"
            + " decisions carry (the latest event of each pane, counted once) and for the"
            + " too-late records. The dashed line is the allowed lateness; an event is too late"
            + " when it arrives after its window's end plus the allowed lateness, by the"
            + " watermark.";
    Set<String> seen = new HashSet<>();
    List<Double> used = new ArrayList<>();
    for (DecisionPoint d : decisions) {
      if (seen.add(d.key() + "|" + d.eventTime() + "|" + d.ingestionTime())) {
        used.add((d.ingestionTime() - d.eventTime()) / 1000.0);
      }
    }
    List<Double> late = new ArrayList<>();
    for (TooLatePoint t : tooLate) {
      late.add((t.ingestionTime() - t.eventTime()) / 1000.0);
    }
    if (used.isEmpty() && late.isEmpty()) {
      return empty("lateness", "Lateness", caption);
    }
    double allowedSeconds = allowed.toMillis() / 1000.0;
    double maxLag = allowedSeconds;
    for (double lag : used) {
      maxLag = Math.max(maxLag, lag);
    }
    for (double lag : late) {
      maxLag = Math.max(maxLag, lag);
    }
    double xMax = Math.log10(1 + maxLag) * 1.05 + 0.05;
    int bins = 60;
    long[] usedCounts = histogram(used, bins, xMax);
    long[] lateCounts = histogram(late, bins, xMax);
    long most = 1;
    for (int i = 0; i < bins; i++) {
      most = Math.max(most, Math.max(usedCounts[i], lateCounts[i]));
    }
    Plot plot = new Plot(WIDTH, 300, 0).x(0, xMax).logCountAxis(most, "count (log scale)");
    double width = xMax / bins;
    for (int i = 0; i < bins; i++) {
      double from = i * width;
      String range = String.format(Locale.ROOT, "%s to %s", lag(from), lag(from + width));
      plot.rect(
          from,
          from + width / 2,
          0,
          Plot.log(usedCounts[i]),
          "#3182bd",
          1,
          usedCounts[i] + " events in decisions, " + range);
      plot.rect(
          from + width / 2,
          from + width,
          0,
          Plot.log(lateCounts[i]),
          "#de2d26",
          1,
          lateCounts[i] + " too-late records, " + range);
    }
    plot.markerX(Math.log10(1 + allowedSeconds), "#000", "allowed lateness " + allowed.toString());
    List<Double> xTicks = new ArrayList<>();
    List<String> xLabels = new ArrayList<>();
    for (int i = 0; i < LAG_TICKS.length; i++) {
      double at = Math.log10(1 + LAG_TICKS[i]);
      if (at <= xMax) {
        xTicks.add(at);
        xLabels.add(LAG_LABELS[i]);
      }
    }
    plot.xAxis(
        xTicks, xLabels, "ingestion time − event time (log scale; earlier than 0 counts as 0)");
    return new Chart(
        "lateness",
        "Lateness",
        caption
            + String.format(
                Locale.ROOT,
                " %,d events in decisions, %,d too-late records.",
                used.size(),
                late.size()),
        Plot.svg(
            WIDTH,
            300,
            "lateness histogram",
            List.of(
                new String[] {"#3182bd", "events in decisions"},
                new String[] {"#de2d26", "too-late records"},
                new String[] {"#000", "allowed lateness"}),
            plot.group()));
  }

  private static long[] histogram(List<Double> lagsInSeconds, int bins, double xMax) {
    long[] counts = new long[bins];
    for (double lag : lagsInSeconds) {
      double x = Math.log10(1 + Math.max(0, lag));
      counts[Math.min(bins - 1, (int) (x / xMax * bins))]++;
    }
    return counts;
  }

  /** A lag on the log axis ({@code log10(1 + seconds)}) as text. */
  private static String lag(double x) {
    double seconds = Math.pow(10, x) - 1;
    if (seconds < 60) {
      return String.format(Locale.ROOT, "%.1f s", seconds);
    }
    if (seconds < 3600) {
      return String.format(Locale.ROOT, "%.1f min", seconds / 60);
    }
    return String.format(Locale.ROOT, "%.1f h", seconds / 3600);
  }

  /** Decisions per pane timing, stacked, per bin of window start. */
  static Chart panes(List<DecisionPoint> decisions) {
    Map<String, String> series = new LinkedHashMap<>();
    series.put("EARLY", "#9ecae1");
    series.put("ON_TIME", "#3182bd");
    series.put("LATE", "#e6550d");
    return stacked(
        "panes",
        "Panes by timing over event time",
        "Decisions (one per fired pane) by pane.timing, stacked, per bin of window start.",
        decisions,
        DecisionPoint::timing,
        series);
  }

  /** Editions per correction, stacked, per bin of window start. */
  static Chart corrections(List<DecisionPoint> decisions, RunData data, ReportSettings settings) {
    Map<String, String> series = new LinkedHashMap<>();
    series.put("none", "#bdbdbd");
    series.put("refined", "#31a354");
    series.put("reversed", "#de2d26");
    series.put("absent", "#9e9ac8");
    Map<String, Long> counts = new TreeMap<>();
    long supersedes = 0;
    for (DecisionPoint d : decisions) {
      counts.merge(correction(d), 1L, Long::sum);
      supersedes += d.supersedes() ? 1 : 0;
    }
    String caption =
        String.format(
            Locale.ROOT,
            "Each edition's correction, stacked per bin of window start: none (a window's first"
                + " edition), refined (the verdict stayed, the score or features moved), reversed"
                + " (allow became review or back). In the files: %,d none, %,d refined, %,d"
                + " reversed; %,d editions name the edition they supersede. summary.json"
                + " corrections: %,d refined, %,d reversed.",
            counts.getOrDefault("none", 0L),
            counts.getOrDefault("refined", 0L),
            counts.getOrDefault("reversed", 0L),
            supersedes,
            data.summary.path("corrections").path("refined").asLong(),
            data.summary.path("corrections").path("reversed").asLong());
    if (counts.containsKey("absent")) {
      caption +=
          String.format(
              Locale.ROOT,
              " %,d decisions carry no correction (--accumulationMode=%s: a discarding pane is a"
                  + " delta and corrects nothing).",
              counts.get("absent"),
              settings.accumulationMode());
    }
    return stacked(
        "corrections",
        "Corrections over event time",
        caption,
        decisions,
        Charts::correction,
        series);
  }

  private static String correction(DecisionPoint d) {
    return d.correction() == null ? "absent" : d.correction();
  }

  private static Chart stacked(
      String id,
      String title,
      String caption,
      List<DecisionPoint> decisions,
      Function<DecisionPoint, String> seriesOf,
      Map<String, String> colours) {
    if (decisions.isEmpty()) {
      return empty(id, title, caption);
    }
    TreeSet<Long> starts = new TreeSet<>();
    for (DecisionPoint d : decisions) {
      starts.add(d.windowStart());
    }
    long xMin = starts.first();
    long xMax = starts.last() + 1;
    int bins = Math.min(TIME_BINS, starts.size());
    long step = Math.max(1, (xMax - xMin + bins - 1) / bins);
    Map<String, long[]> counts = new LinkedHashMap<>();
    colours.keySet().forEach(s -> counts.put(s, new long[bins]));
    for (DecisionPoint d : decisions) {
      int bin = (int) Math.min(bins - 1, (d.windowStart() - xMin) / step);
      counts.computeIfAbsent(seriesOf.apply(d), s -> new long[bins])[bin]++;
    }
    long most = 1;
    for (int i = 0; i < bins; i++) {
      long total = 0;
      for (long[] c : counts.values()) {
        total += c[i];
      }
      most = Math.max(most, total);
    }
    Plot plot = new Plot(WIDTH, 260, 0).x(xMin, xMin + step * (double) bins);
    plot.countAxis(most, "decisions");
    for (int i = 0; i < bins; i++) {
      double base = 0;
      double from = xMin + i * (double) step;
      for (Map.Entry<String, long[]> s : counts.entrySet()) {
        long n = s.getValue()[i];
        if (n > 0) {
          plot.rect(
              from + step * 0.08,
              from + step * 0.92,
              base,
              base + n,
              colours.getOrDefault(s.getKey(), "#636363"),
              1,
              n + " " + s.getKey());
          base += n;
        }
      }
    }
    List<Double> ticks = Plot.timeTicks(xMin, xMax, 10);
    plot.xAxis(
        ticks,
        Plot.timeLabels(ticks, xMin, xMax),
        "window start (event time, UTC " + Plot.date(xMin) + ")");
    List<String[]> legend = new ArrayList<>();
    for (Map.Entry<String, long[]> s : counts.entrySet()) {
      long total = 0;
      for (long n : s.getValue()) {
        total += n;
      }
      if (total > 0) {
        legend.add(
            new String[] {
              colours.getOrDefault(s.getKey(), "#636363"),
              String.format(Locale.ROOT, "%s (%,d)", s.getKey(), total)
            });
      }
    }
    return new Chart(id, title, caption, Plot.svg(WIDTH, 260, title, legend, plot.group()));
  }

  /** A histogram of scores per model name and version, with the decision threshold marked. */
  static Chart scores(
      List<DecisionPoint> decisions, double threshold, String atOrAboveLabel, String belowLabel) {
    String caption =
        "Scores of all decisions, per model name:version, in bins of 0.05 (counts on a log"
            + " scale); at or above the dashed threshold the decision is "
            + atOrAboveLabel
            + ", below it "
            + belowLabel
            + ".";
    Map<String, long[]> perModel = new TreeMap<>();
    int bins = 20;
    for (DecisionPoint d : decisions) {
      if (d.score() != null) {
        long[] counts =
            perModel.computeIfAbsent(
                d.model() == null ? "unknown" : d.model(), m -> new long[bins]);
        counts[Math.max(0, Math.min(bins - 1, (int) (d.score() * bins)))]++;
      }
    }
    if (perModel.isEmpty()) {
      return empty("scores", "Scores per model version", caption);
    }
    int panel = 200;
    List<String> groups = new ArrayList<>();
    int index = 0;
    for (Map.Entry<String, long[]> model : perModel.entrySet()) {
      long[] counts = model.getValue();
      long most = 1;
      long total = 0;
      for (long n : counts) {
        most = Math.max(most, n);
        total += n;
      }
      Plot plot =
          new Plot(WIDTH, panel, index++ * panel).x(0, 1).logCountAxis(most, "decisions (log)");
      for (int i = 0; i < bins; i++) {
        double from = i / (double) bins;
        plot.rect(
            from + 0.003,
            from + 1.0 / bins - 0.003,
            0,
            Plot.log(counts[i]),
            from >= threshold ? "#fd8d3c" : "#74c476",
            1,
            String.format(
                Locale.ROOT, "%,d decisions scored %.2f to %.2f", counts[i], from, from + 0.05));
      }
      List<Double> ticks = new ArrayList<>();
      List<String> labels = new ArrayList<>();
      for (int t = 0; t <= 10; t++) {
        ticks.add(t / 10.0);
        labels.add(String.format(Locale.ROOT, "%.1f", t / 10.0));
      }
      plot.markerX(threshold, "#000", "threshold " + threshold)
          .note(String.format(Locale.ROOT, "%s (%,d decisions)", model.getKey(), total))
          .xAxis(ticks, labels, "score");
      groups.add(plot.group());
    }
    return new Chart(
        "scores",
        "Scores per model version",
        caption,
        Plot.svg(
            WIDTH,
            panel * perModel.size(),
            "score histograms",
            List.of(
                new String[] {"#74c476", belowLabel},
                new String[] {"#fd8d3c", atOrAboveLabel},
                new String[] {"#000", "threshold"}),
            groups.toArray(String[]::new)));
  }

  /** A chart with nothing to draw says so, in place of an empty plot. */
  private static Chart empty(String id, String title, String caption) {
    return new Chart(
        id,
        title,
        caption,
        "<svg class=\"chart empty\" xmlns=\"http://www.w3.org/2000/svg\" width=\""
            + WIDTH
            + "\" height=\"60\"><text x=\"20\" y=\"35\" font-size=\"14\" fill=\"#666\">nothing"
            + " to show: this run has no records for it</text></svg>");
  }

  private static long min(List<DecisionPoint> decisions, ToLongFunction<DecisionPoint> f) {
    return decisions.stream().mapToLong(f).min().orElse(0);
  }

  private static long max(List<DecisionPoint> decisions, ToLongFunction<DecisionPoint> f) {
    return decisions.stream().mapToLong(f).max().orElse(0);
  }
}
