package dev.tidemark.bench.latency;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.closeTo;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;

import dev.tidemark.bench.kafka.LatencyRun;
import dev.tidemark.bench.kafka.StateBackend;
import dev.tidemark.bench.suite.BenchProfile;
import java.util.ArrayList;
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
    assertThat(LatencyRun.shareLabel(0.5), is("50%"));
    assertThat(LatencyRun.shareLabel(0.9), is("90%"));
  }

  @Test
  public void everyProfileHasSizes() {
    for (BenchProfile profile : BenchProfile.values()) {
      for (StateBackend backend : StateBackend.values()) {
        LatencyPart.Sizes sizes = LatencyPart.Sizes.of(profile, backend);
        assertThat(sizes.throughputEvents > 0 && sizes.latencyRepeats > 0, is(true));
      }
    }
  }

  /** A probe that keeps up at or below {@code capacity} and records every rate it was asked. */
  private static LatencyPart.Probe recording(double capacity, List<Double> probed) {
    return rate -> {
      probed.add(rate);
      return rate <= capacity;
    };
  }

  @Test
  public void searchStepsDownThenProbesHalfwayBackUp() throws Exception {
    List<Double> probed = new ArrayList<>();

    LatencyPart.Search search = LatencyPart.search(1000, recording(700, probed));

    // 1000 and 800 fall behind, 640 keeps up, 720 (halfway to 800) does not.
    assertThat(probed, contains(1000.0, 800.0, 640.0, 720.0));
    assertThat(search.found, is(true));
    assertThat(search.rate, closeTo(640, 1e-9));
    assertThat(search.tried, is(probed));
  }

  @Test
  public void searchKeepsTheHalfwayRateWhenItKeepsUp() throws Exception {
    LatencyPart.Search search = LatencyPart.search(1000, rate -> rate <= 750);

    assertThat(search.tried, contains(1000.0, 800.0, 640.0, 720.0));
    assertThat(search.rate, closeTo(720, 1e-9));
  }

  @Test
  public void searchProbesAboveTheStartWhenTheFirstProbeKeepsUp() throws Exception {
    LatencyPart.Search search = LatencyPart.search(1000, rate -> true);

    assertThat(search.tried, contains(1000.0, 1125.0));
    assertThat(search.rate, closeTo(1125, 1e-9));
  }

  @Test
  public void searchThatNeverKeepsUpEndsAtTheLowestProbe() throws Exception {
    List<Double> probed = new ArrayList<>();

    LatencyPart.Search search = LatencyPart.search(1000, recording(0, probed));

    assertThat(probed, hasSize(LatencyPart.MAX_PROBES));
    assertThat(search.found, is(false));
    assertThat(search.rate, is(probed.get(probed.size() - 1)));
    assertThat(search.rate, closeTo(1000 * Math.pow(0.8, LatencyPart.MAX_PROBES - 1), 1e-6));
  }
}
