// How fast Tidemark's streaming job can be at most, stage by stage (issue 6, twentieth round).
// Not part of the build: a throwaway main kept so that the figures in docs/benchmarks.md can be
// reproduced. It uses the native-Flink part's workload and runs (same package): the suite's
// stream (seed fixed, 1k accounts) of N events, one native backfill for the expected counts, then
// R rounds of: native Flink's whole streaming job, and Tidemark's streaming job on the FlinkRunner
// (parallelism 2, the suite's options) cut after a stage and counted there:
//   parse    Kafka -> ParseCloudEvents            (counts the parsed events and dead letters)
//   dedup    ... -> DeduplicateEvents             (counts unique events and duplicates)
//   features ... -> ComputeFeatures (gate, window) (counts feature panes, no decisions)
//   full     the suite's whole job                (FlinkBaselinePart.tidemarkStreaming)
// A cut job is done when its counters reach the native backfill's counts (every end marker
// dead-lettered, every unique event or pane counted). Each prints events/s = input lines /
// (submission to last output counted), as the suite does.
//
//   mvn -B -q -o install -DskipTests
//   mkdir -p /tmp/sc && javac -nowarn -cp pipelines/target/tidemark.jar -d /tmp/sc \
//       docs/experiments/StreamCeiling.java
//   OPT_OUT_TRACKING=true OMP_NUM_THREADS=1 java -Xmx4g -Dai.djl.offline=true \
//       --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
//       -cp /tmp/sc:pipelines/target/tidemark.jar \
//       dev.tidemark.pipelines.bench.flink.StreamCeiling 200000 3 parse,dedup,features,full
// and, for the features cut at other fan-outs (Tidemark's --windowPeriod; native stays at PT30S):
//       ... StreamCeiling 200000 4 features PT5M     (fan-out 1; PT5S is fan-out 60)
package dev.tidemark.pipelines.bench.flink;

import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.TidemarkPipeline;
import dev.tidemark.pipelines.io.kafka.EmbeddedKafka;
import dev.tidemark.transforms.ComputeFeatures;
import dev.tidemark.transforms.DeadLetter;
import dev.tidemark.transforms.DeduplicateEvents;
import dev.tidemark.transforms.ParseCloudEvents;
import dev.tidemark.transforms.PaymentEvent;
import dev.tidemark.transforms.RawRecord;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.beam.runners.flink.TidemarkFlinkJobs;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithFailures;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Duration;

public class StreamCeiling {
  public static void main(String[] args) throws Exception {
    int events = Integer.parseInt(args[0]);
    int rounds = Integer.parseInt(args[1]);
    List<String> cuts = List.of(args[2].split(","));
    // Optional: Tidemark's --windowPeriod for the cut jobs (fan-out = PT5M / period). With any other
    // period than the suite's PT30S the pane count is unknown, so a cut job is done once every dead
    // letter is counted and no output came for 10 s (the rate is still lines / last output).
    String period = args.length > 3 ? args[3] : "PT30S";
    Workload workload = Workload.generate(events, FlinkBaselinePart.ACCOUNTS);
    Path work = Files.createTempDirectory("sc");
    List<Path> files = workload.writeFiles(work.resolve("backfill"), 2);
    FlinkBaselinePart.Run backfill = FlinkBaselinePart.nativeBackfill(files, workload, 2);
    String expected = backfill.checksum;
    long deadLetters = FlinkBaselinePart.expectedDeadLetters(expected);
    long duplicates = FlinkBaselinePart.field(expected, "duplicates");
    long unique = workload.lines.size() - deadLetters - duplicates;
    long decisions = FlinkBaselinePart.expectedDecisions(expected);
    System.out.printf("expected: %s unique=%d%n", expected, unique);
    try (EmbeddedKafka broker = EmbeddedKafka.start()) {
      for (int i = 0; i < rounds; i++) {
        FlinkBaselinePart.Run n = FlinkBaselinePart.nativeStreaming(broker, workload, 2, expected);
        System.out.printf("round %d native %.0f events/s%n", i, n.eventsPerSecond());
        for (String cut : cuts) {
          double rate;
          if (cut.equals("full")) {
            rate = FlinkBaselinePart.tidemarkStreaming(broker, workload, 2, expected)
                .eventsPerSecond();
          } else {
            long target = cut.equals("features") ? decisions : unique;
            if (!period.equals("PT30S")) {
              target = Long.MAX_VALUE;
            }
            rate = cutRun(broker, workload, cut, target, deadLetters, period);
          }
          System.out.printf("round %d tidemark-%s %.0f events/s (ratio %.3f)%n",
              i, cut, rate, rate / n.eventsPerSecond());
        }
      }
    }
    System.exit(0);
  }

  private static Object call(String name, TidemarkOptions options) throws Exception {
    Method m = TidemarkPipeline.class.getDeclaredMethod(name, TidemarkOptions.class);
    m.setAccessible(true);
    return m.invoke(null, options);
  }

  static double cutRun(EmbeddedKafka broker, Workload workload, String cut, long target,
      long deadLetters, String period) throws Exception {
    String runId = "cut-" + cut + "-" + System.nanoTime();
    String topic = FlinkBaselinePart.produce(broker, runId, workload);
    Tally tally = Tally.start(runId, false);
    try {
      TidemarkOptions options = FlinkBaselinePart.options(
          "--runner=FlinkRunner", "--flinkMaster=[local]", "--streaming=true",
          "--parallelism=2", "--fasterCopy=true", "--source=kafka",
          "--kafkaBootstrapServers=" + broker.bootstrapServers(),
          "--kafkaInputTopic=" + topic, "--kafkaConsumerGroup=" + runId,
          "--maxOutOfOrderness=PT30S", "--kafkaIdleTimeout=PT10S", "--earlyFiringDelay=none",
          "--windowPeriod=" + period);
      Pipeline pipeline = Pipeline.create(options);
      PCollection<RawRecord> raw =
          pipeline.apply("ReadKafka", TidemarkPipeline.kafkaSource(options));
      @SuppressWarnings("unchecked")
      WithFailures.Result<PCollection<PaymentEvent>, DeadLetter> parsed =
          raw.apply("ParseCloudEvents", (ParseCloudEvents) call("parser", options));
      parsed.failures().apply("CountDeadLetters",
          ParDo.of(new Tally.CountFn<>(runId, Tally.Output.DEAD_LETTERS)));
      if (cut.equals("parse")) {
        parsed.output().apply("CountEvents",
            ParDo.of(new Tally.CountFn<>(runId, Tally.Output.DECISIONS)));
        target = workload.lines.size() - deadLetters; // duplicates are parsed too
      } else {
        DeduplicateEvents.Result deduped = parsed.output().apply("DeduplicateEvents",
            (DeduplicateEvents) call("deduplicator", options));
        if (cut.equals("dedup")) {
          deduped.events().apply("CountEvents",
              ParDo.of(new Tally.CountFn<>(runId, Tally.Output.DECISIONS)));
        } else {
          ComputeFeatures.Result features = deduped.events().apply("ComputeFeatures",
              (ComputeFeatures) call("windowedFeatures", options));
          features.features().apply("CountPanes",
              ParDo.of(new Tally.CountFn<>(runId, Tally.Output.DECISIONS)));
        }
      }
      System.gc();
      long started = System.nanoTime();
      TidemarkFlinkJobs.Job job = TidemarkFlinkJobs.start(pipeline);
      try {
        // The cut's events or panes count as DECISIONS.
        FlinkBaselinePart.awaitOutputs(tally, target, deadLetters + FlinkBaselinePart.PARTITIONS);
      } finally {
        job.stop(Duration.standardMinutes(1));
      }
      System.out.printf("  %s counted %d (target %d), dead letters %d%n", cut,
          tally.count(Tally.Output.DECISIONS), target, tally.count(Tally.Output.DEAD_LETTERS));
      return workload.lines.size() / ((tally.lastOutputNanos() - started) / 1e9);
    } finally {
      Tally.finish(runId);
    }
  }
}
