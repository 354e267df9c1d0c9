package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.junit.Assert.assertThrows;

import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The checks of --fileRollInterval and --maxFutureSkew name the option and how to fix it. */
@RunWith(JUnit4.class)
public class OptionChecksTest {
  private static TidemarkOptions options(String... args) {
    return PipelineOptionsFactory.fromArgs(args).as(TidemarkOptions.class);
  }

  @Test
  public void fileRollIntervalMustBePositive() {
    for (String bad : new String[] {"PT0S", "PT-1M"}) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> TidemarkPipeline.checkOptions(options("--fileRollInterval=" + bad)));
      assertThat(e.getMessage(), containsString("--fileRollInterval=" + bad + " must be positive"));
    }
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> TidemarkPipeline.checkOptions(options("--fileRollInterval=soon")));
    assertThat(e.getMessage(), containsString("--fileRollInterval=soon is not an ISO-8601"));
    TidemarkPipeline.checkOptions(options("--fileRollInterval=PT5S"));
  }

  @Test
  public void maxFutureSkewMustNotBeNegative() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> TidemarkPipeline.checkOptions(options("--maxFutureSkew=PT-1M")));
    assertThat(e.getMessage(), containsString("--maxFutureSkew=PT-1M must not be negative"));
    TidemarkPipeline.checkOptions(options("--maxFutureSkew=PT0S"));
  }
}
