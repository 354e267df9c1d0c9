package dev.tidemark.pipelines.bench.suite;

import dev.tidemark.pipelines.bench.beam.BuildingBlocksPart;
import dev.tidemark.pipelines.bench.beam.DedupStatePart;
import dev.tidemark.pipelines.bench.beam.ScalingPart;
import dev.tidemark.pipelines.bench.flink.FlinkBaselinePart;
import dev.tidemark.pipelines.bench.latency.LatencyPart;
import java.io.PrintStream;
import java.net.URLConnection;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The benchmark suite ({@code ./tidemark bench --profile=small|full}): runs every {@link BenchPart}
 * in turn, prints one table, writes {@code bench-results/latest.json} and the PNG charts next to
 * it. A part that fails is noted and its figures stay null; the suite still writes its results.
 */
public final class BenchSuite {
  /** How a part that threw is noted (its figures stay null). */
  static final String FAILED = "failed, its figures are null: ";

  private final List<BenchPart> parts;

  public BenchSuite(List<BenchPart> parts) {
    this.parts = List.copyOf(parts);
  }

  /** The parts of the published suite, in running order. */
  public static List<BenchPart> defaultParts() {
    List<BenchPart> parts = new ArrayList<>();
    parts.add(new FlinkBaselinePart());
    parts.add(new BuildingBlocksPart());
    parts.add(new ScalingPart());
    parts.add(new DedupStatePart());
    parts.add(new LatencyPart());
    return parts;
  }

  /**
   * The published parts named in {@code names}, in running order; all of them when {@code names} is
   * empty.
   *
   * @throws IllegalArgumentException naming the unknown part and the known ones
   */
  public static List<BenchPart> selectParts(List<String> names) {
    List<BenchPart> all = defaultParts();
    if (names.isEmpty()) {
      return all;
    }
    List<String> known = new ArrayList<>();
    all.forEach(part -> known.add(part.name()));
    for (String name : names) {
      if (!known.contains(name)) {
        throw new IllegalArgumentException(
            "--parts: unknown part '" + name + "'; the parts are " + String.join(", ", known));
      }
    }
    List<BenchPart> selected = new ArrayList<>();
    for (BenchPart part : all) {
      if (names.contains(part.name())) {
        selected.add(part);
      }
    }
    return selected;
  }

  /** Runs the parts and writes {@code latest.json} and the charts under {@code outputDirectory}. */
  public BenchResults run(BenchProfile profile, Path outputDirectory, PrintStream out)
      throws Exception {
    unshareJarFiles();
    String machine = BenchResults.machine();
    BenchResults results = new BenchResults(profile);
    if (!profile.overrides().isEmpty()) {
      results.note(
          "suite",
          "profile "
              + profile.id()
              + " narrowed by "
              + profile.overrides()
              + ": medians of fewer repeats or fewer points than the published profile");
    }
    for (BenchPart part : parts) {
      long started = System.nanoTime();
      out.printf("bench: %s (profile %s)...%n", part.name(), profile);
      try {
        part.run(profile, results);
      } catch (Exception | Error e) {
        results.note(part.name(), FAILED + e);
        e.printStackTrace(out);
      }
      out.printf(
          "bench: %s done in %d s%n", part.name(), (System.nanoTime() - started) / 1_000_000_000L);
    }
    results.noteUnmeasured("suite");
    results.print(out);
    results.writeJson(outputDirectory.resolve("latest.json"), machine);
    for (Path chart : Charts.write(results, outputDirectory)) {
      out.println("bench: chart " + chart);
    }
    return results;
  }

  /**
   * Gives every {@code jar:} URL connection its own {@code JarFile}. The suite starts and stops one
   * Flink MiniCluster after another in this JVM, and Flink shuts the previous one down
   * asynchronously. By default the JDK shares one cached {@code JarFile} per jar between all {@code
   * jar:} URL readers, and a {@code URLClassLoader} that read a resource through it (a job's
   * user-code class loader does) closes that shared file when it is closed. The next cluster then
   * failed, in the full profile, while copying Flink's RPC jar out of the fat jar ({@code
   * RpcLoaderException ... ZipException: ZipFile closed}). Uncached, each reader closes only its
   * own file; the parsed central directory is still shared by the JDK.
   */
  static void unshareJarFiles() {
    URLConnection.setDefaultUseCaches("jar", false);
  }
}
