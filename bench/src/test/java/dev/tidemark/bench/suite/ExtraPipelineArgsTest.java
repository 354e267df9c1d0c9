package dev.tidemark.bench.suite;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;

import java.util.List;
import org.apache.beam.runners.flink.FlinkPipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

@RunWith(JUnit4.class)
public class ExtraPipelineArgsTest {
  private static final List<String> BASE =
      List.of("--runner=FlinkRunner", "--parallelism=2", "--maxBundleSize=1000");

  @Test
  public void anOptionTheJobAlreadySetsIsReplacedAndNewOnesAreAppended() {
    String[] merged = ExtraPipelineArgs.merge(BASE, "  --parallelism=1 --maxBundleTimeMills=20 ");
    assertArrayEquals(
        new String[] {
          "--runner=FlinkRunner",
          "--maxBundleSize=1000",
          "--parallelism=1",
          "--maxBundleTimeMills=20"
        },
        merged);
    // Beam accepts the result (it rejects a scalar option given twice).
    FlinkPipelineOptions options =
        PipelineOptionsFactory.fromArgs(merged)
            .withoutStrictParsing()
            .as(FlinkPipelineOptions.class);
    assertEquals(1, (int) options.getParallelism());
    assertEquals(20L, (long) options.getMaxBundleTimeMills());
  }

  @Test
  public void noPropertyLeavesTheArgumentsAsTheyAre() {
    assertArrayEquals(BASE.toArray(new String[0]), ExtraPipelineArgs.merge(BASE, " "));
  }
}
