// The CloudEvents parser alone, single-threaded (issue 6, eighth round).
// Not part of the build: a throwaway main kept so that the figures in docs/benchmarks.md can be
// reproduced. It generates the suite's stream (1M events, 1k accounts, fixed seed) into memory
// and parses every raw record with ParseCloudEvents' parser, seven rounds; the first rounds are
// the JIT's warm-up. Compare two builds by running it against each one's jar.
//
//   mvn -B -q -o install -DskipTests
//   mkdir -p /tmp/pb && javac -nowarn -cp pipelines/target/tidemark.jar -d /tmp/pb \
//       docs/experiments/ParseBench.java
//   java -Xmx4g -cp /tmp/pb:pipelines/target/tidemark.jar ParseBench
import dev.tidemark.pipelines.bench.beam.BenchInputs;
import dev.tidemark.transforms.ParseCloudEvents;
import dev.tidemark.transforms.RawRecord;
import java.util.List;

public class ParseBench {
  public static void main(String[] args) throws Exception {
    List<RawRecord> records =
        BenchInputs.generate(BenchInputs.config(1_000_000, 1000, 7L)).records;
    ParseCloudEvents.Parser parser = ParseCloudEvents.create().newParser();
    long[] rejected = new long[1];
    for (int round = 0; round < 7; round++) {
      long started = System.nanoTime();
      long parsed = 0;
      for (RawRecord record : records) {
        if (parser.parse(record, dead -> rejected[0]++) != null) {
          parsed++;
        }
      }
      double seconds = (System.nanoTime() - started) / 1e9;
      System.out.printf(
          "round %d: %.3f s, %.2f us/record, %d parsed, %d rejected%n",
          round, seconds, seconds * 1e6 / records.size(), parsed, rejected[0]);
    }
  }
}
