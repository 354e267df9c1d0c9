/**
 * The run report: {@code report.html}, one self-contained page drawn from a run's file outputs.
 *
 * <p>Data flows one way: {@link dev.tidemark.tools.report.RunData} reads {@code summary.json}, the
 * NDJSON outputs and {@link dev.tidemark.tools.report.ReportSettings}; {@link
 * dev.tidemark.tools.report.Charts} turns the data into inline SVG; {@link
 * dev.tidemark.tools.report.RunReport} lays the charts and the accounting identity out as HTML and
 * writes the page. {@code tidemark run} (with {@code --sink=files}) and {@code tidemark report}
 * both go through {@link dev.tidemark.tools.report.RunReport#write}.
 */
package dev.tidemark.tools.report;
