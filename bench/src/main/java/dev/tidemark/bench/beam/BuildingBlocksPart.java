package dev.tidemark.bench.beam;

import dev.tidemark.bench.suite.BenchPart;
import dev.tidemark.bench.suite.BenchProfile;
import dev.tidemark.bench.suite.BenchResults;
import dev.tidemark.bench.suite.Stats;
import dev.tidemark.transforms.ComputeFeatures;
import dev.tidemark.transforms.DeduplicateEvents;
import dev.tidemark.transforms.values.Event;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.beam.runners.flink.FlinkPipelineOptions;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Duration;

/**
 * Beam's own building blocks: {@code DeduplicateEvents} against {@link BeamDeduplicate} ({@code
 * Deduplicate.keyedValues()} in event time), and {@code ComputeFeatures} against {@link
 * NaiveSlidingFeatures} ({@code SlidingWindows} + {@code Combine.perKey}), on the same runner and
 * input in the same run.
 *
 * <p>Method: the input is the generated stream already parsed into {@link Event}s (all copies for
 * dedup, the first copies for features), timestamped with event time and held in memory (see {@link
 * BenchInputs}). Each round runs three batch jobs on the FlinkRunner's embedded cluster: one that
 * only reads the input, then ours and the baseline in alternating order; after {@code warmups}
 * discarded rounds, {@code repeats} measured ones. A side's time is its job's wall time minus the
 * read-only job's of the same round; events/s is input events over that time. The ratio is ours
 * over the baseline's median events/s.
 */
public final class BuildingBlocksPart implements BenchPart {
  static final String NAME = "beam-building-blocks";
  static final long SEED = 20261206L;
  static final Duration HORIZON = DeduplicateEvents.DEFAULT_HORIZON;
  static final int PARALLELISM = 1;

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public void run(BenchProfile profile, BenchResults results) throws Exception {
    int accounts = profile.accounts.get(0);
    BenchInputs.Stream stream =
        BenchInputs.generate(BenchInputs.config(profile.events, accounts, SEED));
    List<Event> unique = stream.firstCopies();
    results.note(
        NAME,
        String.format(
            Locale.ROOT,
            "method: FlinkRunner batch translation (DataSet), jobs run one after another on one"
                + " shared embedded MiniCluster (EmbeddedFlinkBatchShim), parallelism %d, not the"
                + " DirectRunner, whose own overhead dominates"
                + " (docs/benchmarks.md); input: %d generated events (%d with duplicates, %d"
                + " accounts) already parsed and held in memory, timestamps = event time; each"
                + " round runs a read-only job, then ours and the baseline in alternating order;"
                + " time = job wall time minus the read-only job's of the same round (submission"
                + " and reading cancel out); %d warm-up round(s), %d measured, median [min..max]",
            PARALLELISM,
            unique.size(),
            stream.events.size(),
            accounts,
            profile.warmups,
            profile.repeats));
    try (BenchInputs.Held<Event> all = BenchInputs.hold(stream.events, Event.EventCoder.of());
        BenchInputs.Held<Event> firsts = BenchInputs.hold(unique, Event.EventCoder.of());
        FlinkBatchRuns runs = FlinkBatchRuns.start(PARALLELISM)) {
      Double dedup =
          compare(
              runs,
              profile,
              results,
              "dedup",
              all,
              "DeduplicateEvents",
              events -> {
                DeduplicateEvents.Result r =
                    events.apply(
                        "DeduplicateEvents", DeduplicateEvents.create().withHorizon(HORIZON));
                FlinkBatchRuns.count(r.events(), "Output");
                FlinkBatchRuns.count(r.duplicates(), "Duplicates");
              },
              "Deduplicate.keyedValues",
              events -> {
                FlinkBatchRuns.count(
                    events.apply("Deduplicate", BeamDeduplicate.of(HORIZON)), "Output");
              });
      results.ratio("dedupVsBeamDeduplicate", dedup);
      Double features =
          compare(
              runs,
              profile,
              results,
              "features",
              firsts,
              "ComputeFeatures",
              events -> {
                ComputeFeatures.Result r =
                    events.apply(
                        "ComputeFeatures",
                        ComputeFeatures.of(
                            ComputeFeatures.DEFAULT_WINDOW_SIZE,
                            ComputeFeatures.DEFAULT_WINDOW_PERIOD));
                FlinkBatchRuns.count(r.features(), "Output");
                FlinkBatchRuns.count(r.tooLate(), "TooLate");
              },
              "SlidingWindows+Combine.perKey",
              events -> {
                FlinkBatchRuns.count(
                    events.apply(
                        "NaiveFeatures",
                        NaiveSlidingFeatures.of(
                            ComputeFeatures.DEFAULT_WINDOW_SIZE,
                            ComputeFeatures.DEFAULT_WINDOW_PERIOD)),
                    "Output");
              });
      results.ratio("featuresVsNaiveCombine", features);
    }
  }

  /**
   * Measures ours against the baseline on {@code input}; records the figures and returns the ratio
   * of the median events/s.
   */
  private static Double compare(
      FlinkBatchRuns runs,
      BenchProfile profile,
      BenchResults results,
      String what,
      BenchInputs.Held<Event> input,
      String oursName,
      Consumer<PCollection<Event>> ours,
      String baselineName,
      Consumer<PCollection<Event>> baseline)
      throws Exception {
    Map<String, List<Double>> rates = new LinkedHashMap<>();
    Map<String, List<Double>> seconds = new LinkedHashMap<>();
    Map<String, Long> outputs = new LinkedHashMap<>();
    for (String side : List.of("read", oursName, baselineName)) {
      rates.put(side, new ArrayList<>());
      seconds.put(side, new ArrayList<>());
    }
    int rounds = profile.warmups + profile.repeats;
    for (int round = 0; round < rounds; round++) {
      boolean measured = round >= profile.warmups;
      FlinkBatchRuns.Run read = runs.run(pipeline(input, events -> {}));
      List<String> order =
          round % 2 == 0 ? List.of(oursName, baselineName) : List.of(baselineName, oursName);
      for (String side : order) {
        FlinkBatchRuns.Run run = runs.run(pipeline(input, side.equals(oursName) ? ours : baseline));
        outputs.put(side, run.counter(FlinkBatchRuns.NAMESPACE, "Output"));
        if (measured) {
          double net = run.seconds - read.seconds;
          seconds.get(side).add(run.seconds);
          rates.get(side).add(net > 0 ? input.size() / net : Double.NaN);
        }
      }
      if (measured) {
        seconds.get("read").add(read.seconds);
      }
    }
    results.measure(NAME, what + " read-only job", stats(seconds.get("read")), "s");
    for (String side : List.of(oursName, baselineName)) {
      results.measure(NAME, what + " " + side + " job", stats(seconds.get(side)), "s");
      results.measure(
          NAME, what + " " + side + " (minus read)", stats(rates.get(side)), "events/s");
    }
    long oursOut = outputs.get(oursName);
    long baseOut = outputs.get(baselineName);
    results.note(
        NAME,
        String.format(
            Locale.ROOT,
            "%s: %s output %d elements, %s %d%s",
            what,
            oursName,
            oursOut,
            baselineName,
            baseOut,
            oursOut == baseOut ? " (equal)" : " (DIFFERENT: check the comparison)"));
    double oursRate = Stats.of(toArray(rates.get(oursName))).median();
    double baseRate = Stats.of(toArray(rates.get(baselineName))).median();
    return Double.isFinite(oursRate) && Double.isFinite(baseRate) && baseRate > 0
        ? oursRate / baseRate
        : null;
  }

  private static Pipeline pipeline(
      BenchInputs.Held<Event> input, Consumer<PCollection<Event>> step) {
    Pipeline pipeline =
        Pipeline.create(FlinkBatchRuns.options(FlinkPipelineOptions.class, PARALLELISM));
    PCollection<Event> events =
        pipeline.apply("ReadHeld", input.read(PARALLELISM, Event::eventTime));
    FlinkBatchRuns.count(events, "Read");
    step.accept(events);
    return pipeline;
  }

  private static Stats stats(List<Double> values) {
    return Stats.of(toArray(values));
  }

  private static double[] toArray(List<Double> values) {
    return values.stream().mapToDouble(Double::doubleValue).toArray();
  }
}
