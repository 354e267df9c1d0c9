package dev.tidemark.launcher;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;

import dev.tidemark.testkit.JavaProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The shaded jar that {@code ./tidemark} launches, run as users run it (a fresh JVM, only the jar
 * on the class path): the unit tests' class path has test-scoped jars the shaded jar lacks, so a
 * dependency missing at run time only shows here.
 */
@RunWith(JUnit4.class)
public class LauncherJarIT {
  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  private static String run(Path work, String... args) throws Exception {
    Path jar = Paths.get("target", "tidemark.jar").toAbsolutePath();
    List<String> launch = new ArrayList<>(List.of("-jar", jar.toString()));
    launch.addAll(List.of(args));
    return JavaProcess.runToEnd(work, JavaProcess.command(launch));
  }

  @Test
  public void runHelpListsThePipelineOptions() throws Exception {
    String output = run(folder.getRoot().toPath(), "run", "--help");
    assertThat(output, containsString("--bigQueryDataset"));
    assertThat(output, containsString("--pubsubSubscription"));
  }

  @Test
  public void aSmallGeneratedStreamRunsEndToEnd() throws Exception {
    Path work = folder.getRoot().toPath();
    run(work, "generate", "--output=" + work.resolve("s.ndjson"), "--events=60", "--accounts=5");
    String output =
        run(
            work,
            "run",
            "--input=" + work.resolve("s.ndjson"),
            "--output=" + work.resolve("out"),
            "--earlyFiringDelay=none");
    assertThat(output, containsString("HOLDS"));
    assertThat(Files.exists(work.resolve("out").resolve("summary.json")), is(true));
  }

  /** The launcher carries the live demo, the tools and every runner, but no benchmark code. */
  @Test
  public void launcherJarHasNoBenchOrChartClasses() throws Exception {
    try (JarFile jar = new JarFile(Paths.get("target", "tidemark.jar").toFile())) {
      List<String> forbidden =
          jar.stream()
              .map(JarEntry::getName)
              .filter(n -> n.startsWith("dev/tidemark/bench/") || n.startsWith("org/jfree/"))
              .limit(10)
              .collect(Collectors.toList());
      assertThat(forbidden, is(empty()));
      assertThat(jar.getEntry("dev/tidemark/launcher/LiveDemo.class") != null, is(true));
    }
  }

  /**
   * The scoring natives of the platforms developers run {@code ./tidemark} on: Linux x86_64 and
   * aarch64, macOS x86_64 and arm64 (only Linux x86_64 runs here).
   */
  @Test
  public void launcherJarCarriesTheScoringNativesOfEachDeveloperPlatform() throws Exception {
    try (JarFile jar = new JarFile(Paths.get("target", "tidemark.jar").toFile())) {
      List<String> names = jar.stream().map(JarEntry::getName).collect(Collectors.toList());
      for (String platform : List.of("linux-x64", "linux-aarch64", "osx-x64", "osx-aarch64")) {
        String prefix = "ai/onnxruntime/native/" + platform + "/";
        assertThat(prefix, names.stream().anyMatch(n -> n.startsWith(prefix)), is(true));
      }
      for (String platform :
          List.of(
              "lib/linux/x86_64/",
              "lib/linux/aarch64/",
              "lib/macos/x86_64/",
              "lib/macos/aarch64/")) {
        assertThat(platform, names.stream().anyMatch(n -> n.startsWith(platform)), is(true));
      }
    }
  }
}
