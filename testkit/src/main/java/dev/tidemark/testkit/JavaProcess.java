package dev.tidemark.testkit;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a Tidemark jar in a fresh JVM, as users run it: the tests' own class path has test-scoped
 * jars a packaged jar lacks, so a dependency missing at run time only shows this way. The JVM gets
 * DJL's offline flag and {@code tidemark.home} (the project root), nothing else.
 */
public final class JavaProcess {
  private JavaProcess() {}

  /** {@code java -Dai.djl.offline=true -Dtidemark.home=..} followed by {@code launch}. */
  public static List<String> command(List<String> launch) {
    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Dai.djl.offline=true");
    command.add("-Dtidemark.home=" + Paths.get("").toAbsolutePath().getParent());
    command.addAll(launch);
    return command;
  }

  /** {@link #run} expecting exit code 0. */
  public static String runToEnd(Path work, List<String> command) throws Exception {
    return run(work, command, 0);
  }

  /**
   * Runs {@code command} in {@code work} (output in {@code work/out.log}), waits at most five
   * minutes, checks that it exited with {@code expectedExit} and returns its output.
   */
  public static String run(Path work, List<String> command, int expectedExit) throws Exception {
    Path log = work.resolve("out.log");
    Process process =
        new ProcessBuilder(command)
            .directory(work.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    if (!process.waitFor(5, TimeUnit.MINUTES)) {
      process.destroyForcibly().waitFor();
      throw new AssertionError("timed out: " + command);
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    assertThat(output, process.exitValue(), is(expectedExit));
    return output;
  }
}
