package dev.tidemark.bench.suite;

import dev.tidemark.bench.beam.BuildingBlocksPart;
import dev.tidemark.bench.beam.DedupStatePart;
import dev.tidemark.bench.beam.ScalingPart;
import dev.tidemark.bench.flink.ClusterPart;
import dev.tidemark.bench.flink.FlinkBaselinePart;
import dev.tidemark.bench.kafka.KafkaSinkPart;
import dev.tidemark.bench.latency.LatencyPart;
import dev.tidemark.bench.scoring.BatchingPart;
import dev.tidemark.bench.scoring.ScoringPart;
import dev.tidemark.transforms.util.Json;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.URLConnection;
import java.nio.charset.Charset;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The benchmark suite ({@code ./tidemark bench --profile=small|full}): runs every {@link BenchPart}
 * in turn, prints one table, writes its own dated JSON and {@code bench-results/latest.json}, and
 * the PNG charts next to it. A part that fails is noted and its figures stay null; the suite still
 * writes its results.
 *
 * <p>{@link #forkingEachPart() Forking}, each part runs in a JVM of its own, as a JMH fork does: in
 * one JVM the parts run later were measured markedly slower than alone, on both sides of their
 * ratios (a heap and JIT profiles shaped by the jobs before them), so a part's absolute figures
 * depended on its place in the run.
 */
public final class BenchSuite {
  /** How a part that threw is noted (its figures stay null). */
  static final String FAILED = "failed, its figures are null: ";

  private final List<BenchPart> parts;
  private final boolean fork;

  /** The parts, run one after the other in this JVM. */
  public BenchSuite(List<BenchPart> parts) {
    this(parts, false);
  }

  private BenchSuite(List<BenchPart> parts, boolean fork) {
    this.parts = List.copyOf(parts);
    this.fork = fork;
  }

  /**
   * The same parts, each run in a JVM of its own (this JVM's options and class path) when there is
   * more than one; the parent merges what each records. One part runs in this JVM, so that a
   * profiler attached to it sees the part.
   */
  public BenchSuite forkingEachPart() {
    return new BenchSuite(parts, parts.size() > 1);
  }

  /** The parts of the published suite, in running order. */
  public static List<BenchPart> defaultParts() {
    List<BenchPart> parts = new ArrayList<>();
    parts.add(new FlinkBaselinePart());
    parts.add(new BuildingBlocksPart());
    parts.add(new ScalingPart());
    parts.add(new DedupStatePart());
    parts.add(new ScoringPart());
    parts.add(new BatchingPart());
    parts.add(LatencyPart.heap());
    parts.add(LatencyPart.rocksDb());
    parts.add(new KafkaSinkPart());
    parts.add(new ClusterPart());
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

  /**
   * The file name of a run's own JSON: its start in UTC, the profile and the parts, e.g. {@code
   * 2026-12-06T23-09-31Z-full-flink-cluster.json}; runs never overwrite each other's.
   */
  String datedName(Instant started, BenchProfile profile) {
    StringBuilder name =
        new StringBuilder(
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH-mm-ss'Z'")
                .withZone(ZoneOffset.UTC)
                .format(started));
    name.append('-').append(profile.id());
    for (BenchPart part : parts) {
      name.append('-').append(part.name());
    }
    return name.append(".json").toString();
  }

  /**
   * Runs the parts and writes, under {@code outputDirectory}, the run's own JSON ({@link
   * #datedName}), the same as {@code latest.json}, and the charts.
   */
  public BenchResults run(BenchProfile profile, Path outputDirectory, PrintStream out)
      throws Exception {
    String dated = datedName(Instant.now(), profile);
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
        if (fork) {
          runForked(part, profile, results, out);
        } else {
          part.run(profile, results);
        }
      } catch (Exception | Error e) {
        results.note(part.name(), FAILED + e);
        e.printStackTrace(out);
      }
      out.printf(
          "bench: %s done in %d s%n", part.name(), (System.nanoTime() - started) / 1_000_000_000L);
    }
    results.noteUnmeasured("suite");
    results.print(out);
    results.writeJson(outputDirectory.resolve(dated), machine);
    Files.copy(
        outputDirectory.resolve(dated),
        outputDirectory.resolve("latest.json"),
        StandardCopyOption.REPLACE_EXISTING);
    out.println("bench: wrote " + outputDirectory.resolve(dated) + " and latest.json");
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

  /**
   * Runs {@code part} in a child JVM ({@link PartMain}) with this JVM's options (less a flight
   * recording or an agent, which would write to the parent's files) and class path, copies its
   * output to {@code out}, and merges its results.
   */
  private static void runForked(
      BenchPart part, BenchProfile profile, BenchResults results, PrintStream out)
      throws Exception {
    Path file = Files.createTempFile("bench-" + part.name() + "-", ".json");
    try {
      List<String> command = new ArrayList<>();
      command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
      for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
        if (!arg.startsWith("-XX:StartFlightRecording")
            && !arg.startsWith("-agentlib:")
            && !arg.startsWith("-javaagent:")) {
          command.add(arg);
        }
      }
      command.add("-cp");
      command.add(System.getProperty("java.class.path"));
      command.add(PartMain.class.getName());
      command.add(part.getClass().getName());
      command.add(file.toString());
      command.add(profile.id());
      if (!profile.overrides().isEmpty()) {
        command.addAll(Arrays.asList(profile.overrides().split(" ")));
      }
      Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
      try (BufferedReader lines =
          new BufferedReader(
              new InputStreamReader(child.getInputStream(), Charset.defaultCharset()))) {
        lines.lines().forEach(out::println);
      }
      int exit = child.waitFor();
      if (exit != 0 || Files.size(file) == 0) {
        throw new IllegalStateException(
            "the JVM of part " + part.name() + " exited with " + exit + " and wrote no results");
      }
      results.merge(Json.MAPPER.readTree(file.toFile()));
    } finally {
      Files.deleteIfExists(file);
    }
  }

  /**
   * The JVM of one forked part: {@code PartMain <part class> <results file> <profile id>
   * [--accounts=..] [--fanOuts=..] [--warmups=N] [--repeats=N]}. Runs the part, notes a failure as
   * the suite does, writes the results and exits (parts may leave Flink or Kafka threads behind).
   */
  public static final class PartMain {
    private PartMain() {}

    public static void main(String[] args) throws Exception {
      BenchPart part = (BenchPart) Class.forName(args[0]).getDeclaredConstructor().newInstance();
      BenchProfile profile =
          BenchProfile.fromId(args[2])
              .withOverrides(String.join(" ", Arrays.asList(args).subList(3, args.length)));
      unshareJarFiles();
      BenchResults results = new BenchResults(profile);
      try {
        part.run(profile, results);
      } catch (Exception | Error e) {
        results.note(part.name(), FAILED + e);
        e.printStackTrace(System.out);
      }
      System.out.flush();
      results.writeJson(Paths.get(args[1]), "");
      System.exit(0);
    }
  }
}
