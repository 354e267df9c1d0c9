package dev.tidemark.pipelines.dataflow;

import dev.tidemark.pipelines.Tidemark;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.List;

/**
 * The main class of the Flex Template image ({@code FLEX_TEMPLATE_JAVA_MAIN_CLASS}). Dataflow's
 * template launcher calls {@code java -cp FLEX_TEMPLATE_JAVA_CLASSPATH THIS --name=value ...} with
 * the launch parameters and the job's Dataflow options; this runs {@code tidemark run
 * --profile=dataflow} with them, so a Flex Template job is exactly the CLI's {@code dataflow}
 * profile with the parameters as overrides.
 *
 * <p>Before delegating it sets two system properties unless the JVM already has them (the
 * Dockerfile sets both): {@code ai.djl.offline=true} (no model downloads while the graph is built)
 * and {@code tidemark.home}, the directory holding {@code runner-profiles/}, defaulting to the
 * directory of the jar this class was loaded from.
 */
public final class FlexTemplateLauncher {
  /** The runner profile a template launch uses ({@code runner-profiles/dataflow.properties}). */
  public static final String PROFILE = "dataflow";

  private FlexTemplateLauncher() {}

  public static void main(String[] args) {
    System.exit(launch(args));
  }

  /** Sets the defaults and runs the CLI; returns its exit code. */
  public static int launch(String... args) {
    if (System.getProperty("ai.djl.offline") == null) {
      System.setProperty("ai.djl.offline", "true");
    }
    if (System.getProperty("tidemark.home") == null) {
      System.setProperty("tidemark.home", defaultHome().toString());
    }
    return Tidemark.execute(cliArguments(args));
  }

  /** {@code run --profile=dataflow} followed by the launcher's arguments. */
  static String[] cliArguments(String... args) {
    List<String> cli = new ArrayList<>();
    cli.add("run");
    cli.add("--profile=" + PROFILE);
    for (String arg : args) {
      if (arg.equals("--profile") || arg.startsWith("--profile=")) {
        throw new IllegalArgumentException(
            "a Flex Template always runs the '" + PROFILE + "' profile; drop " + arg);
      }
      cli.add(arg);
    }
    return cli.toArray(new String[0]);
  }

  /** The directory of the jar (or classes directory) this class comes from. */
  static Path defaultHome() {
    CodeSource source = FlexTemplateLauncher.class.getProtectionDomain().getCodeSource();
    if (source == null) {
      return Paths.get(".");
    }
    try {
      Path location = Paths.get(source.getLocation().toURI());
      return Files.isDirectory(location) ? location : location.getParent();
    } catch (URISyntaxException | RuntimeException e) {
      return Paths.get(".");
    }
  }
}
