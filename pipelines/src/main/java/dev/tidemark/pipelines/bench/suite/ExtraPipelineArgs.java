package dev.tidemark.pipelines.bench.suite;

import java.util.ArrayList;
import java.util.List;

/**
 * Tuning experiments: {@code -Dtidemark.bench.pipelineArgs="--fasterCopy=true
 * --maxBundleTimeMills=20"} adds pipeline options to every Beam job the suite runs (Tidemark and
 * the Beam baselines alike; the native Flink job has no pipeline options), so that a setting can be
 * measured before it becomes a default.
 */
public final class ExtraPipelineArgs {
  /** The system property holding the extra options, separated by white space. */
  public static final String PROPERTY = "tidemark.bench.pipelineArgs";

  private ExtraPipelineArgs() {}

  /** {@code args} followed by the property's options (later options win). */
  public static String[] append(List<String> args) {
    List<String> all = new ArrayList<>(args);
    String extra = System.getProperty(PROPERTY, "").trim();
    if (!extra.isEmpty()) {
      all.addAll(List.of(extra.split("\\s+")));
    }
    return all.toArray(new String[0]);
  }
}
