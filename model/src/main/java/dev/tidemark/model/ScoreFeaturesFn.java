package dev.tidemark.model;

import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Decision;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.TupleTag;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * Bundle-level batching: buffers decisions with their timestamp, window and pane and scores a batch
 * when it is full or, with a {@link BatchWait}, when a row arrives after its first row waited that
 * long; the rest at finish bundle. See {@link ScoreFeatures}.
 *
 * <p>A batch is full when it holds {@code batchSize} distinct feature rows, the rows the engine
 * call gets: a row equal to one already in the batch is not sent again ({@link BatchScorer}), so it
 * does not count. Sliding windows over a quiet account repeat their features (ten times with the
 * default windows for an account with one event); counting decisions instead would send as little
 * as a tenth of the batch size per call, and every engine call has a fixed cost besides its cost
 * per row. A batch also ends at {@link #MAX_DECISIONS_PER_ROW} times {@code batchSize} decisions
 * (at most {@link ScoreFeatures#MAX_BATCH_SIZE}, or {@code batchSize} when it is larger), so that a
 * long run of equal rows is not buffered whole.
 *
 * <p>A full batch is scored while processing its last element, and its outputs leave at once, each
 * with its own input's timestamp, window and pane, even when that is earlier than the element being
 * processed. On a batch runner a bundle is a whole task's input (Flink's batch translation) and
 * windows come out of a combine in key order, not time order, so most of a batch is earlier than
 * its last element. Beam checks an output's timestamp against the element being processed, which
 * here is not the output's input, so the DoFn declares an unbounded {@link #getAllowedTimestampSkew
 * skew}: no output is moved back from its own input's timestamp, and a runner does not advance the
 * watermark past an open bundle (the FlinkRunner holds it back until the bundle finishes), so none
 * falls behind it. Holding such outputs back for an element at or before their timestamp would need
 * a priority queue per bundle, and the outputs still held at finish bundle would lose their pane.
 * Only the last, partial batch of a bundle is output at finish bundle, where Beam cannot keep the
 * pane: those outputs carry {@code PaneInfo.NO_FIRING} (the decision's own {@code pane} fields are
 * unchanged).
 */
final class ScoreFeaturesFn extends DoFn<Decision, Decision> {
  /**
   * A batch holds at most this many decisions per row of its batch size, and never more than {@link
   * ScoreFeatures#MAX_BATCH_SIZE} unless the batch size is that large.
   */
  static final int MAX_DECISIONS_PER_ROW = 16;

  private final ScoringConfig config;
  private final @Nullable ScoringConfig shadowConfig;
  private final @Nullable PCollectionView<Iterable<KV<Long, String>>> models;
  private final TupleTag<Decision> scoredTag;
  private final TupleTag<DeadLetter> failuresTag;
  private final BatchWait batchWait;

  private transient @Nullable ModelSession session;
  private transient @Nullable ModelSwitch modelSwitch;
  private transient List<Pending> buffer;
  private transient DistinctRows rows;
  private transient BatchWait.Timer waited;

  /** Where a buffered input lives (the input itself is in {@link #rows}). */
  private record Pending(Instant timestamp, BoundedWindow window, PaneInfo pane) {}

  ScoreFeaturesFn(
      ScoringConfig config, TupleTag<Decision> scoredTag, TupleTag<DeadLetter> failuresTag) {
    this(config, null, null, scoredTag, failuresTag, BatchWait.NONE);
  }

  /**
   * With a shadow model (when {@code shadowConfig} is not null) and, when {@code models} is not
   * null, the model URI taken from that side input ({@link ModelSwitch}) instead of {@code
   * config}'s; a partial batch is scored once it has waited {@code batchWait}.
   */
  ScoreFeaturesFn(
      ScoringConfig config,
      @Nullable ScoringConfig shadowConfig,
      @Nullable PCollectionView<Iterable<KV<Long, String>>> models,
      TupleTag<Decision> scoredTag,
      TupleTag<DeadLetter> failuresTag,
      BatchWait batchWait) {
    this.batchWait = batchWait;
    this.config = config;
    this.shadowConfig = shadowConfig;
    this.models = models;
    this.scoredTag = scoredTag;
    this.failuresTag = failuresTag;
  }

  /**
   * Unbounded: a full batch's outputs, earlier than the element that completed it, leave with their
   * own inputs' timestamps (see the class documentation). Beam deprecates this for DoFns that move
   * elements back in time, where outputs can fall behind the watermark; nothing moves back here.
   */
  @Override
  @SuppressWarnings("deprecation")
  public Duration getAllowedTimestampSkew() {
    return Duration.millis(Long.MAX_VALUE);
  }

  @Setup
  public void setup() {
    if (models == null) {
      session = ModelSession.open(config, shadowConfig);
    } else {
      modelSwitch = new ModelSwitch(config, shadowConfig);
    }
    buffer = new ArrayList<>(config.batchSize);
    rows = new DistinctRows(config.batchSize);
    waited = batchWait.timer();
  }

  @StartBundle
  public void startBundle() {
    if (session != null) {
      session.reportLoadMetricsOnce();
    }
    buffer.clear();
    rows.clear();
  }

  @ProcessElement
  public void processElement(
      ProcessContext context,
      @Element Decision decision,
      @Timestamp Instant timestamp,
      BoundedWindow window,
      PaneInfo pane,
      MultiOutputReceiver out) {
    if (models != null) {
      KV<Long, String> wanted = ModelSwitch.newest(context.sideInput(models));
      if (modelSwitch.shouldTry(session, wanted)) {
        if (!buffer.isEmpty()) {
          emitBatch(out); // scored with the model they came to
        }
        session = modelSwitch.switchTo(session, wanted);
      }
      if (session == null) {
        throw new IllegalStateException(
            "no model to score with: the model side input names none (" + config.modelUri + ")");
      }
    }
    buffer.add(new Pending(timestamp, window, pane));
    boolean full = rows.add(decision, config.featureVector.apply(decision));
    if (waited.due(rows.size() == 1) || full) {
      emitBatch(out);
    }
  }

  private void emitBatch(MultiOutputReceiver out) {
    ModelSession.Outcomes outcomes = session.score(rows);
    for (int i = 0; i < outcomes.size(); i++) {
      Pending pending = buffer.get(i);
      List<BoundedWindow> windows = List.of(pending.window());
      Decision scored = outcomes.scored()[i];
      if (scored != null) {
        out.get(scoredTag)
            .outputWindowedValue(scored, pending.timestamp(), windows, pending.pane());
      } else {
        out.get(failuresTag)
            .outputWindowedValue(outcomes.failure(i), pending.timestamp(), windows, pending.pane());
      }
    }
    buffer.clear();
    rows.clear();
  }

  @FinishBundle
  public void finishBundle(FinishBundleContext context) {
    if (buffer.isEmpty()) {
      return;
    }
    ModelSession.Outcomes outcomes = session.score(rows);
    for (int i = 0; i < outcomes.size(); i++) {
      Pending pending = buffer.get(i);
      Decision scored = outcomes.scored()[i];
      if (scored != null) {
        context.output(scoredTag, scored, pending.timestamp(), pending.window());
      } else {
        context.output(failuresTag, outcomes.failure(i), pending.timestamp(), pending.window());
      }
    }
    buffer.clear();
    rows.clear();
  }

  @Teardown
  public void teardown() {
    if (session != null) {
      session.close();
      session = null;
    }
  }

  /**
   * A batch being filled: its decisions, each one's feature row and the first equal row before it;
   * full at {@code batchSize} distinct rows or {@link #MAX_DECISIONS_PER_ROW} times as many
   * decisions. A row without a vector counts as distinct (it fails, and is not sent). {@link
   * ModelSession} scores the batch from these rows, so they are built and hashed once, not again by
   * the scorer.
   */
  static final class DistinctRows {
    private final int batchSize;
    private final int maxDecisions;
    private final Map<BatchScorer.RowKey, Integer> first = new HashMap<>();
    private @Nullable Decision[] decisionAt;
    private float[] @Nullable [] vectors;
    private int[] firstOf;
    private int withoutVector;
    private int decisions;

    DistinctRows(int batchSize) {
      this.batchSize = batchSize;
      this.maxDecisions =
          Math.max(
              batchSize, Math.min(batchSize * MAX_DECISIONS_PER_ROW, ScoreFeatures.MAX_BATCH_SIZE));
      int capacity = Math.min(batchSize, 1024);
      this.decisionAt = new Decision[capacity];
      this.vectors = new float[capacity][];
      this.firstOf = new int[capacity];
    }

    /** Adds the next decision and its row; true when the batch is full. */
    boolean add(Decision decision, float @Nullable [] row) {
      int index = decisions++;
      if (index == firstOf.length) {
        int capacity = Math.min(maxDecisions, 2 * index);
        decisionAt = Arrays.copyOf(decisionAt, capacity);
        vectors = Arrays.copyOf(vectors, capacity);
        firstOf = Arrays.copyOf(firstOf, capacity);
      }
      decisionAt[index] = decision;
      vectors[index] = row;
      firstOf[index] = index;
      if (row == null) {
        withoutVector++;
      } else if (batchSize > 1) {
        Integer earlier = first.putIfAbsent(BatchScorer.RowKey.of(row), index);
        if (earlier != null) {
          firstOf[index] = earlier;
        }
      }
      return batchSize == 1
          || first.size() + withoutVector >= batchSize
          || decisions >= maxDecisions;
    }

    int maxDecisions() {
      return maxDecisions;
    }

    /** Decisions added since the last {@link #clear}. */
    int size() {
      return decisions;
    }

    /** The {@code i}th decision added. */
    Decision decision(int i) {
      return decisionAt[i];
    }

    /** The row of the {@code i}th decision added; null when it has none. */
    float @Nullable [] vector(int i) {
      return vectors[i];
    }

    /** Per decision added, the index of the first decision with an equal row (its own if none). */
    int[] firstOf() {
      return firstOf;
    }

    void clear() {
      Arrays.fill(decisionAt, 0, decisions, null);
      Arrays.fill(vectors, 0, decisions, null);
      first.clear();
      withoutVector = 0;
      decisions = 0;
    }
  }
}
