// Tidemark's streaming job from the embedded Kafka broker, alone and repeated (issue 6, ninth round).
// Not part of the build: a throwaway main kept so that the figures in docs/benchmarks.md can be
// reproduced. It uses the native-Flink part's own workload and runs (same package, so it can call
// them): the suite's stream (seed fixed, 1k accounts) of N events, one native backfill for the
// expected outputs, then R rounds of the streaming job on the FlinkRunner at parallelism 2
// (preceded by the native streaming job when the third argument is "native"). Every round checks
// the outputs against the native backfill's and prints events/s. A monitor thread prints the
// counts of the running job every 0.5 s (MON lines): when the dedup step has seen the whole input
// and when the last windows fire.
//
//   mvn -B -q -o install -DskipTests
//   mkdir -p /tmp/sp && javac -nowarn -cp pipelines/target/tidemark.jar -d /tmp/sp \
//       docs/experiments/StreamProfile.java
//   OPT_OUT_TRACKING=true OMP_NUM_THREADS=1 java -Xmx4g -Dai.djl.offline=true \
//       -cp /tmp/sp:pipelines/target/tidemark.jar \
//       dev.tidemark.pipelines.bench.flink.StreamProfile 200000 4 [native]
//
// With -XX:StartFlightRecording=filename=/tmp/sp/s.jfr,settings=profile for the JFR profile; per-
// thread CPU from /proc/<pid>/task/*/stat sampled every second while it runs.
package dev.tidemark.pipelines.bench.flink;

import dev.tidemark.pipelines.io.kafka.EmbeddedKafka;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

public class StreamProfile {
  public static void main(String[] args) throws Exception {
    int events = Integer.parseInt(args[0]);
    int rounds = Integer.parseInt(args[1]);
    boolean nativeToo = args.length > 2 && args[2].equals("native");
    Thread monitor = new Thread(StreamProfile::monitor);
    monitor.setDaemon(true);
    monitor.start();
    Workload workload = Workload.generate(events, FlinkBaselinePart.ACCOUNTS);
    Path work = Files.createTempDirectory("sp");
    List<Path> files = workload.writeFiles(work.resolve("backfill"), 2);
    String expected = FlinkBaselinePart.nativeBackfill(files, workload, 2).checksum;
    try (EmbeddedKafka broker = EmbeddedKafka.start()) {
      for (int i = 0; i < rounds; i++) {
        if (nativeToo) {
          FlinkBaselinePart.Run n =
              FlinkBaselinePart.nativeStreaming(broker, workload, 2, expected);
          System.out.printf("native %.0f events/s%n", n.eventsPerSecond());
        }
        FlinkBaselinePart.Run t =
            FlinkBaselinePart.tidemarkStreaming(broker, workload, 2, expected);
        System.out.printf("tidemark %.0f events/s %s%n", t.eventsPerSecond(), t.checksum);
      }
    }
    System.exit(0);
  }

  private static void monitor() {
    long started = System.nanoTime();
    while (true) {
      StringBuilder line = new StringBuilder();
      for (int i = 1; i < 20; i++) {
        for (String prefix : new String[] {"native-kafka-", "tidemark-kafka-"}) {
          try {
            Tally t = Tally.of(prefix + i);
            line.append(prefix + i)
                .append(" decisions=" + t.count(Tally.Output.DECISIONS))
                .append(" duplicates=" + t.count(Tally.Output.DUPLICATES))
                .append(" deadLetters=" + t.count(Tally.Output.DEAD_LETTERS) + " ");
          } catch (IllegalStateException notRunning) {
            // not started or already finished
          }
        }
      }
      if (line.length() > 0) {
        System.out.printf("MON %.1f %s%n", (System.nanoTime() - started) / 1e9, line);
      }
      try {
        Thread.sleep(500);
      } catch (InterruptedException e) {
        return;
      }
    }
  }
}
