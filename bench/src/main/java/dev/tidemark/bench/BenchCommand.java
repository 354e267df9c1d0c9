package dev.tidemark.bench;

import dev.tidemark.bench.suite.BenchProfile;
import dev.tidemark.bench.suite.BenchSuite;
import dev.tidemark.pipelines.launch.ExitCodes;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code tidemark bench}: the benchmark suite, side by side with its baselines. */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    description = {
      "Run the benchmark suite: Tidemark against native Flink and Beam's own building blocks,"
          + " scaling curves, state size, scoring and its batching, latency and the Kafka sinks."
          + " Prints one table and writes the run's own dated JSON, the same as"
          + " <output>/latest.json, and PNG charts.",
      "With more than one part, each part runs in a JVM of its own (this one's options and"
          + " class path), so that no part is measured on a heap and JIT profiles the parts"
          + " before it shaped."
    })
public final class BenchCommand implements Callable<Integer> {
  public static void main(String[] args) {
    System.exit(execute(args));
  }

  /** Runs the suite's command line and returns its exit code (tests call this). */
  public static int execute(String... args) {
    CommandLine commandLine = new CommandLine(new BenchCommand());
    commandLine.setCommandName("tidemark bench");
    commandLine.setExecutionExceptionHandler(
        (e, cmd, parsed) -> {
          cmd.getErr().println("tidemark bench: " + e);
          return e instanceof IllegalArgumentException
              ? ExitCodes.USAGE_ERROR
              : ExitCodes.RUN_FAILED;
        });
    commandLine.setExitCodeExceptionMapper(e -> ExitCodes.USAGE_ERROR);
    ExitCodes.document(commandLine);
    return commandLine.execute(args);
  }

  @Option(
      names = "--profile",
      defaultValue = "small",
      description =
          "smoke (every part on tiny inputs: the CI smoke test; its figures only show that a part"
              + " measures), small (a few minutes a part) or full (the published sizes)"
              + " (default: ${DEFAULT-VALUE}).")
  String profile;

  @Option(
      names = "--output",
      defaultValue = "bench-results",
      description =
          "Directory of the run's JSON, latest.json and the charts (default: ${DEFAULT-VALUE}).")
  Path output;

  @Option(
      names = "--parts",
      split = ",",
      description =
          "Run only these parts, comma-separated (default: all): native-flink,"
              + " beam-building-blocks, beam-scaling, beam-dedup-state, scoring, batching, latency,"
              + " latency-rocksdb, kafka-sink, flink-cluster. The other parts' figures are null in"
              + " latest.json.")
  List<String> parts = new ArrayList<>();

  @Option(
      names = "--accounts",
      split = ",",
      description =
          "Override the profile's account counts of the scaling curve, comma-separated; the"
              + " first is the baseline of scaling.throughput1MVs1kAccounts (null unless 1000"
              + " and 1000000).")
  List<Integer> accounts = new ArrayList<>();

  @Option(
      names = "--fanOuts",
      split = ",",
      description = "Override the profile's window fan-outs (size / period), comma-separated.")
  List<Integer> fanOuts = new ArrayList<>();

  @Option(names = "--warmups", description = "Override the profile's discarded warm-up runs.")
  Integer warmups;

  @Option(
      names = "--repeats",
      description = "Override the profile's measured repeats (figures are their median).")
  Integer repeats;

  @Override
  public Integer call() throws Exception {
    BenchSuite suite = new BenchSuite(BenchSuite.selectParts(parts)).forkingEachPart();
    suite.run(
        BenchProfile.fromId(profile).with(accounts, fanOuts, warmups, repeats), output, System.out);
    return 0;
  }
}
