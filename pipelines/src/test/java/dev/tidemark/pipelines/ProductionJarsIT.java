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
    // Google's Managed Kafka login is the Dataflow jar's only.
    assertThat(entries(jar, List.of("com/google/cloud/hosted/kafka/")), is(empty()));
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
    // Managed Service for Apache Kafka's login, with the classes it calls.
    for (String type :
        List.of(
            "com/google/cloud/hosted/kafka/auth/GcpLoginCallbackHandler.class",
            "com/google/api/client/googleapis/auth/oauth2/GoogleIdToken.class",
            "com/google/api/client/json/gson/GsonFactory.class",
            "com/google/auth/oauth2/IdTokenCredentials.class",
            "org/apache/kafka/common/security/oauthbearer/internals/secured/BasicOAuthBearerToken.class")) {
      assertThat(type, entries(jar, List.of(type)).size(), is(1));
    }
    assertThat(entries(jar, List.of("io/confluent/")), is(empty()));
  }

  /**
   * The Dataflow jar alone on the class path runs the pipeline over the bundled sample's head in
   * batch on the DirectRunner (the template launcher with the local profile's settings as
   * overrides): code every run executes touches no Flink class (a {@code FlinkRunner.class} there
   * would throw {@code NoClassDefFoundError}).
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
            "--input=" + sampleHead(work, "sample.ndjson", false),
            "--sink=files",
            "--output=" + work.resolve("out"));
    assertThat(output, containsString("HOLDS"));
    assertThat(Files.exists(work.resolve("out").resolve("summary.json")), is(true));
  }

  /**
   * Dataflow's workers get no {@code --add-opens} flags from Tidemark: the image's {@code
   * JAVA_TOOL_OPTIONS} reach the launcher only, and the job sets no {@code --jdkAddOpenModules}.
   * This is the evidence that they need none: the Dataflow jar's code, in a JVM started with no
   * opened module (Java 17 then refuses reflective access into the JDK), runs the streaming
   * pipeline on the DirectRunner and, with Beam's Flink runner and Flink added to the same class
   * path, a bounded backfill on Flink, both to a holding accounting identity.
   */
  @Test
  public void theDataflowJarsCodeNeedsNoOpenedModulesOnTheDirectOrFlinkRunner() throws Exception {
    Path work = folder.getRoot().toPath();
    Path sample = sampleHead(work, "sample.ndjson", false);
    Path events = sampleHead(work, "events.ndjson", true);
    Path jar = jar("tidemark-dataflow.jar");

    String direct =
        java(
            work,
            jar.toString(),
            "--runner=DirectRunner",
            "--streaming=true",
            "--targetParallelism=1",
            "--source=replay",
            "--input=" + sample,
            "--sink=files",
            "--windowSize=PT30S",
            "--windowPeriod=PT30S",
            "--output=" + work.resolve("direct"));
    assertThat(direct, containsString("HOLDS"));

    List<String> flinkClassPath = new ArrayList<>(List.of(jar.toString()));
    flinkClassPath.addAll(flinkJars(true));
    String flink =
        java(
            work,
            String.join(java.io.File.pathSeparator, flinkClassPath),
            "--runner=FlinkRunner",
            "--flinkMaster=[local]",
            "--parallelism=1",
            "--source=backfill",
            "--input=" + events,
            "--sink=files",
            "--output=" + work.resolve("flink"));
    assertThat(flink, containsString("HOLDS"));
    assertThat(
        "the JVMs ran without opened modules",
        JavaProcess.command(List.of()).stream().anyMatch(a -> a.startsWith("--add-opens")),
        is(false));
  }

  /**
   * The bundled sample's first 120 lines, byte for byte (they hold malformed UTF-8 on purpose), or
   * only its CloudEvents when {@code eventsOnly} (a backfill takes no replay directives): every
   * kind of record, in a run a fraction of the whole sample's length.
   */
  private static Path sampleHead(Path work, String name, boolean eventsOnly) throws IOException {
    java.nio.charset.Charset bytes = java.nio.charset.StandardCharsets.ISO_8859_1;
    List<String> lines = Files.readAllLines(SAMPLE, bytes).subList(0, 120);
    Path file = work.resolve(name);
    Files.write(
        file,
        eventsOnly
            ? lines.stream().filter(l -> l.contains("\"specversion\"")).collect(Collectors.toList())
            : lines,
        bytes);
    return file;
  }

  /** {@code java -cp CLASSPATH FlexTemplateLauncher ARGS}, expecting exit 0. */
  private static String java(Path work, String classPath, String... args) throws Exception {
    List<String> launch =
        new ArrayList<>(List.of("-cp", classPath, FlexTemplateLauncher.class.getName()));
    launch.addAll(List.of(args));
    return JavaProcess.run(work, JavaProcess.command(launch), ExitCodes.DONE);
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
      entries.addAll(flinkJars(false));
    }
    return String.join(java.io.File.pathSeparator, entries);
  }

  /** The Flink jars this build resolved, and Beam's Flink runner if {@code withRunner}. */
  private static List<String> flinkJars(boolean withRunner) {
    List<String> jars = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
      if (entry.contains("/org/apache/flink/")
          || entry.contains("/com/esotericsoftware/")
          || entry.contains("/com/twitter/chill")
          || (withRunner && entry.contains("beam-runners-flink"))) {
        jars.add(entry);
      }
    }
    return jars;
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
