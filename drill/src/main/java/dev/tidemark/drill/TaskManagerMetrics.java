package dev.tidemark.drill;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Tidemark's metrics as operators see them: scraped from the TaskManagers' Prometheus endpoints,
 * where the Flink reporter publishes every Beam metric of a running job as a gauge named {@code
 * flink_taskmanager_job_task_operator_<namespace>_<name>}, one series per operator instance. Values
 * count the current attempt of the job only (Flink's metrics restart with a restarted job).
 */
final class TaskManagerMetrics {
  /** The prefix of operator metrics in the Prometheus reporter's names. */
  static final String OPERATOR_PREFIX = "flink_taskmanager_job_task_operator_";

  /** Tidemark's namespaces: its counters and the scoring step's (Beam's RunInference names). */
  static final List<String> NAMESPACES = List.of("tidemark_", "BeamML_ScoreFeatures_");

  private static final Pattern SAMPLE =
      Pattern.compile("^([A-Za-z_:][A-Za-z0-9_:]*)\\{([^}]*)\\}\\s+(\\S+)$");

  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private TaskManagerMetrics() {}

  /**
   * Scrapes {@code http://127.0.0.1:PORT/metrics} of each port and sums, per metric (without the
   * operator prefix, e.g. {@code tidemark_read}), the samples of job {@code jobId}.
   */
  static Map<String, Double> scrape(List<Integer> ports, String jobId)
      throws IOException, InterruptedException {
    Map<String, Double> sums = new TreeMap<>();
    for (int port : ports) {
      sums(exposition(port), jobId).forEach((name, value) -> sums.merge(name, value, Double::sum));
    }
    return sums;
  }

  /** The text exposition of the Prometheus endpoint {@code http://127.0.0.1:PORT/metrics}. */
  static String exposition(int port) throws IOException, InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
            .timeout(Duration.ofSeconds(10))
            .build();
    return HTTP.send(request, HttpResponse.BodyHandlers.ofString()).body();
  }

  /** The sums of one endpoint's text exposition; see {@link #scrape}. */
  static Map<String, Double> sums(String exposition, String jobId) {
    Map<String, Double> sums = new TreeMap<>();
    for (String line : exposition.split("\n")) {
      Matcher sample = SAMPLE.matcher(line.trim());
      if (!sample.matches()
          || !sample.group(1).startsWith(OPERATOR_PREFIX)
          || !sample.group(2).contains("job_id=\"" + jobId + "\"")) {
        continue;
      }
      String name = sample.group(1).substring(OPERATOR_PREFIX.length());
      if (NAMESPACES.stream().anyMatch(name::startsWith)) {
        sums.merge(name, Double.parseDouble(sample.group(3)), Double::sum);
      }
    }
    return sums;
  }
}
