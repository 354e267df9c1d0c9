package dev.tidemark.drill;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.function.ToDoubleFunction;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * soak.png: the soak's samples over time, one panel each for the TaskManagers' heap (in use, and
 * after each minute's full collection), the RocksDB state (its live data, and the latest
 * checkpoint's full size), the checkpoint duration and the input not yet committed, with a line
 * where the second half starts. Rendered headless.
 */
final class SoakChart {
  static final int WIDTH = 900;
  static final int HEIGHT = 900;

  private SoakChart() {}

  static Path write(List<Soak.Sample> samples, String title, Path file) throws IOException {
    System.setProperty("java.awt.headless", "true");
    NumberAxis minutes = new NumberAxis("minutes since the soak's feed started");
    CombinedDomainXYPlot plot = new CombinedDomainXYPlot(minutes);
    plot.setGap(12);
    double end = samples.isEmpty() ? 0 : samples.get(samples.size() - 1).atSeconds() / 60;
    plot.add(
        panel(
            samples,
            "heap (MiB)",
            end,
            new Line("in use", s -> s.heapBytes() / Soak.MIB, Color.LIGHT_GRAY),
            new Line("after a full GC", s -> s.heapAfterGcBytes() / Soak.MIB, Color.BLUE)));
    plot.add(
        panel(
            samples,
            "RocksDB state (MiB)",
            end,
            new Line("live data", s -> s.stateBytes() / Soak.MIB, Color.RED),
            new Line("checkpoint", s -> s.checkpointBytes() / Soak.MIB, Color.ORANGE)));
    plot.add(
        panel(
            samples,
            "checkpoint duration (s)",
            end,
            new Line("duration", s -> s.checkpointMillis() / 1000, new Color(0, 128, 0))));
    plot.add(
        panel(
            samples,
            "records behind",
            end,
            new Line("records behind", s -> s.lagRecords(), Color.DARK_GRAY)));
    JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
    chart.setBackgroundPaint(Color.WHITE);
    ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH, HEIGHT);
    return file;
  }

  /** One series of a panel: negative values (not measured) are left out. */
  private record Line(String label, ToDoubleFunction<Soak.Sample> value, Color color) {}

  private static XYPlot panel(
      List<Soak.Sample> samples, String label, double endMinutes, Line... lines) {
    XYSeriesCollection data = new XYSeriesCollection();
    XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, false);
    for (Line line : lines) {
      XYSeries series = new XYSeries(line.label());
      for (Soak.Sample sample : samples) {
        double v = line.value().applyAsDouble(sample);
        if (v >= 0) {
          series.add(sample.atSeconds() / 60, v);
        }
      }
      renderer.setSeriesPaint(data.getSeriesCount(), line.color());
      renderer.setSeriesStroke(data.getSeriesCount(), new BasicStroke(1.5f));
      data.addSeries(series);
    }
    NumberAxis axis = new NumberAxis(label);
    axis.setAutoRangeIncludesZero(true);
    XYPlot panel = new XYPlot(data, null, axis, renderer);
    panel.setBackgroundPaint(Color.WHITE);
    panel.setDomainGridlinePaint(Color.LIGHT_GRAY);
    panel.setRangeGridlinePaint(Color.LIGHT_GRAY);
    ValueMarker half = new ValueMarker(endMinutes / 2);
    half.setPaint(Color.GRAY);
    half.setStroke(
        new BasicStroke(
            1f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 4f, new float[] {4f}, 0f));
    panel.addDomainMarker(half);
    return panel;
  }
}
