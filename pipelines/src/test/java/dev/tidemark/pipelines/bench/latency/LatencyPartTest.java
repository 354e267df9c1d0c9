package dev.tidemark.pipelines.bench.latency;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;

import dev.tidemark.pipelines.bench.suite.BenchProfile;
import java.util.List;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The pure pieces of {@link LatencyPart}; the suite's smoke test runs the part itself. */
@RunWith(JUnit4.class)
public class LatencyPartTest {
  @Test
  public void cdfHasEvenlySpacedFractionsAndNearestRankLatencies() {
    long[] latencies = {40, 10, 30, 20};

    List<double[]> cdf = LatencyPart.cdf(latencies, 4);

    assertThat(cdf, hasSize(4));
    assertThat(cdf.get(0)[0], is(10.0));
    assertThat(cdf.get(0)[1], is(0.25));
    assertThat(cdf.get(1)[0], is(20.0));
    assertThat(cdf.get(3)[0], is(40.0));
    assertThat(cdf.get(3)[1], is(1.0));
    assertThat(latencies[0], is(40L));
  }

  @Test
  public void cdfOfNothingIsEmpty() {
    assertThat(LatencyPart.cdf(new long[0], 100), hasSize(0));
  }

  @Test
  public void sharesAreLabelledInPercent() {
    assertThat(LatencyPart.shareLabel(0.5), is("50%"));
    assertThat(LatencyPart.shareLabel(0.9), is("90%"));
  }

  @Test
  public void everyProfileHasSizes() {
    for (BenchProfile profile : BenchProfile.values()) {
      LatencyPart.Sizes sizes = LatencyPart.Sizes.of(profile);
      assertThat(sizes.throughputEvents > 0 && sizes.latencyRepeats > 0, is(true));
    }
  }
}
