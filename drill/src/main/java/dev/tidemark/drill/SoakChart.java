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
 * soak.png: the soak's samples over time, one panel each for the TaskManagers' heap, the RocksDB
 * state (the latest checkpoint's full size), the checkpoint duration and the input not yet
 * committed, with a line where the second half starts. Rendered headless.
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
    plot.add(panel(samples, "heap used (MiB)", s -> s.heapBytes() / Soak.MIB, end, Color.BLUE));
    plot.add(panel(samples, "RocksDB state (MiB)", s -> s.stateBytes() / Soak.MIB, end, Color.RED));
    plot.add(
        panel(
            samples,
            "checkpoint duration (s)",
            s -> s.checkpointMillis() / 1000,
            end,
            new Color(0, 128, 0)));
    plot.add(panel(samples, "records behind", s -> s.lagRecords(), end, Color.DARK_GRAY));
    JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, false);
    chart.setBackgroundPaint(Color.WHITE);
    ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH, HEIGHT);
    return file;
  }

  private static XYPlot panel(
      List<Soak.Sample> samples,
      String label,
      ToDoubleFunction<Soak.Sample> value,
      double endMinutes,
      Color color) {
    XYSeries series = new XYSeries(label);
    for (Soak.Sample sample : samples) {
      double v = value.applyAsDouble(sample);
      if (v >= 0) {
        series.add(sample.atSeconds() / 60, v);
      }
    }
    NumberAxis axis = new NumberAxis(label);
    axis.setAutoRangeIncludesZero(true);
    XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, false);
    renderer.setSeriesPaint(0, color);
    renderer.setSeriesStroke(0, new BasicStroke(1.5f));
    XYPlot panel = new XYPlot(new XYSeriesCollection(series), null, axis, renderer);
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
