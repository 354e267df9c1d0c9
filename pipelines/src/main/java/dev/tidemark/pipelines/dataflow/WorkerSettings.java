package dev.tidemark.pipelines.dataflow;

import org.apache.beam.sdk.harness.JvmInitializer;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * Worker JVM settings on runners whose workers Tidemark does not launch (Dataflow's SDK harness):
 * DJL stays offline and untracked, as {@code ./tidemark} and the tests run it. Registered in {@code
 * META-INF/services/org.apache.beam.sdk.harness.JvmInitializer}; Beam calls it when a worker JVM
 * starts, before any DoFn is set up.
 */
public final class WorkerSettings implements JvmInitializer {
  @Override
  public void onStartup() {
    setIfAbsent("ai.djl.offline", "true");
    // DJL reads OPT_OUT_TRACKING from the environment or, failing that, the system properties.
    setIfAbsent("OPT_OUT_TRACKING", "true");
  }

  @Override
  public void beforeProcessing(PipelineOptions options) {}

  private static void setIfAbsent(String key, String value) {
    if (System.getProperty(key) == null) {
      System.setProperty(key, value);
    }
  }
}
