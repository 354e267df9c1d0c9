package dev.tidemark.model;

import dev.tidemark.transforms.DeadLetter;
import dev.tidemark.transforms.Decision;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Set;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.values.TupleTag;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;

/**
 * Bundle-level batching: buffers decisions with their timestamp, window and pane and scores a batch
 * when it is full, the rest at finish bundle. See {@link ScoreFeatures}.
 *
 * <p>A batch is full when it holds {@code batchSize} distinct feature rows, the rows the engine
 * call gets: a row equal to one already in the batch is not sent again ({@link BatchScorer}), so it
 * does not count. Sliding windows over a quiet account repeat their features (ten times with the
 * default windows for an account with one event); counting decisions instead sent a tenth of the
 * batch size per call at 1M accounts, and XGBoost costs about 90 µs per call besides its cost per
 * row (issue 6). A batch also ends at {@link #MAX_DECISIONS_PER_ROW} times {@code batchSize}
 * decisions (at most {@link ScoreFeatures#MAX_BATCH_SIZE}, or {@code batchSize} when it is larger),
 * so that a long run of equal rows is not buffered whole.
 *
 * <p>Beam forbids an output earlier than the element being processed, and a full batch is scored
 * while processing its last element, so the batch's outputs that are earlier wait in a queue. They
 * leave it as soon as an element at or before their timestamp is processed, latest first, or at
 * finish bundle. On a batch runner a bundle is a whole task's input (Flink's batch translation),
 * and windows come out of a combine in key order, not time order: holding them all to finish bundle
 * kept millions of scored decisions alive (issue 6: young collections of 80–150 ms every second at
 * 1M accounts).
 */
final class ScoreFeaturesFn extends DoFn<Decision, Decision> {
  /**
   * A batch holds at most this many decisions per row of its batch size, and never more than {@link
   * ScoreFeatures#MAX_BATCH_SIZE} unless the batch size is that large.
   */
  static final int MAX_DECISIONS_PER_ROW = 16;

  private final ScoringConfig config;
  private final TupleTag<Decision> scoredTag;
  private final TupleTag<DeadLetter> failuresTag;

  private transient @Nullable ModelSession session;
  private transient List<Pending> buffer;
  private transient DistinctRows rows;
  private transient PriorityQueue<Ready> waiting;

  /** A buffered input with where it lives. */
  private record Pending(
      Decision decision, Instant timestamp, BoundedWindow window, PaneInfo pane) {}

  /** A scored decision or a dead letter waiting for an element at or before its timestamp. */
  private record Ready(
      @Nullable Decision scored,
      @Nullable DeadLetter failure,
      Instant timestamp,
      BoundedWindow window,
      PaneInfo pane) {}

  ScoreFeaturesFn(
      ScoringConfig config, TupleTag<Decision> scoredTag, TupleTag<DeadLetter> failuresTag) {
    this.config = config;
    this.scoredTag = scoredTag;
    this.failuresTag = failuresTag;
  }

  @Setup
  public void setup() {
    session = ModelSession.open(config);
    buffer = new ArrayList<>(config.batchSize);
    rows = new DistinctRows(config.batchSize);
    waiting = new PriorityQueue<>(Comparator.comparing(Ready::timestamp).reversed());
  }

  @StartBundle
  public void startBundle() {
    session.reportLoadMetricsOnce();
    buffer.clear();
    rows.clear();
    waiting.clear();
  }

  @ProcessElement
  public void processElement(
      @Element Decision decision,
      @Timestamp Instant timestamp,
      BoundedWindow window,
      PaneInfo pane,
      MultiOutputReceiver out) {
    while (!waiting.isEmpty() && !waiting.peek().timestamp().isBefore(timestamp)) {
      output(waiting.poll(), out);
    }
    buffer.add(new Pending(decision, timestamp, window, pane));
    if (!rows.add(config.featureVector.apply(decision))) {
      return;
    }
    ModelSession.Outcomes outcomes = scoreBuffer();
    for (int i = 0; i < outcomes.size(); i++) {
      Ready ready = ready(buffer.get(i), outcomes, i);
      if (ready.timestamp().isBefore(timestamp)) {
        waiting.add(ready);
      } else {
        output(ready, out);
      }
    }
    buffer.clear();
    rows.clear();
  }

  @FinishBundle
  public void finishBundle(FinishBundleContext context) {
    if (!buffer.isEmpty()) {
      ModelSession.Outcomes outcomes = scoreBuffer();
      for (int i = 0; i < outcomes.size(); i++) {
        waiting.add(ready(buffer.get(i), outcomes, i));
      }
      buffer.clear();
      rows.clear();
    }
    for (Ready ready = waiting.poll(); ready != null; ready = waiting.poll()) {
      if (ready.scored() != null) {
        context.output(scoredTag, ready.scored(), ready.timestamp(), ready.window());
      } else {
        context.output(failuresTag, ready.failure(), ready.timestamp(), ready.window());
      }
    }
  }

  private static Ready ready(Pending pending, ModelSession.Outcomes outcomes, int i) {
    return new Ready(
        outcomes.scored()[i],
        outcomes.failure(i),
        pending.timestamp(),
        pending.window(),
        pending.pane());
  }

  private void output(Ready ready, MultiOutputReceiver out) {
    List<BoundedWindow> windows = List.of(ready.window());
    if (ready.scored() != null) {
      out.get(scoredTag)
          .outputWindowedValue(ready.scored(), ready.timestamp(), windows, ready.pane());
    } else {
      out.get(failuresTag)
          .outputWindowedValue(ready.failure(), ready.timestamp(), windows, ready.pane());
    }
  }

  @Teardown
  public void teardown() {
    if (session != null) {
      session.close();
      session = null;
    }
  }

  private ModelSession.Outcomes scoreBuffer() {
    List<Decision> decisions = new ArrayList<>(buffer.size());
    for (Pending pending : buffer) {
      decisions.add(pending.decision());
    }
    return session.score(decisions);
  }

  /**
   * Counts a batch's distinct feature rows and decisions; full at {@code batchSize} distinct rows
   * or {@link #MAX_DECISIONS_PER_ROW} times as many decisions. A row without a vector counts as
   * distinct (it fails, and is not sent).
   */
  static final class DistinctRows {
    private final int batchSize;
    private final int maxDecisions;
    private final Set<BatchScorer.RowKey> distinct = new HashSet<>();
    private int withoutVector;
    private int decisions;

    DistinctRows(int batchSize) {
      this.batchSize = batchSize;
      this.maxDecisions =
          Math.max(
              batchSize, Math.min(batchSize * MAX_DECISIONS_PER_ROW, ScoreFeatures.MAX_BATCH_SIZE));
    }

    /** Adds one decision's row; true when the batch is full. */
    boolean add(float @Nullable [] row) {
      decisions++;
      if (row == null) {
        withoutVector++;
      } else if (batchSize > 1) {
        distinct.add(BatchScorer.RowKey.of(row));
      }
      return batchSize == 1
          || distinct.size() + withoutVector >= batchSize
          || decisions >= maxDecisions;
    }

    int maxDecisions() {
      return maxDecisions;
    }

    void clear() {
      distinct.clear();
      withoutVector = 0;
      decisions = 0;
    }
  }
}
