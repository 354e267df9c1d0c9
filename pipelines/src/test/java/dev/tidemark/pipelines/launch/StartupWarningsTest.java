package dev.tidemark.pipelines.launch;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

import dev.tidemark.pipelines.TidemarkOptions;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The start-up warning of the one combination that commits offsets it cannot back with state: the
 * DirectRunner reading Kafka. Said once, when the job is built, and for no other combination.
 */
@RunWith(JUnit4.class)
public class StartupWarningsTest {
  @ClassRule public static final TemporaryFolder FOLDER = new TemporaryFolder();

  private static TidemarkOptions options(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.add("--output=" + FOLDER.getRoot().toPath().resolve("out"));
    return PipelineOptionsFactory.fromArgs(all.toArray(new String[0])).as(TidemarkOptions.class);
  }

  @Test
  public void directRunnerReadingKafkaIsWarnedOnceWhenBuilt() {
    TidemarkOptions options =
        options(
            "--runner=DirectRunner",
            "--streaming=true",
            "--source=kafka",
            "--sink=files",
            "--kafkaBootstrapServers=localhost:1",
            "--kafkaInputTopic=payments",
            "--kafkaConsumerGroup=tidemark-direct");
    List<String> warnings = Launch.startupWarnings(options);
    assertThat(warnings, hasSize(1));
    assertThat(warnings.get(0), containsString("consumer group 'tidemark-direct'"));
    assertThat(warnings.get(0), containsString("windows that had not fired"));

    PrintStream stderr = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      Launch.build(options);
    } finally {
      System.setErr(stderr);
    }
    String printed = captured.toString(StandardCharsets.UTF_8);
    assertThat(printed.split("tidemark: warning: ", -1).length - 1, is(1));
    assertThat(printed, containsString(warnings.get(0)));
  }

  @Test
  public void otherCombinationsAreNotWarned() {
    Path replay = FOLDER.getRoot().toPath().resolve("any.ndjson");
    assertThat(
        Launch.startupWarnings(
            options("--runner=DirectRunner", "--source=replay", "--input=" + replay)),
        empty());
    assertThat(
        Launch.startupWarnings(
            options("--runner=DirectRunner", "--source=backfill", "--input=" + replay)),
        empty());
    assertThat(
        Launch.startupWarnings(
            options(
                "--runner=DirectRunner",
                "--source=pubsub",
                "--pubsubSubscription=projects/p/subscriptions/s")),
        empty());
    assertThat(
        Launch.startupWarnings(
            options(
                "--runner=FlinkRunner",
                "--source=kafka",
                "--kafkaInputTopic=payments",
                "--kafkaConsumerGroup=tidemark")),
        empty());
    assertThat(
        Launch.startupWarnings(options("--runner=DirectRunner", "--source=replay")),
        not(hasSize(1)));
  }
}
