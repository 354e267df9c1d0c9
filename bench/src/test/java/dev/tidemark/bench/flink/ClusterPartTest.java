package dev.tidemark.bench.flink;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.nullValue;

import dev.tidemark.bench.suite.BenchProfile;
import dev.tidemark.bench.suite.BenchResults;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class ClusterPartTest {
  @Rule public final TemporaryFolder temp = new TemporaryFolder();

  @Test
  public void withoutALocalClusterEveryFigureIsNullWithTheReason() throws Exception {
    String home = System.getProperty("tidemark.home");
    System.setProperty("tidemark.home", temp.getRoot().getPath());
    BenchResults results = new BenchResults(BenchProfile.SMALL);
    try {
      new ClusterPart().run(BenchProfile.SMALL, results);
    } finally {
      if (home == null) {
        System.clearProperty("tidemark.home");
      } else {
        System.setProperty("tidemark.home", home);
      }
    }

    for (String key :
        new String[] {
          "ratios.tidemarkVsNativeFlinkRocksDb",
          "ratios.tidemarkVsFlinkSqlRocksDb",
          "ratios.eosThroughputCost",
          "scaling.speedupP2VsP1.tidemark",
          "scaling.speedupP2VsP1.native"
        }) {
      assertThat(key, results.numbers().get(key), is(nullValue()));
      assertThat(
          results.notes(),
          hasItem(containsString(key + " is null: no local cluster in " + temp.getRoot())));
    }
    assertThat(results.notes(), hasItem(containsString("./tidemark cluster up")));
  }
}
