package dev.tidemark.pipelines.dataflow;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.spec.SpecLoader;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The Flex Template image cannot be built here (no Docker, no Google access), so this checks what
 * can be checked: the Dockerfile's base image, main class, classpath, JVM flags and COPY sources
 * ({@link FlexTemplateLauncherIT} runs the launcher).
 */
@RunWith(JUnit4.class)
public class FlexTemplateFilesTest {
  private static final Path HOME =
      Paths.get(System.getProperty("tidemark.home", "..")).toAbsolutePath().normalize();
  private static final Path DOCKERFILE = HOME.resolve("pipelines/flex-template/Dockerfile");
  private static final String LAUNCHER_BASE =
      "gcr.io/dataflow-templates-base/java17-template-launcher-base";

  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  /** The Dockerfile's instructions, continuation lines joined, comments dropped. */
  private static List<String> instructions() throws IOException {
    List<String> instructions = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    for (String line : Files.readAllLines(DOCKERFILE, StandardCharsets.UTF_8)) {
      String trimmed = line.trim();
      if (trimmed.startsWith("#") || (trimmed.isEmpty() && current.length() == 0)) {
        continue;
      }
      if (trimmed.endsWith("\\")) {
        current.append(trimmed, 0, trimmed.length() - 1).append(' ');
      } else {
        current.append(trimmed);
        instructions.add(current.toString().trim());
        current.setLength(0);
      }
    }
    return instructions;
  }

  private static List<String> withKeyword(String keyword) throws IOException {
    return instructions().stream()
        .filter(i -> i.startsWith(keyword + " "))
        .map(i -> i.substring(keyword.length() + 1).trim())
        .collect(Collectors.toList());
  }

  /** {@code ENV NAME=value} (value unquoted); {@code ARG NAME=value} likewise. */
  private static Map<String, String> assignments(String keyword) throws IOException {
    Map<String, String> values = new LinkedHashMap<>();
    for (String body : withKeyword(keyword)) {
      int eq = body.indexOf('=');
      assertTrue(keyword + " " + body + ": use NAME=value", eq > 0);
      String value = body.substring(eq + 1).trim();
      if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
        value = value.substring(1, value.length() - 1);
      }
      values.put(body.substring(0, eq).trim(), value);
    }
    return values;
  }

  /** {@code COPY src... dest}: source to destination. */
  private static Map<String, String> copies() throws IOException {
    Map<String, String> copies = new LinkedHashMap<>();
    for (String body : withKeyword("COPY")) {
      String[] parts = body.split("\\s+");
      assertThat(
          "COPY " + body + ": no --from or flags expected", parts[0].startsWith("--"), is(false));
      for (int i = 0; i < parts.length - 1; i++) {
        copies.put(parts[i], parts[parts.length - 1]);
      }
    }
    return copies;
  }

  /** The Dataflow jar the pom writes: the shade execution {@code dataflow}'s output file. */
  private static String shadedJar() throws Exception {
    Document pom =
        DocumentBuilderFactory.newInstance()
            .newDocumentBuilder()
            .parse(HOME.resolve("pipelines/pom.xml").toFile());
    NodeList executions = pom.getElementsByTagName("execution");
    for (int i = 0; i < executions.getLength(); i++) {
      Element execution = (Element) executions.item(i);
      NodeList ids = execution.getElementsByTagName("id");
      if (ids.getLength() > 0 && "dataflow".equals(ids.item(0).getTextContent().trim())) {
        NodeList files = execution.getElementsByTagName("outputFile");
        assertThat("the dataflow shade execution sets <outputFile>", files.getLength(), is(1));
        return files
            .item(0)
            .getTextContent()
            .trim()
            .replace("${project.build.directory}", "pipelines/target");
      }
    }
    throw new AssertionError("pipelines/pom.xml has no shade execution with id 'dataflow'");
  }

  /**
   * The base image is an argument without a default, so that an image is built only from a pinned
   * base: {@code terraform/build-template.sh} passes Google's Java 17 launcher image by digest
   * ({@code TerraformDeployIT} checks the command it runs).
   */
  @Test
  public void baseImageIsAnArgumentWithoutADefault() throws IOException {
    List<String> from = withKeyword("FROM");
    assertThat("one stage", from.size(), is(1));
    Matcher arg = Pattern.compile("^\\$\\{(\\w+)}$").matcher(from.get(0));
    assertTrue("FROM takes the base from an ARG: " + from.get(0), arg.matches());
    assertThat(withKeyword("ARG"), is(List.of(arg.group(1))));
    assertThat(arg.group(1), is("LAUNCHER_BASE"));
    assertThat(
        Files.readString(HOME.resolve("terraform/build-template.sh"), StandardCharsets.UTF_8),
        containsString("LAUNCHER_IMAGE=" + LAUNCHER_BASE + "\n"));
  }

  @Test
  public void mainClassExistsAndIsTheLauncher() throws Exception {
    String main = assignments("ENV").get("FLEX_TEMPLATE_JAVA_MAIN_CLASS");
    assertEquals(FlexTemplateLauncher.class.getName(), main);
    Method method = Class.forName(main).getMethod("main", String[].class);
    assertTrue(
        Modifier.isStatic(method.getModifiers()) && Modifier.isPublic(method.getModifiers()));
  }

  @Test
  public void copySourcesExistOrAreTheShadedJarAndTheClasspathIsWhatWasCopied() throws Exception {
    Map<String, String> copies = copies();
    String jar = shadedJar();
    assertThat(copies.keySet(), hasItem(jar));
    assertThat(copies.keySet(), hasItem("runner-profiles/"));
    for (String source : copies.keySet()) {
      if (!source.equals(jar)) {
        assertTrue(
            "COPY source " + source + " is not in the repository",
            Files.exists(HOME.resolve(source)));
      }
    }
    String classpath = assignments("ENV").get("FLEX_TEMPLATE_JAVA_CLASSPATH");
    assertEquals(copies.get(jar), classpath);
  }

  @Test
  public void jvmFlagsPointAtTheCopiedProfilesAndStayOffline() throws IOException {
    Map<String, String> env = assignments("ENV");
    String flags = env.get("JAVA_TOOL_OPTIONS");
    assertThat(flags, containsString("-Dai.djl.offline=true"));
    Matcher home = Pattern.compile("-Dtidemark\\.home=(\\S+)").matcher(flags);
    assertTrue("JAVA_TOOL_OPTIONS sets -Dtidemark.home", home.find());
    String profiles = copies().get("runner-profiles/");
    assertEquals(home.group(1).replaceAll("/$", "") + "/runner-profiles/", profiles);
    assertEquals("true", env.get("OPT_OUT_TRACKING"));
  }

  @Test
  public void theTemplatesProfileExists() {
    Path profile = HOME.resolve("runner-profiles/" + FlexTemplateLauncher.PROFILE + ".properties");
    assertTrue(profile + " is readable", Files.isReadable(profile));
    assertEquals(
        "DataflowRunner",
        new dev.tidemark.pipelines.RunnerProfiles(HOME)
            .load(FlexTemplateLauncher.PROFILE)
            .get("runner"));
  }

  @Test
  public void theLauncherAlwaysRunsTheDataflowProfile() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> FlexTemplateLauncher.options("--windowSize=PT1M", "--profile=local"));
    assertThat(e.getMessage(), containsString("always runs the 'dataflow' profile"));
  }

  @Test
  public void theTemplateWritesToBigQueryAndRefusesASpecThatGivesItAnotherSink()
      throws IOException {
    assertEquals(TidemarkOptions.SinkKind.bigquery, FlexTemplateLauncher.options().getSink());
    Path spec = Files.createTempFile("kafka-on-dataflow", ".yaml");
    try {
      Files.writeString(
          spec,
          SpecLoader.bundledText("logins")
              .replace("dataflow:      {sink: bigquery}", "dataflow:      {sink: kafka}"));
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> FlexTemplateLauncher.options("--specUri=" + spec));
      assertThat(e.getMessage(), containsString("outputs.dataflow.sink"));
      assertThat(e.getMessage(), containsString(spec.toString()));
    } finally {
      Files.delete(spec);
    }
  }
}
