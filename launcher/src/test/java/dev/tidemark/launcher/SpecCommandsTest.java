package dev.tidemark.launcher;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.is;

import dev.tidemark.model.ModelMetadata;
import dev.tidemark.pipelines.launch.ExitCodes;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecLoader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** {@code generate --spec} and {@code train --spec} as a user types them. */
@RunWith(JUnit4.class)
public class SpecCommandsTest {
  private static final Path HOME =
      Paths.get(System.getProperty("tidemark.home", "..")).toAbsolutePath().normalize();

  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  private String spec(String name) {
    return "--spec=" + HOME.resolve("specs/" + name + ".yaml");
  }

  @Test
  public void generateForTheLoginsSpecWritesTheBundledSample() throws IOException {
    Path out = folder.getRoot().toPath().resolve("logins.ndjson");
    assertThat(
        Tidemark.execute(
            "generate",
            spec("logins"),
            "--output=" + out,
            "--events=2000",
            "--accounts=200",
            "--eventsPerSecond=0.3",
            "--takeoverBurstsPerThousand=3"),
        is(0));
    assertThat(Files.mismatch(out, HOME.resolve("samples/logins-replay.ndjson")), is(-1L));
  }

  @Test
  public void generateForThePaymentsSpecIsTheDefaultStream() throws IOException {
    Path plain = folder.getRoot().toPath().resolve("plain.ndjson");
    Path withSpec = folder.getRoot().toPath().resolve("spec.ndjson");
    assertThat(Tidemark.execute("generate", "--output=" + plain, "--events=300"), is(0));
    assertThat(
        Tidemark.execute("generate", spec("payments"), "--output=" + withSpec, "--events=300"),
        is(0));
    assertThat(Files.mismatch(plain, withSpec), is(-1L));
    // A bundled spec is also named by its name, as run's --spec names it.
    Path byName = folder.getRoot().toPath().resolve("by-name.ndjson");
    assertThat(
        Tidemark.execute("generate", "--spec=payments", "--output=" + byName, "--events=300"),
        is(0));
    assertThat(Files.mismatch(plain, byName), is(-1L));
  }

  @Test
  public void aSpecWithoutAGeneratorOrThatCannotBeReadIsAUsageError() throws IOException {
    Path sensors = folder.getRoot().toPath().resolve("sensors.yaml");
    Files.writeString(
        sensors,
        Files.readString(HOME.resolve("specs/logins.yaml"))
            .replace("name: logins", "name: sensors"));
    Path out = folder.getRoot().toPath().resolve("x.ndjson");
    String err = stderr(() -> Tidemark.execute("generate", "--spec=" + sensors, "--output=" + out));
    assertThat(err, containsString("for the bundled specs [payments, logins]"));
    assertThat(
        Tidemark.execute("generate", "--spec=" + sensors, "--output=" + out),
        is(ExitCodes.USAGE_ERROR));
    assertThat(
        Tidemark.execute("generate", "--spec=no/such.yaml", "--output=" + out),
        is(ExitCodes.USAGE_ERROR));
    assertThat(Tidemark.execute("train", "--spec=no/such.yaml"), is(ExitCodes.USAGE_ERROR));
    assertThat(Files.exists(out), is(false));
  }

  @Test
  public void trainForTheLoginsSpecWritesModelsTheSpecAccepts() throws IOException {
    Path dir = folder.getRoot().toPath().resolve("model");
    assertThat(
        Tidemark.execute(
            "train",
            spec("logins"),
            "--input=" + HOME.resolve("samples/logins-replay.ndjson"),
            "--output=" + dir),
        is(0));
    PipelineSpec logins = SpecLoader.load(HOME.resolve("specs/logins.yaml"));
    for (String model :
        new String[] {"tidemark-logins-xgb-v1.ubj", "tidemark-logins-logreg-v1.onnx"}) {
      ModelMetadata metadata =
          ModelMetadata.parse(
              Files.readAllBytes(ModelMetadata.sidecarOf(dir.resolve(model))), model);
      assertThat(metadata.featureNames(), equalTo(logins.featureNames()));
    }
    assertThat(
        Files.readString(dir.resolve("tidemark-logins-v1.md")),
        containsString("Retrain: `./tidemark train --spec="));
  }

  private static String stderr(Runnable command) {
    PrintStream original = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      command.run();
    } finally {
      System.setErr(original);
    }
    return captured.toString(StandardCharsets.UTF_8);
  }
}
