package dev.tidemark.bench.suite;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.transforms.util.Json;
import java.util.ArrayList;
import java.util.List;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

@RunWith(JUnit4.class)
public class BenchResultsTest {
  private static final String MACHINE = "test machine, 2 cores";

  private static JsonNode json(BenchResults results) throws Exception {
    return Json.MAPPER.readTree(results.toJson(MACHINE));
  }

  private static List<String> fieldNames(JsonNode node) {
    List<String> names = new ArrayList<>();
    node.fieldNames().forEachRemaining(names::add);
    return names;
  }

  @Test
  public void contractKeysComeFirstAndInOrder() throws Exception {
    JsonNode root = json(new BenchResults(BenchProfile.SMALL));

    assertThat(
        fieldNames(root),
        contains(
            "ratios",
            "scaling",
            "latencyMs",
            "stateBytesPerDedupKey",
            "stateBytesPerDedupKeyRocksDb",
            "scoring",
            "machine",
            "notes",
            "profile",
            "measurements",
            "series"));
    assertThat(fieldNames(root.get("ratios")), is(BenchResults.RATIOS));
    assertThat(
        fieldNames(root.get("scaling")), contains("throughput1MVs1kAccounts", "speedupP2VsP1"));
    assertThat(fieldNames(root.at("/scaling/speedupP2VsP1")), contains("tidemark", "native"));
    assertThat(fieldNames(root.get("latencyMs")), contains("p50", "p95", "p99", "rocksDb"));
    assertThat(fieldNames(root.at("/latencyMs/rocksDb")), contains("p50", "p95", "p99"));
    assertThat(fieldNames(root.get("scoring")), contains("transformVsRaw", "batch256VsBatch1"));
    assertThat(fieldNames(root.at("/scoring/transformVsRaw")), contains("xgboost", "onnx"));
    assertThat(root.get("machine").asText(), is(MACHINE));
    assertThat(root.get("profile").asText(), is("small"));
  }

  @Test
  public void numberKeysNameEveryNumericContractPathInOrder() throws Exception {
    BenchResults results = new BenchResults(BenchProfile.SMALL);
    JsonNode root = json(results);

    assertThat(new ArrayList<>(results.numbers().keySet()), is(BenchResults.NUMBER_KEYS));
    for (String key : BenchResults.NUMBER_KEYS) {
      assertThat(key, at(root, key).isNull(), is(true));
    }
  }

  @Test
  public void unmeasuredFiguresAreNullAndMeasuredOnesNumbers() throws Exception {
    BenchResults results = new BenchResults(BenchProfile.SMALL);
    results.ratio("dedupVsBeamDeduplicate", 1.25);
    results.latencyMs(40.0, null, 120.0);
    results.stateBytesPerDedupKey(96.0);

    JsonNode root = json(results);

    assertThat(at(root, "ratios.dedupVsBeamDeduplicate").asDouble(), is(1.25));
    assertThat(at(root, "ratios.tidemarkVsNativeFlinkBackfill").isNull(), is(true));
    assertThat(at(root, "latencyMs.p50").asDouble(), is(40.0));
    assertThat(at(root, "latencyMs.p95").isNull(), is(true));
    assertThat(at(root, "latencyMs.p99").asDouble(), is(120.0));
    assertThat(at(root, "stateBytesPerDedupKey").asDouble(), is(96.0));
    assertThat(at(root, "scaling.throughput1MVs1kAccounts").isNull(), is(true));
  }

  @Test
  public void nanAndInfinityAreWrittenAsNull() throws Exception {
    BenchResults results = new BenchResults(BenchProfile.SMALL);
    results.ratio("featuresVsNaiveCombine", Double.NaN);
    results.throughput1MVs1kAccounts(Double.POSITIVE_INFINITY);
    results.latencyMs(Double.NaN, 1.0, 2.0);
    results.measure("part", "nothing measured", Stats.of(Double.NaN), "ms");
    results.point("chart", "line", 1, Double.NaN);

    JsonNode root = json(results);

    assertThat(at(root, "ratios.featuresVsNaiveCombine").isNull(), is(true));
    assertThat(at(root, "scaling.throughput1MVs1kAccounts").isNull(), is(true));
    assertThat(at(root, "latencyMs.p50").isNull(), is(true));
    assertThat(results.numbers().get("latencyMs.p50") == null, is(true));
    assertThat(root.get("measurements").get(0).get("median").isNull(), is(true));
    assertThat(root.get("series").get(0).get("points").get(0).get(1).isNull(), is(true));
  }

  @Test
  public void rejectsARatioOutsideTheContract() {
    BenchResults results = new BenchResults(BenchProfile.SMALL);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> results.ratio("tidemarkVsSpark", 2.0));
    assertThat(e.getMessage(), containsString("tidemarkVsSpark"));
  }

  @Test
  public void noteUnmeasuredExplainsEveryNullOnce() {
    BenchResults results = new BenchResults(BenchProfile.SMALL);
    results.latencyMs(30.0, 90.0, 200.0);
    results.note("state", "stateBytesPerDedupKey is null: the run was too short");

    results.noteUnmeasured("suite");
    results.noteUnmeasured("suite");

    List<String> notes = results.notes();
    // Every figure but the three latencies set and the state figure the "state" note explains.
    assertThat(notes, hasSize(1 + BenchResults.NUMBER_KEYS.size() - 4));
    assertThat(notes, hasItem(containsString("stateBytesPerDedupKeyRocksDb is null")));
    assertThat(
        notes,
        hasItem(
            "suite: scaling.throughput1MVs1kAccounts is null: no part of this run measured it"));
    for (String ratio : BenchResults.RATIOS) {
      assertThat(notes, hasItem(containsString("ratios." + ratio + " is null")));
    }
  }

  @Test
  public void measurementsAndSeriesCarryTheDetail() throws Exception {
    BenchResults results = new BenchResults(BenchProfile.FULL);
    results.measure("latency", "p50", Stats.of(10, 30, 20), "ms");
    results.point("latency-cdf", "idempotent @50%", 12, 0.5);
    results.point("latency-cdf", "idempotent @50%", 40, 1.0);
    results.point("latency-cdf", "idempotent @90%", 15, 0.5);

    JsonNode root = json(results);

    JsonNode m = root.get("measurements").get(0);
    assertThat(m.get("part").asText(), is("latency"));
    assertThat(m.get("median").asDouble(), is(20.0));
    assertThat(m.get("min").asDouble(), is(10.0));
    assertThat(m.get("max").asDouble(), is(30.0));
    assertThat(m.get("repeats").asInt(), is(3));
    assertThat(m.get("unit").asText(), is("ms"));
    assertThat(root.get("series").size(), is(2));
    JsonNode first = root.get("series").get(0);
    assertThat(first.get("chart").asText(), is("latency-cdf"));
    assertThat(first.get("label").asText(), is("idempotent @50%"));
    assertThat(first.get("points").size(), is(2));
    assertThat(first.get("points").get(1).get(0).asDouble(), is(40.0));
  }

  private static JsonNode at(JsonNode root, String dottedPath) {
    return root.at("/" + dottedPath.replace('.', '/'));
  }
}
