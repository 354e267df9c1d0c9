package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;

import dev.tidemark.pipelines.dataflow.FlexTemplateLauncher;
import dev.tidemark.pipelines.launch.ExitCodes;
import dev.tidemark.testkit.JavaProcess;
import java.io.IOException;
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
 * The production jars, opened and run as a cluster would: they carry no test kit, no tools (the
 * generator, the report and its charts), no benchmark, no local launcher, and each only its own
 * runner; the Dataflow jar runs the pipeline with no Flink class on its class path.
 */
@RunWith(JUnit4.class)
public class ProductionJarsIT {
  /** Entry prefixes no worker jar may carry: test kits, tools, the launcher, bench, charts. */
  static final List<String> FORBIDDEN =
      List.of(
          "dev/tidemark/bench/",
          "dev/tidemark/launcher/",
          "dev/tidemark/testkit/",
          "dev/tidemark/tools/",
          "dev/tidemark/act/",
          "dev/tidemark/cluster/",
          "dev/tidemark/drill/",
          "org/apache/beam/runners/flink/EmbeddedFlink",
          "kafka/testkit/",
          "kafka/server/KafkaRaftServer",
          "kafka/Kafka.class",
          "org/apache/kafka/common/test/",
          "org/apache/kafka/test/",
          "org/jfree/",
          "scala/Predef",
          "org/junit/");

  /** The bundled sample, which the jars run in place of the dataflow profile's Pub/Sub input. */
  static final Path SAMPLE =
      Paths.get(System.getProperty("tidemark.home", ".."), "samples", "sample-replay.ndjson")
          .toAbsolutePath()
          .normalize();

  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  static Path jar(String name) {
    Path jar = Paths.get("target", name).toAbsolutePath();
    assertThat("built by mvn package: " + jar, Files.isRegularFile(jar), is(true));
    return jar;
  }

  static List<String> entries(Path jar, List<String> prefixes) throws IOException {
    try (JarFile file = new JarFile(jar.toFile())) {
      return file.stream()
          .map(JarEntry::getName)
          .filter(name -> prefixes.stream().anyMatch(name::startsWith))
          .limit(20)
          .collect(Collectors.toList());
    }
  }

  @Test
  public void flinkJobJarHasBeamsFlinkRunnerButNotFlinkItself() throws Exception {
    Path jar = jar("tidemark-flink-job.jar");
    assertThat(entries(jar, FORBIDDEN), is(empty()));
    assertThat(entries(jar, List.of("org/apache/flink/")), is(empty()));
    assertThat(
        entries(jar, List.of("org/apache/beam/runners/dataflow/DataflowRunner")), is(empty()));
    assertThat(
        entries(jar, List.of("org/apache/beam/runners/flink/FlinkRunner.class")).size(), is(1));
    assertThat(
        entries(jar, List.of("dev/tidemark/pipelines/ScoreCloudEvents.class")).size(), is(1));
  }

  @Test
  public void dataflowJarHasNoFlinkAndNoBroker() throws Exception {
    Path jar = jar("tidemark-dataflow.jar");
    assertThat(entries(jar, FORBIDDEN), is(empty()));
    assertThat(
        entries(jar, List.of("org/apache/flink/", "org/apache/beam/runners/flink/")), is(empty()));
    assertThat(
        entries(jar, List.of("org/apache/beam/runners/dataflow/DataflowRunner.class")).size(),
        is(1));
  }

  /**
   * The Dataflow jar alone on the class path runs the bundled pipeline on the DirectRunner (the
   * template launcher with the local profile's settings as overrides): code every run executes
   * touches no Flink class (a {@code FlinkRunner.class} there would throw {@code
   * NoClassDefFoundError}).
   */
  @Test
  public void dataflowJarRunsThePipelineWithoutFlinkClasses() throws Exception {
    Path work = folder.getRoot().toPath();
    String output =
        java(
            work,
            jar("tidemark-dataflow.jar"),
            "--runner=DirectRunner",
            "--streaming=false",
            "--enforceImmutability=false",
            "--enforceEncodability=false",
            "--targetParallelism=1",
            "--source=replay",
            "--input=" + SAMPLE,
            "--sink=files",
            "--output=" + work.resolve("out"));
    assertThat(output, containsString("HOLDS"));
    assertThat(Files.exists(work.resolve("out").resolve("summary.json")), is(true));
  }

  /** Without the launcher, the embedded broker is refused with a message naming it. */
  @Test
  public void flinkJobJarRefusesTheEmbeddedBroker() throws Exception {
    Path work = folder.getRoot().toPath();
    String output =
        java(
            work,
            jar("tidemark-flink-job.jar"),
            ExitCodes.USAGE_ERROR,
            "--runner=DirectRunner",
            "--streaming=false",
            "--source=kafka",
            "--kafkaBootstrapServers=embedded",
            "--sink=files",
            "--output=" + work.resolve("out"));
    assertThat(output, containsString("inside the local launcher"));
  }

  /**
   * The jar, and for the Flink job jar what a Flink cluster's class path adds (its flink-dist): the
   * Flink jars this build resolved.
   */
  private static String classPath(Path jar) {
    List<String> entries = new ArrayList<>(List.of(jar.toString()));
    if (jar.getFileName().toString().contains("flink")) {
      for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
        if (entry.contains("/org/apache/flink/")
            || entry.contains("/com/esotericsoftware/")
            || entry.contains("/com/twitter/chill")) {
          entries.add(entry);
        }
      }
    }
    return String.join(java.io.File.pathSeparator, entries);
  }

  private static String java(Path work, Path jar, String... args) throws Exception {
    return java(work, jar, ExitCodes.DONE, args);
  }

  private static String java(Path work, Path jar, int expectedExit, String... args)
      throws Exception {
    List<String> launch =
        new ArrayList<>(List.of("-cp", classPath(jar), FlexTemplateLauncher.class.getName()));
    launch.addAll(List.of(args));
    return JavaProcess.run(work, JavaProcess.command(launch), expectedExit);
  }
}
