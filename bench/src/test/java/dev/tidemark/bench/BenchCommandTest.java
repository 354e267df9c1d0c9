package dev.tidemark.bench;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;

import dev.tidemark.pipelines.launch.ExitCodes;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

@RunWith(JUnit4.class)
public class BenchCommandTest {
  @Test
  public void helpListsTheOptionsAndExitCodes() {
    PrintStream original = System.out;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      assertThat(BenchCommand.execute("--help"), is(ExitCodes.DONE));
    } finally {
      System.setOut(original);
    }
    String help = captured.toString(StandardCharsets.UTF_8);
    assertThat(help, containsString("Usage: tidemark bench"));
    assertThat(help, containsString("--parts"));
    assertThat(help, containsString("Exit codes:"));
  }

  @Test
  public void anUnknownProfileOrOptionIsAUsageError() {
    assertThat(BenchCommand.execute("--no-such-flag"), is(ExitCodes.USAGE_ERROR));
    assertThat(BenchCommand.execute("--profile=nope"), is(ExitCodes.USAGE_ERROR));
  }
}
