package dev.tidemark.bench.suite;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

@RunWith(JUnit4.class)
public class StatsTest {
  @Test
  public void oddCountTakesTheMiddleValue() {
    Stats stats = Stats.of(30, 10, 20);
    assertThat(stats.median(), is(20.0));
    assertThat(stats.min(), is(10.0));
    assertThat(stats.max(), is(30.0));
    assertThat(stats.count(), is(3));
  }

  @Test
  public void evenCountAveragesTheTwoMiddleValues() {
    Stats stats = Stats.of(4, 1, 3, 2);
    assertThat(stats.median(), is(2.5));
    assertThat(stats.min(), is(1.0));
    assertThat(stats.max(), is(4.0));
    assertThat(stats.count(), is(4));
  }

  @Test
  public void oneValueIsItsOwnMedianMinAndMax() {
    Stats stats = Stats.of(7.5);
    assertThat(stats.median(), is(7.5));
    assertThat(stats.min(), is(7.5));
    assertThat(stats.max(), is(7.5));
    assertThat(stats.toString(), is("7.5 [7.5..7.5] n=1"));
  }

  @Test
  public void doesNotReorderTheCallersValues() {
    double[] values = {3, 1, 2};
    Stats.of(values);
    assertThat(values[0], is(3.0));
  }

  @Test
  public void rejectsNoValues() {
    assertThrows(IllegalArgumentException.class, Stats::of);
  }

  @Test
  public void percentileIsTheNearestRank() {
    long[] sorted = {10, 20, 30, 40};
    assertThat(Stats.percentile(sorted, 0.25), is(10.0));
    assertThat(Stats.percentile(sorted, 0.5), is(20.0));
    assertThat(Stats.percentile(sorted, 0.51), is(30.0));
    assertThat(Stats.percentile(sorted, 0.99), is(40.0));
    assertThat(Stats.percentile(sorted, 0), is(10.0));
    assertThat(Double.isNaN(Stats.percentile(new long[0], 0.5)), is(true));
  }
}
