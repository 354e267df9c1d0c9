package dev.tidemark.bench.suite;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Tuning experiments: {@code -Dtidemark.bench.pipelineArgs="--fasterCopy=true
 * --maxBundleTimeMills=20"} (or the same in {@code TIDEMARK_BENCH_PIPELINE_ARGS}) adds or overrides
 * pipeline options of every Beam job the suite runs (Tidemark and the Beam baselines alike; the
 * native Flink job has no pipeline options), so that a setting can be measured before it becomes a
 * default.
 */
public final class ExtraPipelineArgs {
  /** The system property holding the extra options, separated by white space. */
  public static final String PROPERTY = "tidemark.bench.pipelineArgs";

  /**
   * The environment variable read when the property is not set: {@code ./tidemark} splits {@code
   * TIDEMARK_JAVA_OPTS} at spaces, so several options are easier to pass this way.
   */
  public static final String ENV = "TIDEMARK_BENCH_PIPELINE_ARGS";

  private ExtraPipelineArgs() {}

  /**
   * {@code args} with the property's options: an option the property names replaces every {@code
   * --name=...} of the same name in {@code args} (Beam rejects a repeated scalar option), the
   * others are appended.
   */
  public static String[] append(List<String> args) {
    String extra = System.getProperty(PROPERTY);
    return merge(args, extra != null ? extra : System.getenv().getOrDefault(ENV, ""));
  }

  static String[] merge(List<String> args, String extra) {
    List<String> overrides = extra.isBlank() ? List.of() : List.of(extra.trim().split("\\s+"));
    Set<String> names = overrides.stream().map(ExtraPipelineArgs::name).collect(Collectors.toSet());
    List<String> all = new ArrayList<>();
    for (String arg : args) {
      if (!names.contains(name(arg))) {
        all.add(arg);
      }
    }
    all.addAll(overrides);
    return all.toArray(new String[0]);
  }

  /** The option name of {@code --name=value} or {@code --name}. */
  private static String name(String arg) {
    int eq = arg.indexOf('=');
    return eq < 0 ? arg : arg.substring(0, eq);
  }
}
