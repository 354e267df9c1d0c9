package dev.tidemark.pipelines.dataflow;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The Flex Template launcher runs the command line's {@code run --profile=dataflow}. */
@RunWith(JUnit4.class)
public class FlexTemplateLauncherIT {
  private static final Path HOME =
      Paths.get(System.getProperty("tidemark.home", "..")).toAbsolutePath().normalize();

  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  /**
   * The launcher runs the {@code dataflow} profile with the parameters as overrides: with a
   * stand-in {@code dataflow} profile on the DirectRunner (no Google) it runs the pipeline and the
   * parameters override the profile.
   */
  @Test
  public void launcherRunsTheCliWithTheProfileAndTheParameters() throws IOException {
    Path home = folder.newFolder("home").toPath();
    Path profiles = Files.createDirectories(home.resolve("runner-profiles"));
    Path replay = home.resolve("replay.ndjson");
    try (Stream<String> lines =
        Files.lines(HOME.resolve("samples/sample-replay.ndjson"), StandardCharsets.UTF_8)) {
      Files.write(replay, lines.limit(60).collect(Collectors.toList()), StandardCharsets.UTF_8);
    }
    Path out = home.resolve("out");
    Files.write(
        profiles.resolve(FlexTemplateLauncher.PROFILE + ".properties"),
        List.of(
            "runner=DirectRunner",
            "source=replay",
            "sink=files",
            "input=${tidemark.home}/replay.ndjson",
            "output=" + home.resolve("ignored"),
            "targetParallelism=1"),
        StandardCharsets.UTF_8);
    String previous = System.getProperty("tidemark.home");
    System.setProperty("tidemark.home", home.toString());
    try {
      // Fixed 30 s windows and no early firings keep the DirectRunner run short.
      int exit =
          FlexTemplateLauncher.launch(
              "--output=" + out,
              "--windowSize=PT30S",
              "--windowPeriod=PT30S",
              "--earlyFiringDelay=none");
      assertThat(exit, is(0));
    } finally {
      System.setProperty("tidemark.home", previous);
    }
    JsonNode summary = Json.MAPPER.readTree(out.resolve("summary.json").toFile());
    assertThat(summary.get("read").asLong() > 0, is(true));
    assertThat(Files.exists(home.resolve("ignored")), is(false));
  }
}
