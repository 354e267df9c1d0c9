package dev.tidemark.pipelines.dataflow;

import dev.tidemark.pipelines.RunSpecs;
import dev.tidemark.pipelines.RunnerProfiles;
import dev.tidemark.pipelines.SpecOptions;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.launch.ExitCodes;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.spec.SpecException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.CodeSource;
import java.util.Arrays;
import java.util.List;
import org.apache.beam.sdk.options.PipelineOptionsFactory;

/**
 * The main class of the Flex Template image ({@code FLEX_TEMPLATE_JAVA_MAIN_CLASS}). Dataflow's
 * template launcher calls {@code java -cp FLEX_TEMPLATE_JAVA_CLASSPATH THIS --name=value ...} with
 * the launch parameters and the job's Dataflow options; this submits the job of the {@code
 * dataflow} runner profile with them as overrides ({@link Launch#submit}), exactly as {@code
 * tidemark run --profile=dataflow} does, and returns once Dataflow created the job.
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

  /** Sets the defaults and submits the job; returns its exit code ({@link ExitCodes}). */
  public static int launch(String... args) {
    if (System.getProperty("ai.djl.offline") == null) {
      System.setProperty("ai.djl.offline", "true");
    }
    if (System.getProperty("tidemark.home") == null) {
      System.setProperty("tidemark.home", defaultHome().toString());
    }
    try {
      TidemarkOptions options = options(args);
      if (!Launch.submitsOnly(options)) {
        // A profile overridden to a local runner (tests, a dry run): the job runs here.
        Summary summary = Launch.run(options);
        summary.print(System.out, Paths.get(options.getOutput()));
        return ExitCodes.of(summary);
      }
      System.out.println(Launch.submitAndDescribe(options));
      return ExitCodes.DONE;
    } catch (IllegalArgumentException | SpecException e) {
      System.err.println("tidemark: " + e.getMessage());
      return ExitCodes.USAGE_ERROR;
    } catch (RuntimeException e) {
      System.err.println("tidemark: the launch failed: " + e);
      return ExitCodes.RUN_FAILED;
    }
  }

  /** The options of the {@code dataflow} profile with the launcher's arguments as overrides. */
  static TidemarkOptions options(String... args) {
    for (String arg : args) {
      if (arg.equals("--profile")
          || arg.startsWith("--profile=")
          || arg.startsWith("--runnerProfile=")) {
        throw new IllegalArgumentException(
            "a Flex Template always runs the '" + PROFILE + "' profile; drop " + arg);
      }
    }
    RunnerProfiles profiles = RunnerProfiles.fromEnvironment();
    List<String> arguments = profiles.arguments(PROFILE, List.of(args));
    TidemarkOptions options =
        PipelineOptionsFactory.fromArgs(arguments.toArray(new String[0]))
            .withValidation()
            .as(TidemarkOptions.class);
    boolean sinkGiven =
        Arrays.stream(args).anyMatch(a -> a.startsWith("--sink="))
            || profiles.load(PROFILE).containsKey("sink");
    if (!sinkGiven && options.getSink() != TidemarkOptions.SinkKind.bigquery) {
      // The template's parameters are those of the BigQuery sink.
      throw new IllegalArgumentException(
          "the Flex Template writes to BigQuery, but the spec "
              + RunSpecs.location(options.as(SpecOptions.class).getSpecUri())
              + " gives the '"
              + PROFILE
              + "' profile the "
              + options.getSink()
              + " sink (outputs."
              + PROFILE
              + ".sink); run that with ./tidemark run --profile="
              + PROFILE);
    }
    return options;
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
