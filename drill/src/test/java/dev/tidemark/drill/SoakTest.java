package dev.tidemark.drill;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.closeTo;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** The soak's figures: one-minute aggregates, the second half's max/min, the report and chart. */
public class SoakTest {
  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  /** A sample whose heap after a full collection is {@code heap} on the minute, else unmeasured. */
  private static Soak.Sample at(double seconds, double heap, double state, double checkpoint) {
    return new Soak.Sample(
        seconds,
        heap * 2,
        seconds % 60 == 0 ? heap : -1,
        state,
        state * 3,
        checkpoint,
        (long) seconds / 2,
        10);
  }

  @Test
  public void aMinuteIsItsMedianOfWhatWasMeasured() {
    List<Soak.Sample> minute =
        List.of(
            at(0, 500, 10, 3000),
            at(10, 200, 30, 9000),
            at(20, 800, 20, -1),
            at(30, 300, -1, 1000));
    // The heap after the minute's one full collection.
    assertThat(Soak.minutes(minute, Soak.Sample::heapAfterGcBytes, true), contains(500.0));
    // No state or checkpoint yet (-1) is left out: the median of 10, 30, 20.
    assertThat(Soak.minutes(minute, Soak.Sample::stateBytes, true), contains(20.0));
    // Of 3000, 9000, 1000: 3000.
    assertThat(Soak.minutes(minute, Soak.Sample::checkpointMillis, true), contains(3000.0));
  }

  @Test
  public void theProgressLineSaysUnknownForAFigureNotRead() {
    assertThat(Soak.mib(-1, "%.0f"), is("unknown"));
    assertThat(Soak.mib(3 * 1024 * 1024, "%.1f"), is("3.0 MiB"));
  }

  @Test
  public void subSecondCheckpointsAreJudgedAsTakingASecond() {
    List<Soak.Sample> samples = new ArrayList<>();
    for (int s = 0; s <= 600; s += 10) {
      // 200 ms to 900 ms: a ratio of 4.5 in noise, 1.0 with the floor.
      samples.add(at(s, 300, 1000, s % 20 == 0 ? 200 : 900));
    }
    assertThat(Soak.secondHalfRatios(samples).get("checkpointDuration"), closeTo(1.0, 1e-9));
    samples.replaceAll(
        sample -> sample.atSeconds() >= 540 ? at(sample.atSeconds(), 300, 1000, 3000) : sample);
    assertThat(Soak.secondHalfRatios(samples).get("checkpointDuration"), closeTo(3.0, 1e-9));
  }

  @Test
  public void rocksDbEstimatesAreSummedByStateForTheJob() {
    String exposition =
        "# TYPE flink_taskmanager_job_task_operator_paneInfo_rocksdb_estimate_num_keys gauge\n"
            + "flink_taskmanager_job_task_operator_paneInfo_rocksdb_estimate_num_keys{job_id=\"j1\","
            + "subtask_index=\"0\",} 10.0\n"
            + "flink_taskmanager_job_task_operator_paneInfo_rocksdb_estimate_num_keys{job_id=\"j1\","
            + "subtask_index=\"1\",} 5.0\n"
            + "flink_taskmanager_job_task_operator__timer_state_event_beam_timer_rocksdb_estimate_num_keys"
            + "{job_id=\"j1\",} 7.0\n"
            + "flink_taskmanager_job_task_operator_paneInfo_rocksdb_estimate_num_keys{job_id=\"old\",}"
            + " 99.0\n"
            + "flink_taskmanager_job_task_operator_paneInfo_rocksdb_estimate_live_data_size"
            + "{job_id=\"j1\",} 2048.0\n";
    assertThat(
        Soak.rocksDb(exposition, "j1", "num_keys"),
        is(Map.of("paneInfo", 15.0, "_timer_state_event_beam_timer", 7.0)));
    assertThat(Soak.rocksDb(exposition, "j1", "live_data_size"), is(Map.of("paneInfo", 2048.0)));
  }

  @Test
  public void theSecondHalfIsFlatWhenItsMinutesStayWithinTheBound() {
    List<Soak.Sample> samples = new ArrayList<>();
    for (int s = 0; s <= 600; s += 10) {
      // The first half grows (state filling up); the second half is steady with a GC sawtooth.
      double state = s < 300 ? 1000 + s * 10 : 4000 + (s % 60);
      double heap = (s % 60 == 0 ? 300 : 300 + 10 * (s % 60));
      samples.add(at(s, heap, state, 1000 + (s % 20)));
    }
    Map<String, Double> ratios = Soak.secondHalfRatios(samples);
    assertThat(ratios.keySet(), contains("heap", "state", "checkpointDuration"));
    assertThat(ratios.get("heap"), closeTo(1.0, 1e-9));
    assertThat(ratios.get("state") < Soak.FLAT, is(true));
    assertThat(ratios.get("checkpointDuration") < Soak.FLAT, is(true));
  }

  @Test
  public void stateThatKeepsGrowingIsNotFlat() {
    List<Soak.Sample> samples = new ArrayList<>();
    for (int s = 0; s <= 600; s += 10) {
      samples.add(at(s, 300, 1000 + s * 10, 1000));
    }
    // The second half's minutes run from about 4,000 to 7,000.
    assertThat(Soak.secondHalfRatios(samples).get("state"), greaterThan(Soak.FLAT));
  }

  @Test
  public void heapIsSummedOverAnEndpointsSeries() {
    String exposition =
        "# HELP flink_taskmanager_Status_JVM_Memory_Heap_Used Heap.Used (scope:"
            + " taskmanager_Status_JVM_Memory_Heap)\n"
            + "# TYPE flink_taskmanager_Status_JVM_Memory_Heap_Used gauge\n"
            + "flink_taskmanager_Status_JVM_Memory_Heap_Used{host=\"127_0_0_1\",tm_id=\"taskmanager_0\",}"
            + " 1.2345678E8\n"
            + "flink_taskmanager_Status_JVM_Memory_Heap_Max{host=\"127_0_0_1\",} 9.0E8\n";
    assertThat(Soak.heapUsed(exposition), closeTo(1.2345678E8, 1));
    assertThat(Soak.heapUsed("nothing here\n"), is(0.0));
  }

  @Test
  public void theReportListsTheFiguresAndTheChartIsDrawn() throws Exception {
    List<Soak.Sample> samples = new ArrayList<>();
    for (int s = 0; s <= 240; s += 10) {
      samples.add(at(s, 300 * Soak.MIB, 50 * Soak.MIB, 1500));
    }
    Soak.Outcome outcome =
        new Soak.Outcome(
            250,
            200,
            Duration.ofMinutes(4),
            48_000,
            0,
            List.of(new Soak.ProbeStep(250, 100, true), new Soak.ProbeStep(375, 9000, false)),
            samples,
            Soak.secondHalfRatios(samples),
            Map.of("paneInfo", List.of(100.0, 110.0)),
            10,
            true,
            true,
            List.of("probe: ..."));
    ObjectNode json = outcome.toJson();
    assertThat(json.get("recordsPerSecond").asDouble(), is(200.0));
    assertThat(json.get("secondHalfMaxOverMin").get("heap").asDouble(), is(1.0));
    assertThat(json.get("samples").size(), is(samples.size()));
    assertThat(json.get("samples").get(0).get("heapAfterGcMiB").asDouble(), is(300.0));
    assertThat(json.get("samples").get(1).get("heapAfterGcMiB").asDouble(), is(-1.0));
    assertThat(json.get("probe").get(1).get("keptUp").asBoolean(), is(false));
    assertThat(json.get("liveKeysByState").get("paneInfo").get(1).asDouble(), is(110.0));
    assertThat(json.get("holds").asBoolean(), is(true));

    Path png = SoakChart.write(samples, "soak", folder.getRoot().toPath().resolve("soak.png"));
    BufferedImage image = ImageIO.read(Files.newInputStream(png));
    assertThat(image.getWidth(), is(SoakChart.WIDTH));
    assertThat(image.getHeight(), is(SoakChart.HEIGHT));
  }
}
