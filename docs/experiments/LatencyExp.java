// Latency at fixed rates, idempotent sink, as the latency part runs it (issue 6, fourteenth round).
// Not part of the build: a throwaway main kept so that the figures in docs/benchmarks.md can be
// reproduced. Arguments: rate (events/s), repeats. Pipeline options to try go through
// -Dtidemark.bench.pipelineArgs (every Beam job of the suite); JVM options on the java command.
// There is no warm-up run: a cold JVM's first run falls behind its feed (sixteenth round), so read
// the runs after it. Each run also prints the visibility latency (when the harness's consumer saw
// the decision) and the process's CPU seconds over the run (seventeenth round).
//
//   mvn -B -q -o install -DskipTests
//   mkdir -p /tmp/lx && javac -nowarn -cp pipelines/target/tidemark.jar -d /tmp/lx \
//       docs/experiments/LatencyExp.java
//   OPT_OUT_TRACKING=true OMP_NUM_THREADS=1 java -Xmx4g -Dai.djl.offline=true \
//       --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
//       --add-opens=java.base/java.time=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED \
//       -cp /tmp/lx:pipelines/target/tidemark.jar dev.tidemark.pipelines.bench.LatencyExp 1150 3
package dev.tidemark.pipelines.bench;

import dev.tidemark.pipelines.KafkaOptions.KafkaSinkMode;
import dev.tidemark.pipelines.io.kafka.EmbeddedKafka;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

public class LatencyExp {
  /** This process's CPU time so far (all threads, the embedded broker's and cluster's included). */
  static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean)
            java.lang.management.ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  /** The latency part's full-profile settings for one 60 s run after a 10 s warm-up. */
  static KafkaSinkBenchmark.Settings settings() {
    return KafkaSinkBenchmark.Settings.parse(
        "--events=20000",
        "--accounts=" + KafkaSinkBenchmark.DEFAULT_ACCOUNTS,
        "--repeats=1",
        "--latencySeconds=60",
        "--warmupSeconds=10",
        "--steadyCapSeconds=30",
        "--maxBundleTimeMills=20",
        "--bufferTimeout=5");
  }

  public static void main(String[] args) throws Exception {
    double rate = Double.parseDouble(args[0]);
    int repeats = Integer.parseInt(args[1]);
    KafkaSinkBenchmark.Settings settings = settings();
    Path work = Files.createTempDirectory("lx");
    try (EmbeddedKafka broker = EmbeddedKafka.start()) {
      for (int i = 0; i < repeats; i++) {
        long cpuBefore = cpuNanos();
        KafkaSinkBenchmark.LatencyRun run =
            KafkaSinkBenchmark.latencyRun(
                broker, KafkaSinkMode.idempotent, "lx-" + i, rate, settings, work);
        System.out.println(
            String.format(
                Locale.ROOT,
                "RESULT run %d rate %.0f: p50 %.1f p95 %.1f p99 %.1f ms; visible p50 %.1f p95 %.1f ms; process CPU %.1f s | %s",
                i + 1,
                rate,
                run.recordLatencyMs(0.5),
                run.recordLatencyMs(0.95),
                run.recordLatencyMs(0.99),
                KafkaSinkBenchmark.percentile(run.visibilityLatencies, 0.5),
                KafkaSinkBenchmark.percentile(run.visibilityLatencies, 0.95),
                (cpuNanos() - cpuBefore) / 1e9,
                run.describe()));
      }
    }
  }
}
