package dev.tidemark.pipelines.launch;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.endsWith;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.Assert.assertThrows;

import dev.tidemark.pipelines.RunnerProfiles;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.TidemarkPipeline;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.runners.flink.FlinkPipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.Test;

/**
 * {@link TidemarkPipeline#checkOptions}'s Flink rules, on the {@code flink} and {@code
 * flink-cluster} runner profiles.
 */
public class FlinkOptionChecksTest {
  private static TidemarkOptions flinkProfile(String... overrides) {
    return profile("flink", overrides);
  }

  private static TidemarkOptions clusterProfile(String... overrides) {
    return profile("flink-cluster", overrides);
  }

  private static TidemarkOptions profile(String name, String... overrides) {
    Path here = Paths.get("").toAbsolutePath();
    Path home = Files.isDirectory(here.resolve("runner-profiles")) ? here : here.getParent();
    List<String> arguments =
        new RunnerProfiles(home).arguments(name, new ArrayList<>(List.of(overrides)));
    return PipelineOptionsFactory.fromArgs(arguments.toArray(new String[0]))
        .withValidation()
        .as(TidemarkOptions.class);
  }

  @Test
  public void theFlinkClusterProfilePassesItsOwnChecksAndSubmitsOnly() {
    TidemarkOptions options = clusterProfile();
    OptionChecks.check(options);
    assertThat(FlinkClusterLaunch.submitsToFlinkCluster(options), is(true));
    assertThat(Launch.submitsOnly(options), is(true));
    // Its state is the cluster's: it sets no Beam state backend and no launcher path.
    FlinkPipelineOptions flink = options.as(FlinkPipelineOptions.class);
    assertThat(flink.getStateBackend(), is(nullValue()));
    assertThat(flink.getStateBackendStoragePath(), is(nullValue()));
    assertThat(flink.getFilesToStage().get(0), endsWith("pipelines/target/tidemark-flink-job.jar"));
  }

  @Test
  public void aBatchJobOrALocalMasterIsNotSubmitOnly() {
    assertThat(FlinkClusterLaunch.submitsToFlinkCluster(flinkProfile()), is(false));
    assertThat(
        FlinkClusterLaunch.submitsToFlinkCluster(
            clusterProfile("--streaming=false", "--source=backfill", "--sink=files")),
        is(false));
  }

  @Test
  public void refusesALauncherLocalCheckpointPathWithARemoteMaster() {
    for (String path :
        List.of("file:///tmp/checkpoints", "FILE:/tmp/cp", "/tmp/checkpoints", "out/checkpoints")) {
      IllegalArgumentException refused =
          assertThrows(
              path,
              IllegalArgumentException.class,
              () ->
                  OptionChecks.check(
                      clusterProfile(
                          "--stateBackend=filesystem", "--stateBackendStoragePath=" + path)));
      assertThat(refused.getMessage(), containsString("--stateBackendStoragePath=" + path));
      assertThat(refused.getMessage(), containsString("state.checkpoints.dir"));
      assertThat(refused.getMessage(), containsString("s3://, gs:// or hdfs://"));
    }
    // The flink profile's own file: path, pointed at a remote master.
    IllegalArgumentException refused =
        assertThrows(
            IllegalArgumentException.class,
            () -> OptionChecks.check(flinkProfile("--flinkMaster=jobmanager:8081")));
    assertThat(refused.getMessage(), containsString("--flinkMaster=jobmanager:8081"));
  }

  @Test
  public void acceptsASharedCheckpointPathOrALocalMaster() {
    for (String path : List.of("s3://bucket/checkpoints", "gs://b/cp", "hdfs://nn:8020/cp")) {
      OptionChecks.check(
          clusterProfile("--stateBackend=filesystem", "--stateBackendStoragePath=" + path));
    }
    // In the launcher's JVM every task sees the launcher's disk.
    OptionChecks.check(flinkProfile("--flinkMaster=[local]"));
    OptionChecks.check(flinkProfile("--flinkMaster=[auto]"));
  }

  @Test
  public void refusesBeamsRocksDbBackendWhereItsClassesAreMissing() {
    IllegalArgumentException refused =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                OptionChecks.check(
                    clusterProfile(
                        "--stateBackend=rocksdb", "--stateBackendStoragePath=s3://b/cp")));
    assertThat(refused.getMessage(), containsString("state.backend.type: rocksdb"));
  }

  @Test
  public void theFlinkProfilePassesItsOwnChecks() {
    OptionChecks.check(flinkProfile());
  }

  @Test
  public void refusesTheTransactionalSinkWithoutFinishedBundles() {
    for (TidemarkOptions options :
        List.of(
            flinkProfile("--finishBundleBeforeCheckpointing=false"),
            clusterProfile("--finishBundleBeforeCheckpointing=false"))) {
      assertThat(options.getKafkaSinkMode(), is(TidemarkOptions.KafkaSinkMode.transactional));
      IllegalArgumentException refused =
          assertThrows(IllegalArgumentException.class, () -> OptionChecks.check(options));
      assertThat(refused.getMessage(), containsString("--finishBundleBeforeCheckpointing=true"));
    }
    // The idempotent sink does not number its records.
    OptionChecks.check(
        flinkProfile("--finishBundleBeforeCheckpointing=false", "--kafkaSinkMode=idempotent"));
  }

  @Test
  public void refusesFasterCopyInACheckpointedStreamingJob() {
    IllegalArgumentException refused =
        assertThrows(
            IllegalArgumentException.class,
            () -> OptionChecks.check(flinkProfile("--fasterCopy=true")));
    assertThat(refused.getMessage(), containsString("--fasterCopy=true with checkpointing"));
    assertThat(refused.getMessage(), containsString("ConcurrentModificationException"));
  }

  @Test
  public void allowsFasterCopyInBatchAndWithoutCheckpoints() {
    OptionChecks.check(
        flinkProfile(
            "--fasterCopy=true", "--streaming=false", "--source=backfill", "--sink=files"));
    OptionChecks.check(
        flinkProfile(
            "--fasterCopy=true",
            "--checkpointingInterval=-1",
            "--source=backfill",
            "--sink=files",
            "--kafkaSinkMode=idempotent"));
  }
}
