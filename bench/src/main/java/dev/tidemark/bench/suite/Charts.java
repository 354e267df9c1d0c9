package dev.tidemark.bench.suite;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The suite's PNG charts: one line chart per chart name in {@link BenchResults#series()}, written
 * as {@code <name>.png} next to {@code latest.json}. The x axis is logarithmic when the x values
 * are all positive and span more than {@value #LOG_AXIS_SPAN} (two decades). Rendering is headless.
 */
public final class Charts {
  public static final int WIDTH = 900;
  public static final int HEIGHT = 560;

  /** Largest x over smallest x beyond which the x axis is logarithmic. */
  public static final double LOG_AXIS_SPAN = 100;

  /** Title, x axis and y axis of a chart. */
  static final class Labels {
    final String title;
    final String x;
    final String y;

    Labels(String title, String x, String y) {
      this.title = title;
      this.x = x;
      this.y = y;
    }
  }

  /** The charts the suite's parts draw; any other name gets {@link #labels(String)}'s fallback. */
  private static final Map<String, Labels> KNOWN = new LinkedHashMap<>();

  static {
    System.setProperty("java.awt.headless", "true");
    KNOWN.put(
        "throughput-vs-parallelism",
        new Labels("Throughput vs parallelism", "parallelism", "events/s"));
    KNOWN.put(
        "throughput-vs-accounts", new Labels("Throughput vs accounts", "accounts", "events/s"));
    KNOWN.put("heap-vs-accounts", new Labels("Heap vs accounts", "accounts", "heap used (MiB)"));
    KNOWN.put(
        "throughput-vs-fanout",
        new Labels(
            "Throughput vs window fan-out", "windows per event (size / period)", "events/s"));
    KNOWN.put(
        "heap-over-time", new Labels("Heap over time", "event time (hours)", "heap used (MiB)"));
    KNOWN.put(
        "dedup-state-over-time",
        new Labels(
            "Dedup state over time",
            "event time (hours)",
            "checkpointed state (MiB), live keys (10k)"));
    KNOWN.put(
        "scoring-vs-batch",
        new Labels("Scoring throughput vs batch size", "rows per engine call", "rows/s"));
    KNOWN.put(
        "kafka-sink-visible-latency-cdf",
        new Labels(
            "Latency CDF, Kafka record to decision visible to a read_committed consumer",
            "latency (ms)",
            "fraction of decisions at or below"));
    KNOWN.put(
        "latency-cdf",
        new Labels(
            "Latency CDF, Kafka record to decision record",
            "latency (ms)",
            "fraction of decisions at or below"));
  }

  private Charts() {}

  /** Writes one PNG per chart name into {@code directory}; returns the files in series order. */
  public static List<Path> write(BenchResults results, Path directory) throws IOException {
    Map<String, List<BenchResults.Series>> byChart = new LinkedHashMap<>();
    for (BenchResults.Series series : results.series()) {
      byChart.computeIfAbsent(series.chart, c -> new ArrayList<>()).add(series);
    }
    Files.createDirectories(directory);
    List<Path> files = new ArrayList<>();
    for (Map.Entry<String, List<BenchResults.Series>> chart : byChart.entrySet()) {
      Path file = directory.resolve(fileName(chart.getKey()));
      ChartUtils.saveChartAsPNG(
          file.toFile(), chart(chart.getKey(), chart.getValue(), results.profile()), WIDTH, HEIGHT);
      files.add(file);
    }
    return files;
  }

  /** {@code <name>.png}, with anything but letters, digits, '-' and '_' replaced by '_'. */
  static String fileName(String chart) {
    return chart.replaceAll("[^A-Za-z0-9_-]", "_") + ".png";
  }

  /** The chart of one name: a line per series, points in the order they were added. */
  static JFreeChart chart(String name, List<BenchResults.Series> series, BenchProfile profile) {
    XYSeriesCollection dataset = new XYSeriesCollection();
    for (BenchResults.Series s : series) {
      XYSeries line = new XYSeries(s.label, false, true);
      for (double[] p : s.points) {
        if (Double.isFinite(p[0]) && Double.isFinite(p[1])) {
          line.add(p[0], p[1]);
        }
      }
      dataset.addSeries(line);
    }
    Labels labels = labels(name);
    JFreeChart chart =
        ChartFactory.createXYLineChart(
            labels.title + " (profile " + profile + ")",
            labels.x,
            labels.y,
            dataset,
            PlotOrientation.VERTICAL,
            true,
            false,
            false);
    XYPlot plot = chart.getXYPlot();
    plot.setBackgroundPaint(Color.WHITE);
    plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
    plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
    if (useLogAxis(series)) {
      LogAxis x = new LogAxis(labels.x + " (log scale)");
      x.setBase(10);
      x.setSmallestValue(1e-9);
      plot.setDomainAxis(x);
    } else {
      ((NumberAxis) plot.getDomainAxis()).setAutoRangeIncludesZero(false);
    }
    XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
    for (int i = 0; i < series.size(); i++) {
      renderer.setSeriesStroke(i, new BasicStroke(2f));
      renderer.setSeriesShapesVisible(i, series.get(i).points.size() <= 30);
    }
    plot.setRenderer(renderer);
    return chart;
  }

  /** Known labels, or the chart name as title over plain "x" and "y". */
  static Labels labels(String name) {
    Labels known = KNOWN.get(name);
    if (known != null) {
      return known;
    }
    String title = name.replace('-', ' ');
    title =
        title.isEmpty()
            ? "chart"
            : title.substring(0, 1).toUpperCase(Locale.ROOT) + title.substring(1);
    return new Labels(title, "x", "y");
  }

  /**
   * Whether the x axis is logarithmic: every finite x is positive and the largest is more than
   * {@value #LOG_AXIS_SPAN} times the smallest.
   */
  static boolean useLogAxis(List<BenchResults.Series> series) {
    double min = Double.POSITIVE_INFINITY;
    double max = Double.NEGATIVE_INFINITY;
    for (BenchResults.Series s : series) {
      for (double[] p : s.points) {
        if (Double.isFinite(p[0])) {
          min = Math.min(min, p[0]);
          max = Math.max(max, p[0]);
        }
      }
    }
    return min > 0 && max / min > LOG_AXIS_SPAN;
  }
}
