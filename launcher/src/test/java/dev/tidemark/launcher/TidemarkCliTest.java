package dev.tidemark.launcher;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

import dev.tidemark.pipelines.launch.ExitCodes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The command line as a newcomer uses it: help, usage errors, exit codes and {@code generate}. */
@RunWith(JUnit4.class)
public class TidemarkCliTest {
  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  @Test
  public void generateIsDeterministicPerSeed() throws IOException {
    Path a = folder.getRoot().toPath().resolve("a.ndjson");
    Path b = folder.getRoot().toPath().resolve("b.ndjson");
    Path c = folder.getRoot().toPath().resolve("c.ndjson");
    assertThat(Tidemark.execute("generate", "--output=" + a, "--events=300", "--seed=5"), is(0));
    assertThat(Tidemark.execute("generate", "--output=" + b, "--events=300", "--seed=5"), is(0));
    assertThat(Tidemark.execute("generate", "--output=" + c, "--events=300", "--seed=6"), is(0));
    assertThat(Files.mismatch(a, b), is(-1L));
    assertThat(Files.mismatch(a, c) >= 0, is(true));
  }

  @Test
  public void aReplayOfABundledSampleReadsItsLabelsUnlessTheRunNamesOthersOrNone() {
    String home = System.getProperty("tidemark.home", "..");
    Path samples = Paths.get(home, "samples").toAbsolutePath().normalize();
    List<String> sample =
        List.of("--source=replay", "--input=" + samples.resolve("logins-replay.ndjson"));
    assertThat(
        Tidemark.Run.withSampleLabels(sample),
        is(
            List.of(
                sample.get(0),
                sample.get(1),
                "--labelsInput=" + samples.resolve("logins-labels.ndjson"))));
    List<String> none = new ArrayList<>(sample);
    none.add("--labelsInput=none");
    assertThat(Tidemark.Run.withSampleLabels(none), is(sample));
    List<String> own = new ArrayList<>(sample);
    own.add("--labelsInput=mine.ndjson");
    assertThat(Tidemark.Run.withSampleLabels(own), is(own));
    // Labels inside the replay are labels the run names too.
    List<String> inReplay = new ArrayList<>(sample);
    inReplay.add("--labelsInReplay=true");
    assertThat(Tidemark.Run.withSampleLabels(inReplay), is(inReplay));
    // Another replay, or the sample read through Kafka, has no labels by default.
    List<String> other = List.of("--source=replay", "--input=events-replay.ndjson");
    assertThat(Tidemark.Run.withSampleLabels(other), is(other));
    List<String> kafka = List.of("--source=kafka", sample.get(1));
    assertThat(Tidemark.Run.withSampleLabels(kafka), is(kafka));
  }

  @Test
  public void runHelpListsThePipelineOptions() {
    java.io.PrintStream original = System.out;
    java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
    System.setOut(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
    try {
      assertThat(Tidemark.execute("run", "--help"), is(0));
    } finally {
      System.setOut(original);
    }
    String help = captured.toString(java.nio.charset.StandardCharsets.UTF_8);
    for (String option : List.of("--profile", "--windowSize", "--allowedLateness", "--source")) {
      assertThat(help, org.hamcrest.Matchers.containsString(option));
    }
  }

  @Test
  public void badOptionsFailWithAMessageNotAStackTrace() {
    assertThat(Tidemark.execute("run", "--windowSize=five minutes"), is(2));
    assertThat(Tidemark.execute("run", "--profile=nope"), is(2));
  }

  private static String stdout(String... args) {
    java.io.PrintStream original = System.out;
    java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
    System.setOut(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
    try {
      assertThat(List.of(args).toString(), Tidemark.execute(args), is(ExitCodes.DONE));
    } finally {
      System.setOut(original);
    }
    return captured.toString(java.nio.charset.StandardCharsets.UTF_8);
  }

  @Test
  public void everySubcommandHasHelpThatListsTheExitCodes() {
    // Picocli formats descriptions with String.format: a bare '%' makes it warn on stderr and
    // print the description unformatted.
    java.io.ByteArrayOutputStream warnings = new java.io.ByteArrayOutputStream();
    java.io.PrintStream originalErr = System.err;
    System.setErr(new java.io.PrintStream(warnings, true, java.nio.charset.StandardCharsets.UTF_8));
    try {
      everySubcommandsHelp();
    } finally {
      System.setErr(originalErr);
    }
    String printed = warnings.toString(java.nio.charset.StandardCharsets.UTF_8);
    assertThat(printed, printed, not(containsString("picocli WARN")));
  }

  private void everySubcommandsHelp() {
    for (String command :
        List.of(
            "run",
            "generate",
            "train",
            "capture",
            "report",
            "job",
            "job list",
            "job stop",
            "job cancel")) {
      String help = stdout((command + " --help").split(" "));
      assertThat(command, help, org.hamcrest.Matchers.containsString("Usage: tidemark " + command));
      assertThat(command, help, org.hamcrest.Matchers.containsString("Exit codes:"));
      for (String code : List.of("0", "1", "2", "3")) {
        assertThat(
            command + " exit code " + code,
            help,
            org.hamcrest.Matchers.matchesPattern("(?s).*\\n\\s+" + code + "\\s+\\S.*"));
      }
    }
    assertThat(stdout("--help"), org.hamcrest.Matchers.containsString("Exit codes:"));
  }

  /** The bundled payments spec with {@code from} replaced by {@code to}, in a file of its own. */
  private Path paymentsSpecWith(String name, String from, String to) throws IOException {
    String text =
        Files.readString(
            Path.of(System.getProperty("tidemark.home", ".."), "specs", "payments.yaml"));
    assertThat(from, text.contains(from), is(true));
    Path file = folder.getRoot().toPath().resolve(name);
    Files.writeString(file, text.replace(from, to));
    return file;
  }

  @Test
  public void aSpecThatNamesAMissingFieldExitsTwoNamingItsPath() throws IOException {
    Path spec = paymentsSpecWith("typo.yaml", "of: merchantId}", "of: merchantID}");
    CliRun run = CliRun.of("run", "--spec=" + spec, "--output=" + folder.newFolder("out"));
    assertThat(run.err, run.exit, is(ExitCodes.USAGE_ERROR));
    assertThat(
        run.err,
        containsString(
            "tidemark: the spec "
                + spec
                + " cannot be used (1 problem):\n"
                + "  features[3].of: no field 'merchantID' in events.fields (did you mean"
                + " 'merchantId'?)"));
  }

  @Test
  public void aModelWhoseFeaturesDifferFromTheSpecExitsTwoNamingThePath() throws IOException {
    Path spec = paymentsSpecWith("renamed.yaml", "name: txnCount,", "name: eventCount,");
    CliRun run = CliRun.of("run", "--spec=" + spec, "--output=" + folder.newFolder("out"));
    assertThat(run.err, run.exit, is(ExitCodes.USAGE_ERROR));
    assertThat(run.err, containsString("tidemark: the spec " + spec + " cannot be used"));
    assertThat(
        run.err,
        containsString(
            "features[0]: the spec has 'eventCount' where the model default has 'txnCount'"));
    // --spec and --specUri name the same option: one of them.
    assertThat(
        CliRun.of("run", "--spec=" + spec, "--specUri=" + spec).exit, is(ExitCodes.USAGE_ERROR));
  }

  @Test
  public void anUnknownCommandOrOptionIsAUsageError() {
    assertThat(Tidemark.execute("frobnicate"), is(ExitCodes.USAGE_ERROR));
    assertThat(Tidemark.execute("generate", "--no-such-flag"), is(ExitCodes.USAGE_ERROR));
  }

  /** Options accepted, then the job fails (its output cannot be written): exit code 3. */
  @Test
  public void aRunThatFailsAfterItsOptionsWereAcceptedExitsWith3() throws IOException {
    Path input = folder.getRoot().toPath().resolve("small.ndjson");
    assertThat(
        Tidemark.execute("generate", "--output=" + input, "--events=20", "--accounts=2"), is(0));
    Path blocker = folder.newFile("not-a-directory").toPath();
    assertThat(
        Tidemark.execute("run", "--input=" + input, "--output=" + blocker.resolve("out")),
        is(ExitCodes.RUN_FAILED));
  }

  /** One payment as a structured-mode CloudEvent line. */
  static String event(String id, String account, String amount, String time) {
    return "{\"specversion\":\"1.0\",\"id\":\""
        + id
        + "\",\"source\":\"/tidemark/test\",\"type\":\"payments.transaction.v1\",\"time\":\""
        + time
        + "\",\"data\":{\"accountId\":\""
        + account
        + "\",\"amount\":"
        + amount
        + ",\"currency\":\"GBP\"}}";
  }
}
