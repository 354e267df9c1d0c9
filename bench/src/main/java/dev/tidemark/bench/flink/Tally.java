package dev.tidemark.bench.flink;

import dev.tidemark.transforms.values.Decision;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

/**
 * What one benchmark run output, counted in this JVM: the embedded Flink MiniCluster and the
 * DirectRunner run their tasks in the JVM that started them, so the counting steps of both jobs (a
 * Beam {@link CountFn}, a Flink {@link CountFlinkFn}) add to a static registry by run id. Per
 * output it keeps the count and the time of the last element; for decisions also checksums of the
 * features and scores, so two jobs can be compared cheaply, and (when asked) the decisions
 * themselves.
 */
public final class Tally {
  /** The outputs both jobs count. */
  public enum Output {
    DECISIONS,
    DEAD_LETTERS,
    DUPLICATES,
    TOO_LATE
  }

  private static final Map<String, Tally> RUNS = new ConcurrentHashMap<>();

  private final Map<Output, AtomicLong> counts = new ConcurrentHashMap<>();
  private final AtomicLong lastOutputNanos = new AtomicLong();
  private final AtomicLong txnCountSum = new AtomicLong();
  private final AtomicLong amountSumCents = new AtomicLong();
  private final AtomicLong reviews = new AtomicLong();
  private final AtomicLong scoreMicrosSum = new AtomicLong();
  private final Queue<Decision> collected;

  private Tally(boolean collect) {
    for (Output output : Output.values()) {
      counts.put(output, new AtomicLong());
    }
    this.collected = collect ? new ConcurrentLinkedQueue<>() : null;
  }

  /** A fresh tally for {@code runId}; {@code collect} also keeps every decision. */
  public static Tally start(String runId, boolean collect) {
    Tally tally = new Tally(collect);
    RUNS.put(runId, tally);
    return tally;
  }

  static Tally of(String runId) {
    Tally tally = RUNS.get(runId);
    if (tally == null) {
      throw new IllegalStateException("no tally for run " + runId + " in this JVM");
    }
    return tally;
  }

  /** Forgets {@code runId}. */
  public static void finish(String runId) {
    RUNS.remove(runId);
  }

  void add(Output output, Object element) {
    counts.get(output).incrementAndGet();
    if (element instanceof Decision) {
      Decision decision = (Decision) element;
      txnCountSum.addAndGet(decision.features().getLong("txnCount"));
      amountSumCents.addAndGet(decision.features().getLong("amountSum"));
      Double score = decision.score();
      if (score != null) {
        scoreMicrosSum.addAndGet(Math.round(score * 1e6));
      }
      if ("review".equals(decision.label())) {
        reviews.incrementAndGet();
      }
      if (collected != null) {
        collected.add(decision);
      }
    }
    lastOutputNanos.set(System.nanoTime());
  }

  public long count(Output output) {
    return counts.get(output).get();
  }

  /** {@link System#nanoTime()} of the latest counted element, 0 before the first. */
  public long lastOutputNanos() {
    return lastOutputNanos.get();
  }

  /** The decisions, if this tally collects them. */
  public List<Decision> decisions() {
    return collected == null ? List.of() : new ArrayList<>(collected);
  }

  /**
   * A checksum of the decisions: count, total transactions, total amount, reviews and the sum of
   * the scores in micro-units (the last may differ by rounding when scores differ in the last bit).
   */
  public String checksum() {
    return String.format(
        java.util.Locale.ROOT,
        "decisions=%d txnCount=%d amountCents=%d reviews=%d scoreMicros=%d",
        count(Output.DECISIONS),
        txnCountSum.get(),
        amountSumCents.get(),
        reviews.get(),
        scoreMicrosSum.get());
  }

  /** The checksum without the score sum, which must match exactly between two equal jobs. */
  public String exactChecksum() {
    return String.format(
        java.util.Locale.ROOT,
        "decisions=%d txnCount=%d amountCents=%d reviews=%d duplicates=%d deadLetters=%d",
        count(Output.DECISIONS),
        txnCountSum.get(),
        amountSumCents.get(),
        reviews.get(),
        count(Output.DUPLICATES),
        count(Output.DEAD_LETTERS));
  }

  /** Counts a Beam output into the run's tally. */
  static final class CountFn<T> extends DoFn<T, Void> {
    private final String runId;
    private final Output output;
    private transient Tally tally;

    CountFn(String runId, Output output) {
      this.runId = runId;
      this.output = output;
    }

    @Setup
    public void setup() {
      tally = of(runId);
    }

    @ProcessElement
    public void processElement(@Element T element) {
      tally.add(output, element);
    }
  }

  /** Counts a Flink stream into the run's tally; emits nothing. */
  static final class CountFlinkFn<T> extends ProcessFunction<T, Void> {
    private static final long serialVersionUID = 1L;
    private final String runId;
    private final Output output;
    private transient Tally tally;

    CountFlinkFn(String runId, Output output) {
      this.runId = runId;
      this.output = output;
    }

    @Override
    public void processElement(T element, Context context, Collector<Void> out) {
      if (tally == null) {
        tally = of(runId);
      }
      tally.add(output, element);
    }
  }
}
