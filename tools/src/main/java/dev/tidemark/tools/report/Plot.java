package dev.tidemark.tools.report;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One plotting area of an SVG chart: linear scales from data to pixels, axes with ticks, and the
 * marks. Every mark carries {@code class="mark"}, so a browser test finds what was drawn. The plot
 * writes an SVG group; {@link #svg} wraps groups into the chart's {@code <svg>} element.
 */
final class Plot {
  static final int LEFT = 78;
  static final int RIGHT = 16;
  static final int TOP = 24;
  static final int BOTTOM = 36;

  private final int width;
  private final int height;
  private final int offsetY;
  private double x0 = 0;
  private double x1 = 1;
  private double y0 = 0;
  private double y1 = 1;
  private final StringBuilder marks = new StringBuilder();
  private final StringBuilder axes = new StringBuilder();

  /** A plot {@code width} by {@code height} pixels, {@code offsetY} below the chart's top. */
  Plot(int width, int height, int offsetY) {
    this.width = width;
    this.height = height;
    this.offsetY = offsetY;
  }

  Plot x(double from, double to) {
    this.x0 = from;
    this.x1 = to > from ? to : from + 1;
    return this;
  }

  Plot y(double from, double to) {
    this.y0 = from;
    this.y1 = to > from ? to : from + 1;
    return this;
  }

  double px(double x) {
    return LEFT + (x - x0) / (x1 - x0) * (width - LEFT - RIGHT);
  }

  double py(double y) {
    return height - BOTTOM - (y - y0) / (y1 - y0) * (height - TOP - BOTTOM);
  }

  /** A filled rectangle between data coordinates; nothing when it would have no area. */
  Plot rect(double xa, double xb, double ya, double yb, String fill, double opacity, String title) {
    double left = px(Math.min(xa, xb));
    double right = px(Math.max(xa, xb));
    double top = py(Math.max(ya, yb));
    double bottom = py(Math.min(ya, yb));
    if (right - left <= 0 || bottom - top <= 0) {
      return this;
    }
    marks.append(
        String.format(
            Locale.ROOT,
            "<rect class=\"mark\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\""
                + " fill=\"%s\"%s>",
            left,
            top,
            Math.max(0.6, right - left),
            bottom - top,
            fill,
            opacity < 1 ? String.format(Locale.ROOT, " fill-opacity=\"%.2f\"", opacity) : ""));
    if (title != null) {
      marks.append("<title>").append(Html.escape(title)).append("</title>");
    }
    marks.append("</rect>");
    return this;
  }

  /** A vertical dashed marker at {@code x} with a label, on the side with room for it. */
  Plot markerX(double x, String color, String label) {
    double at = px(x);
    boolean left = at > width - RIGHT - 8 * label.length();
    axes.append(
        String.format(
            Locale.ROOT,
            "<line class=\"marker\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%.1f\" stroke=\"%s\""
                + " stroke-width=\"2\" stroke-dasharray=\"6 4\"/>"
                + "<text x=\"%.1f\" y=\"%d\" fill=\"%s\" font-size=\"11\" text-anchor=\"%s\">%s"
                + "</text>",
            at,
            at,
            TOP,
            py(y0),
            color,
            left ? at - 4 : at + 4,
            TOP + 10,
            color,
            left ? "end" : "start",
            Html.escape(label)));
    return this;
  }

  /** A panel's title, above its plotting area. */
  Plot note(String text) {
    axes.append(
        String.format(
            Locale.ROOT,
            "<text x=\"%d\" y=\"%d\" font-size=\"12\" font-weight=\"bold\" fill=\"#333\">%s</text>",
            LEFT,
            TOP - 8,
            Html.escape(text)));
    return this;
  }

  /** The x axis with ticks at {@code ticks} (data values) labelled by {@code labels}. */
  Plot xAxis(List<Double> ticks, List<String> labels, String title) {
    double base = py(y0);
    axes.append(line(LEFT, base, width - RIGHT, base));
    for (int i = 0; i < ticks.size(); i++) {
      double at = px(ticks.get(i));
      axes.append(line(at, base, at, base + 4));
      axes.append(
          String.format(
              Locale.ROOT,
              "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\""
                  + " fill=\"#444\">%s</text>",
              at,
              base + 15,
              Html.escape(labels.get(i))));
    }
    axes.append(
        String.format(
            Locale.ROOT,
            "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\" fill=\"#444\">%s</text>",
            width - RIGHT,
            height - 4,
            Html.escape(title)));
    return this;
  }

  /** The y axis with ticks at {@code ticks} labelled by {@code labels}, and light grid lines. */
  Plot yAxis(List<Double> ticks, List<String> labels, String title) {
    axes.append(line(LEFT, TOP, LEFT, py(y0)));
    for (int i = 0; i < ticks.size(); i++) {
      double at = py(ticks.get(i));
      axes.append(
          String.format(
              Locale.ROOT,
              "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>",
              LEFT,
              width - RIGHT,
              at,
              at));
      axes.append(
          String.format(
              Locale.ROOT,
              "<text x=\"%d\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\" fill=\"#444\">%s"
                  + "</text>",
              LEFT - 5,
              at + 3,
              Html.escape(labels.get(i))));
    }
    axes.append(
        String.format(
            Locale.ROOT,
            "<text x=\"12\" y=\"%.1f\" font-size=\"11\" fill=\"#444\" text-anchor=\"middle\""
                + " transform=\"rotate(-90 12 %.1f)\">%s</text>",
            (TOP + py(y0)) / 2,
            (TOP + py(y0)) / 2,
            Html.escape(title)));
    return this;
  }

  /** A linear count axis from zero, with about five round ticks. */
  Plot countAxis(double max, String title) {
    double step = niceStep(Math.max(1, max) / 5);
    double top = Math.max(step, Math.ceil(Math.max(1, max) / step) * step);
    y(0, top);
    List<Double> ticks = new ArrayList<>();
    List<String> labels = new ArrayList<>();
    for (double t = 0; t <= top + step / 2; t += step) {
      ticks.add(t);
      labels.add(String.format(Locale.ROOT, "%,d", (long) t));
    }
    return yAxis(ticks, labels, title);
  }

  /**
   * A logarithmic count axis: data values are {@code log10(1 + count)}, ticks at 0, 1, 10, 100 and
   * so on up to {@code max}. Few and many show side by side (a handful of too-late records beside
   * thousands of events, the tail of a score distribution).
   */
  Plot logCountAxis(long max, String title) {
    double top = Math.max(1, Math.ceil(Math.log10(max + 1.0)));
    y(0, top);
    List<Double> ticks = new ArrayList<>();
    List<String> labels = new ArrayList<>();
    for (int p = 0; p <= top; p++) {
      long count = p == 0 ? 0 : (long) Math.pow(10, p);
      ticks.add(Math.log10(count + 1.0));
      labels.add(String.format(Locale.ROOT, "%,d", count));
    }
    return yAxis(ticks, labels, title);
  }

  /** A count as a value of {@link #logCountAxis}. */
  static double log(long count) {
    return Math.log10(count + 1.0);
  }

  /** The group of this plot, to place in a chart. */
  String group() {
    return "<g transform=\"translate(0," + offsetY + ")\">" + axes + marks + "</g>";
  }

  /** An {@code <svg>} chart of the given groups, with a legend of (colour, label) pairs. */
  static String svg(int width, int height, String label, List<String[]> legend, String... groups) {
    StringBuilder svg = new StringBuilder();
    svg.append(
        String.format(
            Locale.ROOT,
            "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
                + " viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\">",
            width,
            height + (legend.isEmpty() ? 0 : 22),
            width,
            height + (legend.isEmpty() ? 0 : 22),
            Html.escape(label)));
    svg.append("<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>");
    for (String group : groups) {
      svg.append(group);
    }
    double x = LEFT;
    for (String[] entry : legend) {
      svg.append(
          String.format(
              Locale.ROOT,
              "<rect x=\"%.1f\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                  + "<text x=\"%.1f\" y=\"%d\" font-size=\"12\" fill=\"#333\">%s</text>",
              x,
              height + 5,
              entry[0],
              x + 16,
              height + 15,
              Html.escape(entry[1])));
      x += 30 + entry[1].length() * 7;
    }
    return svg.append("</svg>").toString();
  }

  private static String line(double xa, double ya, double xb, double yb) {
    return String.format(
        Locale.ROOT,
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>",
        xa,
        ya,
        xb,
        yb);
  }

  /** 1, 2 or 5 times a power of ten, at least {@code raw}. */
  static double niceStep(double raw) {
    double power = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-9))));
    for (double m : new double[] {1, 2, 5, 10}) {
      if (m * power >= raw) {
        return m * power;
      }
    }
    return 10 * power;
  }

  private static final long SECOND = 1000;
  private static final long MINUTE = 60 * SECOND;
  private static final long HOUR = 60 * MINUTE;
  private static final long DAY = 24 * HOUR;
  private static final long[] TIME_STEPS = {
    SECOND, 5 * SECOND, 10 * SECOND, 30 * SECOND, MINUTE, 5 * MINUTE, 10 * MINUTE, 30 * MINUTE,
    HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 7 * DAY, 30 * DAY, 365 * DAY
  };

  /** Round UTC ticks between two epoch milliseconds, at most about {@code count} of them. */
  static List<Double> timeTicks(long from, long to, int count) {
    long span = Math.max(1, to - from);
    long step = TIME_STEPS[TIME_STEPS.length - 1];
    for (long candidate : TIME_STEPS) {
      if (span / candidate <= count) {
        step = candidate;
        break;
      }
    }
    List<Double> ticks = new ArrayList<>();
    for (long t = Math.floorDiv(from + step - 1, step) * step; t <= to; t += step) {
      ticks.add((double) t);
    }
    return ticks;
  }

  /** Labels of time ticks: the time of day, with the date when the span covers days. */
  static List<String> timeLabels(List<Double> ticks, long from, long to) {
    DateTimeFormatter format =
        DateTimeFormatter.ofPattern(
                to - from >= DAY
                    ? "MM-dd HH:mm"
                    : ticks.size() > 1 && ticks.get(1) - ticks.get(0) < MINUTE
                        ? "HH:mm:ss"
                        : "HH:mm",
                Locale.ROOT)
            .withZone(ZoneOffset.UTC);
    List<String> labels = new ArrayList<>();
    for (double t : ticks) {
      labels.add(format.format(Instant.ofEpochMilli((long) t)));
    }
    return labels;
  }

  /** The UTC date of an epoch millisecond, for an axis title. */
  static String date(long millis) {
    return DateTimeFormatter.ISO_LOCAL_DATE
        .withZone(ZoneOffset.UTC)
        .format(Instant.ofEpochMilli(millis));
  }
}
