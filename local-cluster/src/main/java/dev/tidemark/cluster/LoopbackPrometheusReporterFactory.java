package dev.tidemark.cluster;

import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.exporter.HTTPServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.util.Properties;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.prometheus.AbstractPrometheusReporter;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

/**
 * Flink's Prometheus reporter, listening on one address instead of all of them: Flink 1.19's {@code
 * PrometheusReporter} binds its HTTP server to the wildcard address and has no option for the host,
 * and the local cluster's servers listen on 127.0.0.1 only. The metrics, their names and labels are
 * Flink's own ({@link AbstractPrometheusReporter}); only the server differs.
 *
 * <p>Configured as {@code metrics.reporter.prom.factory.class}, with {@code
 * metrics.reporter.prom.host} (default 127.0.0.1) and {@code metrics.reporter.prom.port} (one
 * port).
 *
 * <p>A shim: the reporter's collector registry is a package-private field of {@link
 * AbstractPrometheusReporter}, read here by reflection. {@code LocalClusterIT} scrapes a
 * TaskManager through it, so an upgrade that renames the field fails that test.
 */
public final class LoopbackPrometheusReporterFactory implements MetricReporterFactory {
  static final String HOST = "host";
  static final String PORT = "port";

  @Override
  public MetricReporter createMetricReporter(Properties properties) {
    String host = properties.getProperty(HOST, ClusterSettings.HOST);
    String port = properties.getProperty(PORT);
    if (port == null) {
      throw new IllegalArgumentException(
          "set metrics.reporter.<name>." + PORT + " for " + getClass().getName());
    }
    return new LoopbackPrometheusReporter(host, Integer.parseInt(port.trim()));
  }

  /** Flink's Prometheus metrics, served on {@code host:port}. */
  static final class LoopbackPrometheusReporter extends AbstractPrometheusReporter {
    private final String host;
    private final int port;
    private HTTPServer server;

    LoopbackPrometheusReporter(String host, int port) {
      this.host = host;
      this.port = port;
    }

    @Override
    public void open(MetricConfig config) {
      super.open(config);
      try {
        server = new HTTPServer(new InetSocketAddress(host, port), registry(), true);
      } catch (IOException e) {
        throw new UncheckedIOException(
            "cannot serve Prometheus metrics on " + host + ":" + port, e);
      }
      log.info("Serving Prometheus metrics on http://{}:{}/metrics", host, port);
    }

    @Override
    public void close() {
      if (server != null) {
        server.stop();
      }
      super.close();
    }

    private CollectorRegistry registry() {
      try {
        Field field = AbstractPrometheusReporter.class.getDeclaredField("registry");
        field.setAccessible(true);
        return (CollectorRegistry) field.get(this);
      } catch (ReflectiveOperationException | RuntimeException e) {
        throw new IllegalStateException(
            "this Flink's AbstractPrometheusReporter has no field 'registry' of type"
                + " CollectorRegistry; update "
                + LoopbackPrometheusReporterFactory.class.getName(),
            e);
      }
    }
  }
}
