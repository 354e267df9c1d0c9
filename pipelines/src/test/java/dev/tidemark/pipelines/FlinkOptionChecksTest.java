package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.junit.Assert.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.Test;

/** {@link TidemarkPipeline#checkOptions}'s Flink rules, on the {@code flink} runner profile. */
public class FlinkOptionChecksTest {
  private static TidemarkOptions flinkProfile(String... overrides) {
    Path here = Paths.get("").toAbsolutePath();
    Path home = Files.isDirectory(here.resolve("runner-profiles")) ? here : here.getParent();
    List<String> arguments =
        new RunnerProfiles(home).arguments("flink", new ArrayList<>(List.of(overrides)));
    return PipelineOptionsFactory.fromArgs(arguments.toArray(new String[0]))
        .withValidation()
        .as(TidemarkOptions.class);
  }

  @Test
  public void theFlinkProfilePassesItsOwnChecks() {
    TidemarkPipeline.checkOptions(flinkProfile());
  }

  @Test
  public void refusesFasterCopyInACheckpointedStreamingJob() {
    IllegalArgumentException refused =
        assertThrows(
            IllegalArgumentException.class,
            () -> TidemarkPipeline.checkOptions(flinkProfile("--fasterCopy=true")));
    assertThat(refused.getMessage(), containsString("--fasterCopy=true with checkpointing"));
    assertThat(refused.getMessage(), containsString("ConcurrentModificationException"));
  }

  @Test
  public void allowsFasterCopyInBatchAndWithoutCheckpoints() {
    TidemarkPipeline.checkOptions(
        flinkProfile(
            "--fasterCopy=true", "--streaming=false", "--source=backfill", "--sink=files"));
    TidemarkPipeline.checkOptions(
        flinkProfile(
            "--fasterCopy=true",
            "--checkpointingInterval=-1",
            "--source=backfill",
            "--sink=files",
            "--kafkaSinkMode=idempotent"));
  }
}
