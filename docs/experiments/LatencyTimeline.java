// Where in time the latency tail falls (issue 6, nineteenth round). Not part of the build: a
// throwaway main kept so that the figures in docs/benchmarks.md can be reproduced. Runs the latency
// part's job at a fixed rate (as LatencyExp), then reads the run's committed decisions back and
// writes one CSV line per attributable early decision: ingestion ms (Kafka timestamp of the
// triggering event), fired, scored and record timestamps. With the checkpoint coordinator's INFO
// lines (trigger and completion times) and a GC log, the CSV shows what each slow decision
// overlapped. Arguments: rate (events/s), repeats, output directory.
//
//   mvn -B -q -o install -DskipTests
//   mkdir -p /tmp/lx && javac -nowarn -cp pipelines/target/tidemark.jar -d /tmp/lx \
//       docs/experiments/LatencyExp.java docs/experiments/LatencyTimeline.java
//   OPT_OUT_TRACKING=true OMP_NUM_THREADS=1 java -Xmx4g -Dai.djl.offline=true \
//       -Xlog:gc:file=/tmp/lt/gc.log -Dorg.slf4j.simpleLogger.showDateTime=true \
//       -Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS \
//       -Dorg.slf4j.simpleLogger.log.org.apache.flink.runtime.checkpoint.CheckpointCoordinator=info \
//       --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
//       --add-opens=java.base/java.time=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED \
//       -cp /tmp/lx:pipelines/target/tidemark.jar dev.tidemark.pipelines.bench.LatencyTimeline \
//       1500 3 /tmp/lt 2> /tmp/lt/log.txt
package dev.tidemark.pipelines.bench;

import dev.tidemark.pipelines.KafkaOptions.KafkaSinkMode;
import dev.tidemark.pipelines.io.kafka.EmbeddedKafka;
import dev.tidemark.pipelines.io.kafka.KafkaFeed;
import dev.tidemark.transforms.Json;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

public class LatencyTimeline {
  public static void main(String[] args) throws Exception {
    double rate = Double.parseDouble(args[0]);
    int repeats = Integer.parseInt(args[1]);
    Path out = Files.createDirectories(Path.of(args[2]));
    KafkaSinkBenchmark.Settings settings = LatencyExp.settings();
    Path work = Files.createTempDirectory("lt");
    try (EmbeddedKafka broker = EmbeddedKafka.start()) {
      for (int i = 0; i < repeats; i++) {
        String name = "lt-" + i;
        KafkaSinkBenchmark.LatencyRun run =
            KafkaSinkBenchmark.latencyRun(
                broker, KafkaSinkMode.idempotent, name, rate, settings, work);
        System.out.println(
            String.format(
                Locale.ROOT,
                "RESULT run %d rate %.0f: p50 %.1f p95 %.1f p99 %.1f ms | %s",
                i + 1,
                rate,
                run.recordLatencyMs(0.5),
                run.recordLatencyMs(0.95),
                run.recordLatencyMs(0.99),
                run.describe()));
        timeline(broker.bootstrapServers(), name + ".decisions", out.resolve(name + ".csv"));
      }
    }
  }

  /** Every attributable early decision of the topic: ingestion,fired,scored,record ms. */
  static void timeline(String servers, String topic, Path csv) throws Exception {
    List<KafkaSinkBenchmark.Pane> panes = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<byte[], byte[]>(KafkaSinkBenchmark.committedReaderConfig(servers))) {
      List<TopicPartition> partitions = KafkaFeed.partitions(consumer, topic);
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
      while (partitions.stream().anyMatch(p -> consumer.position(p) < end.get(p))) {
        var records = consumer.poll(java.time.Duration.ofMillis(200));
        for (ConsumerRecord<byte[], byte[]> record : records) {
          panes.add(
              new KafkaSinkBenchmark.Pane(
                  Json.MAPPER.readTree(record.value()), record.timestamp(), record.timestamp()));
        }
      }
    }
    boolean[] attributable = KafkaSinkBenchmark.triggeredByLatest(panes);
    try (PrintWriter writer = new PrintWriter(Files.newBufferedWriter(csv))) {
      writer.println("ingestion,fired,scored,record");
      for (int i = 0; i < panes.size(); i++) {
        KafkaSinkBenchmark.Pane pane = panes.get(i);
        if (attributable[i] && pane.timing.equals("EARLY")) {
          writer.println(
              pane.ingestion + "," + pane.fired + "," + pane.scored + "," + pane.timestamp);
        }
      }
    }
    System.out.println("timeline " + csv + ": " + panes.size() + " decisions");
  }
}
