package dev.tidemark.tools.report;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.tools.report.Charts.Chart;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * {@value #FILE_NAME}: one self-contained HTML page about a run, drawn from its file outputs. The
 * charts are inline SVG; the page loads nothing (no script, font, style sheet or image from
 * elsewhere), so it opens offline and can be mailed as one file.
 */
public final class RunReport {
  /** The page, beside {@code summary.json}. */
  public static final String FILE_NAME = "report.html";

  /** One line of the accounting identity: {@code left = right[0] + right[1] + ...}. */
  record Identity(String left, List<String> right) {}

  /** The accounting identity, in the order summary.json and {@code tidemark run} state it. */
  static final List<Identity> IDENTITY =
      List.of(
          new Identity("read", List.of("valid", "deadLetters")),
          new Identity("valid", List.of("unique", "duplicates")),
          new Identity("unique", List.of("windowed", "tooLate", "droppedByRunner")));

  private RunReport() {}

  /** Deletes the report and its settings from {@code directory}, if they are there. */
  public static void delete(Path directory) {
    for (String name : java.util.List.of(FILE_NAME, ReportSettings.FILE_NAME)) {
      try {
        java.nio.file.Files.deleteIfExists(directory.resolve(name));
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException("cannot delete old " + directory.resolve(name), e);
      }
    }
  }

  /**
   * Reads the outputs under {@code directory} and writes {@value #FILE_NAME} there; returns its
   * path. An {@link IllegalArgumentException} says what is missing when the directory holds no
   * run's file outputs.
   */
  public static Path write(Path directory, ReportSettings settings) {
    RunData data = RunData.load(directory);
    Path page = directory.resolve(FILE_NAME);
    Path partial = directory.resolve(FILE_NAME + ".tmp");
    try {
      Files.writeString(partial, html(data, settings), StandardCharsets.UTF_8);
      Files.move(
          partial,
          page,
          java.nio.file.StandardCopyOption.REPLACE_EXISTING,
          java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + page, e);
    }
    return page;
  }

  static String html(RunData data, ReportSettings settings) {
    List<Chart> charts =
        List.of(
            Charts.clocks(data.decisions),
            Charts.lateness(data.decisions, data.tooLate, settings.allowedLateness()),
            Charts.panes(data.decisions),
            Charts.corrections(data.decisions, data, settings),
            Charts.scores(
                data.decisions,
                settings.decisionThreshold(),
                data.atOrAboveLabel,
                data.belowLabel));
    StringBuilder page = new StringBuilder(64 * 1024);
    page.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
        .append("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';")
        .append(" style-src 'unsafe-inline'; img-src data:\">")
        .append("<title>Tidemark run report</title><style>")
        .append("body{font-family:system-ui,sans-serif;margin:24px auto;max-width:960px;")
        .append("color:#222}h1{font-size:22px}h2{font-size:17px;margin:28px 0 4px}")
        .append("p.caption{font-size:13px;color:#555;margin:2px 0 8px;max-width:920px}")
        .append("table{border-collapse:collapse;font-size:14px}")
        .append("td,th{border:1px solid #ccc;padding:4px 10px;text-align:right}")
        .append("th{background:#f4f4f4}td.equation{text-align:left;font-family:monospace}")
        .append("td.holds-yes{color:#1a7f37;font-weight:bold}")
        .append("td.holds-no{color:#c62828;font-weight:bold}")
        .append("figure{margin:0}dl{display:grid;grid-template-columns:max-content auto;")
        .append("gap:2px 14px;font-size:14px}dt{color:#555}dd{margin:0}")
        .append("</style></head><body>\n");
    page.append("<h1>Tidemark run report</h1>\n");
    page.append("<dl>")
        .append(term("outputs", data.directory.toString()))
        .append(term("events read", count(data.figure("read"))))
        .append(term("decisions", count(data.figure("decisions"))))
        .append(term("too late", count(data.figure("tooLate"))))
        .append(term("dead letters", count(data.figure("deadLetters"))))
        .append(term("duplicates", count(data.figure("duplicates"))))
        .append(term("allowed lateness", settings.allowedLateness().toString()))
        .append(term("accumulation", settings.accumulationMode()))
        .append(
            term(
                "wall time",
                String.format(Locale.ROOT, "%.1f s", data.figure("wallTimeMillis") / 1000.0)))
        .append("</dl>\n");
    page.append("<h2 id=\"identity-heading\">The accounting identity</h2>\n")
        .append("<p class=\"caption\">From summary.json: every record read is used, a")
        .append(" duplicate, too late or dead-lettered.</p>\n")
        .append(identityTable(data));
    JsonNode labels = data.summary.path("labels");
    if (labels.isObject()) {
      page.append("<h2 id=\"evaluation-heading\">Online evaluation per model version</h2>\n")
          .append("<p class=\"caption\">From summary.json: labels read ")
          .append(count(labels.path("read").asLong()))
          .append(", dead-lettered ")
          .append(count(labels.path("deadLetters").asLong()))
          .append(", repeated ")
          .append(count(labels.path("duplicates").asLong()))
          .append(", unmatched ")
          .append(
              count(labels.path("unmatched").asLong() + labels.path("withoutKeyOrTime").asLong()))
          .append("; each label judged by the decision in force for every window that held its")
          .append(" event (docs/labels.md). The rolling windows are in the evaluations")
          .append(" output.</p>\n")
          .append(evaluationTable(labels.path("byModel")));
    }
    page.append("<h2 id=\"drift-heading\">Drift alarms</h2>\n")
        .append("<p class=\"caption\" id=\"drift-count\">From summary.json: ")
        .append(count(data.summary.path("drift").path("alarms").asLong()))
        .append(" alarms, first at ")
        .append(Html.escape(data.summary.path("drift").path("firstAlarmTime").asText("none")))
        .append(". CUSUM tests per model version on the decisions' scores against the sidecar's")
        .append(" reference and on the labelled error rate (docs/labels.md); one row per alarm")
        .append(" of the drift output.</p>\n")
        .append(driftTable(data.driftAlarms));
    for (Chart chart : charts) {
      page.append("<h2>")
          .append(Html.escape(chart.title()))
          .append("</h2>\n<figure class=\"chart-figure\" id=\"chart-")
          .append(chart.id())
          .append("\"><p class=\"caption\">")
          .append(Html.escape(chart.caption()))
          .append("</p>\n")
          .append(chart.svg())
          .append("</figure>\n");
    }
    return page.append("</body></html>\n").toString();
  }

  /**
   * The identity as a table: each line's figures from summary.json, the sum of its right side and
   * whether it holds. Cells carry the summary.json key they show ({@code data-key}).
   */
  static String identityTable(RunData data) {
    StringBuilder table = new StringBuilder();
    table
        .append("<table id=\"identity\"><thead><tr><th>identity</th><th>left side</th>")
        .append("<th>right side</th><th>sum of the right side</th><th>holds</th></tr></thead>")
        .append("<tbody>\n");
    for (Identity line : IDENTITY) {
      long sum = 0;
      StringBuilder terms = new StringBuilder();
      for (String key : line.right()) {
        sum += data.figure(key);
        if (terms.length() > 0) {
          terms.append(" + ");
        }
        terms
            .append("<span class=\"term\" data-key=\"")
            .append(key)
            .append("\">")
            .append(count(data.figure(key)))
            .append("</span>");
      }
      boolean holds = data.figure(line.left()) == sum;
      table
          .append("<tr data-identity=\"")
          .append(line.left())
          .append("\"><td class=\"equation\">")
          .append(line.left())
          .append(" = ")
          .append(String.join(" + ", line.right()))
          .append("</td><td class=\"left\" data-key=\"")
          .append(line.left())
          .append("\">")
          .append(count(data.figure(line.left())))
          .append("</td><td class=\"right\">")
          .append(terms)
          .append("</td><td class=\"sum\">")
          .append(count(sum))
          .append("</td><td class=\"holds-")
          .append(holds ? "yes\">yes" : "no\">no")
          .append("</td></tr>\n");
    }
    boolean holds = data.summary.path("identityHolds").asBoolean(false);
    return table
        .append("</tbody></table>\n<p class=\"caption\" id=\"identity-holds\">summary.json")
        .append(" identityHolds: <b>")
        .append(holds)
        .append("</b></p>\n")
        .toString();
  }

  /** One row per model version and role: its judged decisions and the rates at its threshold. */
  static String evaluationTable(JsonNode byModel) {
    StringBuilder table =
        new StringBuilder(
            "<table id=\"evaluation\"><thead><tr><th>role</th><th>model</th><th>judged</th>"
                + "<th>positives</th><th>flagged</th><th>true positives</th><th>precision</th>"
                + "<th>recall</th><th>review rate</th></tr></thead><tbody>\n");
    byModel
        .fields()
        .forEachRemaining(
            role ->
                role.getValue()
                    .fields()
                    .forEachRemaining(
                        model -> {
                          JsonNode m = model.getValue();
                          table
                              .append("<tr data-model=\"")
                              .append(Html.escape(model.getKey()))
                              .append("\"><td>")
                              .append(Html.escape(role.getKey()))
                              .append("</td><td>")
                              .append(Html.escape(model.getKey()))
                              .append("</td><td>")
                              .append(count(m.path("labels").asLong()))
                              .append("</td><td>")
                              .append(count(m.path("positives").asLong()))
                              .append("</td><td>")
                              .append(count(m.path("flagged").asLong()))
                              .append("</td><td>")
                              .append(count(m.path("truePositives").asLong()))
                              .append("</td><td>")
                              .append(rate(m.path("precision")))
                              .append("</td><td>")
                              .append(rate(m.path("recall")))
                              .append("</td><td>")
                              .append(rate(m.path("reviewRate")))
                              .append("</td></tr>\n");
                        }));
    return table.append("</tbody></table>\n").toString();
  }

  /** One row per drift alarm, marked, in time order; a single row saying so when there are none. */
  static String driftTable(List<JsonNode> alarms) {
    StringBuilder table =
        new StringBuilder(
            "<table id=\"drift\"><thead><tr><th></th><th>at</th><th>role</th><th>model</th>"
                + "<th>test</th><th>statistic / threshold</th><th>observations</th>"
                + "<th>reference mean</th><th>observed mean</th></tr></thead><tbody>\n");
    if (alarms.isEmpty()) {
      table.append("<tr class=\"no-drift\"><td colspan=\"9\">no drift alarm</td></tr>\n");
    }
    for (JsonNode alarm : alarms) {
      JsonNode model = alarm.path("model");
      String name = model.path("name").asText() + ":" + model.path("version").asText();
      table
          .append("<tr class=\"drift-alarm\" data-model=\"")
          .append(Html.escape(name))
          .append("\" data-kind=\"")
          .append(Html.escape(alarm.path("kind").asText()))
          .append("\"><td class=\"holds-no\">&#9650; alarm</td><td>")
          .append(Html.escape(alarm.path("at").asText()))
          .append("</td><td>")
          .append(Html.escape(model.path("role").asText()))
          .append("</td><td>")
          .append(Html.escape(name))
          .append("</td><td>")
          .append(Html.escape(alarm.path("kind").asText() + " " + alarm.path("direction").asText()))
          .append("</td><td>")
          .append(
              String.format(
                  Locale.ROOT,
                  "%.2f / %.2f",
                  alarm.path("statistic").asDouble(),
                  alarm.path("threshold").asDouble()))
          .append("</td><td>")
          .append(count(alarm.path("observations").asLong()))
          .append("</td><td>")
          .append(String.format(Locale.ROOT, "%.4f", alarm.path("referenceMean").asDouble()))
          .append("</td><td>")
          .append(String.format(Locale.ROOT, "%.4f", alarm.path("observedMean").asDouble()))
          .append("</td></tr>\n");
    }
    return table.append("</tbody></table>\n").toString();
  }

  private static String rate(JsonNode value) {
    return value.isNumber() ? String.format(Locale.ROOT, "%.3f", value.asDouble()) : "n/a";
  }

  private static String term(String name, String value) {
    return "<dt>" + Html.escape(name) + "</dt><dd>" + Html.escape(value) + "</dd>";
  }

  private static String count(long n) {
    return String.format(Locale.ROOT, "%,d", n);
  }
}
