package dev.tidemark.pipelines;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.apache.beam.sdk.options.DefaultValueFactory;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * Runner profiles: one {@code runner-profiles/<name>.properties} file per profile, each line a
 * pipeline option ({@code runner=DirectRunner}). {@code ${tidemark.home}} in a value is the project
 * directory. Options given on the command line override the profile's.
 */
public final class RunnerProfiles {
  /** The profile used when none is named. */
  public static final String DEFAULT_PROFILE = "local";

  /**
   * {@link #DEFAULT_PROFILE}: the profile of a run started without {@link #arguments} (a pipeline
   * built in code, a test).
   */
  public static final class DefaultProfile implements DefaultValueFactory<String> {
    @Override
    public String create(PipelineOptions options) {
      return DEFAULT_PROFILE;
    }
  }

  private final Path home;

  public RunnerProfiles(Path home) {
    this.home = home;
  }

  /** The project directory: {@code -Dtidemark.home}, else the working directory. */
  public static RunnerProfiles fromEnvironment() {
    return new RunnerProfiles(Paths.get(System.getProperty("tidemark.home", ".")));
  }

  public Path directory() {
    return home.resolve("runner-profiles");
  }

  /** The names of the profiles on disk. */
  public List<String> names() {
    try (Stream<Path> files = Files.list(directory())) {
      TreeSet<String> names = new TreeSet<>();
      files
          .map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".properties"))
          .forEach(n -> names.add(n.substring(0, n.length() - ".properties".length())));
      return new ArrayList<>(names);
    } catch (IOException e) {
      return List.of();
    }
  }

  /** The profile's options, in file order. */
  public Map<String, String> load(String profile) {
    Path file = directory().resolve(profile + ".properties");
    if (!Files.isReadable(file)) {
      throw new IllegalArgumentException(
          "no runner profile '" + profile + "' (looked for " + file + "); known: " + names());
    }
    Properties properties = new Properties();
    try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      properties.load(reader);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
    Map<String, String> options = new LinkedHashMap<>();
    for (String name : new TreeSet<>(properties.stringPropertyNames())) {
      options.put(
          name,
          properties
              .getProperty(name)
              .replace("${tidemark.home}", home.toAbsolutePath().normalize().toString()));
    }
    return options;
  }

  /**
   * The pipeline arguments for a run: the profile's options and {@code --runnerProfile}, then the
   * command-line arguments; a command-line option replaces the profile's option of the same name.
   */
  public List<String> arguments(String profile, List<String> commandLine) {
    Map<String, String> merged = new LinkedHashMap<>(load(profile));
    List<String> passthrough = new ArrayList<>();
    for (String argument : commandLine) {
      if (argument.startsWith("--") && argument.contains("=")) {
        int eq = argument.indexOf('=');
        merged.remove(argument.substring(2, eq));
      }
      passthrough.add(argument);
    }
    if (commandLine.stream().noneMatch(a -> a.startsWith("--runnerProfile="))) {
      merged.putIfAbsent("runnerProfile", profile);
    }
    List<String> arguments = new ArrayList<>();
    merged.forEach((name, value) -> arguments.add("--" + name + "=" + value));
    arguments.addAll(passthrough);
    return arguments;
  }
}
