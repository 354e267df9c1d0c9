package dev.tidemark.bench.flink;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.TidemarkPipeline;
import dev.tidemark.pipelines.io.BackfillSource;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.PaymentFeatures;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.beam.sdk.Pipeline;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The native Flink jobs compute what Tidemark computes: on one generated backfill, every decision
 * (account, window, pane, features, score, verdict), the duplicates and the dead letters of the
 * DataStream job and of the Flink SQL job equal Tidemark's on the DirectRunner, and each other's,
 * in Flink's BATCH and STREAMING execution modes.
 */
@RunWith(JUnit4.class)
public class NativeFlinkJobIT {
  @ClassRule public static final TemporaryFolder FOLDER = new TemporaryFolder();

  private static List<Path> files;
  private static Tally tidemark;

  @BeforeClass
  public static void runTidemark() throws Exception {
    Workload workload = Workload.generate(600, 20);
    files = workload.writeFiles(FOLDER.newFolder("backfill").toPath(), 1);
    String glob = files.get(0).toString();
    tidemark = Tally.start("test-tidemark", true);
    TidemarkOptions options =
        FlinkBaselinePart.options(
            "--runner=DirectRunner",
            "--source=backfill",
            "--input=" + glob,
            "--earlyFiringDelay=none");
    Pipeline pipeline = Pipeline.create(options);
    FlinkBaselinePart.countInto(
        TidemarkPipeline.expand(pipeline.apply("ReadBackfill", BackfillSource.from(glob)), options),
        "test-tidemark");
    pipeline.run().waitUntilFinish();
    Tally.finish("test-tidemark");
    assertThat(tidemark.count(Tally.Output.DECISIONS), greaterThan(100L));
    assertThat(tidemark.count(Tally.Output.DUPLICATES), greaterThan(0L));
    assertThat(tidemark.count(Tally.Output.DEAD_LETTERS), greaterThan(0L));
  }

  /** The DataStream job's runs, by execution mode (batch true), each run once. */
  private static final Map<Boolean, Tally> DATASTREAM = new java.util.HashMap<>();

  /** One run of the DataStream job, or with {@code sql} of the Flink SQL job, on the backfill. */
  private static Tally run(String runId, boolean batch, boolean sql) throws Exception {
    Tally tally = Tally.start(runId, true);
    StreamExecutionEnvironment env = NativeFlinkJob.environment(1, batch);
    NativeFlinkJob.Settings settings = new NativeFlinkJob.Settings();
    (sql
            ? FlinkSqlJob.backfill(env, files, settings)
            : NativeFlinkJob.backfill(env, files, settings))
        .countInto(runId);
    env.execute(runId);
    Tally.finish(runId);
    return tally;
  }

  private static synchronized Tally dataStream(boolean batch) throws Exception {
    Tally tally = DATASTREAM.get(batch);
    if (tally == null) {
      tally = run("test-native-" + (batch ? "batch" : "streaming"), batch, false);
      DATASTREAM.put(batch, tally);
    }
    return tally;
  }

  /** Decision id and pane to what a decision says, without the processing clocks. */
  private static Map<String, String> byWindow(Tally tally) {
    Map<String, String> out = new TreeMap<>();
    for (Decision d : tally.decisions()) {
      String previous =
          out.put(
              d.decisionId() + "#" + d.paneIndex(),
              d.key()
                  + " "
                  + d.windowStart()
                  + ".."
                  + d.windowEnd()
                  + " "
                  + d.paneTiming()
                  + " "
                  + withoutIngestionTime(d.features())
                  + " score="
                  + d.score()
                  + " "
                  + d.label());
      assertThat("two decisions for one pane: " + d, previous == null, is(true));
    }
    return out;
  }

  /**
   * The features without the latest event's ingestion time: Tidemark's BackfillSource takes it from
   * Beam's file metadata, whose last-modified time the local filesystem reports as 0 here, while
   * the native source reads the file's real last-modified time.
   */
  private static String withoutIngestionTime(dev.tidemark.transforms.values.Features f) {
    return String.format(
        java.util.Locale.ROOT,
        "txnCount=%d amountSum=%s amountMax=%s merchants=%d countries=%d latestEventTime=%s",
        f.getLong(PaymentFeatures.TXN_COUNT),
        f.decimal(PaymentFeatures.AMOUNT_SUM),
        f.decimal(PaymentFeatures.AMOUNT_MAX),
        f.getLong(PaymentFeatures.DISTINCT_MERCHANTS),
        f.getLong(PaymentFeatures.DISTINCT_COUNTRIES),
        f.latestEventTime());
  }

  private static java.util.Set<String> union(Map<String, String> a, Map<String, String> b) {
    java.util.Set<String> keys = new java.util.HashSet<>(a.keySet());
    keys.addAll(b.keySet());
    return keys;
  }

  private static void assertSameAsTidemark(Tally nativeRun) {
    assertSame(nativeRun, tidemark, "Tidemark");
  }

  private static void assertSame(Tally nativeRun, Tally reference, String what) {
    Map<String, String> actual = byWindow(nativeRun);
    Map<String, String> expected = byWindow(reference);
    List<String> differences = new java.util.ArrayList<>();
    for (String key : new java.util.TreeSet<>(union(actual, expected))) {
      if (!java.util.Objects.equals(actual.get(key), expected.get(key))) {
        differences.add(
            key + ": native " + actual.get(key) + " | " + what + " " + expected.get(key));
      }
    }
    assertThat(
        differences.size()
            + " of "
            + expected.size()
            + " "
            + what
            + " panes differ, e.g. "
            + differences.subList(0, Math.min(3, differences.size())),
        differences.isEmpty(),
        is(true));
    assertThat(nativeRun.exactChecksum(), is(reference.exactChecksum()));
    assertThat(nativeRun.count(Tally.Output.TOO_LATE), is(0L));
  }

  @Test
  public void batchExecutionEqualsTidemark() throws Exception {
    assertSameAsTidemark(dataStream(true));
  }

  @Test
  public void streamingExecutionEqualsTidemark() throws Exception {
    assertSameAsTidemark(dataStream(false));
  }

  /**
   * Flink SQL's window aggregation, batch: every pane equals the DataStream job's and Tidemark's.
   */
  @Test
  public void sqlBatchExecutionEqualsTheDataStreamJobAndTidemark() throws Exception {
    Tally sql = run("test-sql-batch", true, true);
    assertSame(sql, dataStream(true), "DataStream");
    assertSameAsTidemark(sql);
  }

  /** The same in STREAMING execution, where the planner slices the hopping windows. */
  @Test
  public void sqlStreamingExecutionEqualsTheDataStreamJobAndTidemark() throws Exception {
    Tally sql = run("test-sql-streaming", false, true);
    assertSame(sql, dataStream(false), "DataStream");
    assertSameAsTidemark(sql);
  }
}
