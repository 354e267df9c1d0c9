package dev.tidemark.model;

import dev.tidemark.transforms.DeadLetter;
import dev.tidemark.transforms.Decision;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
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
 * <p>Beam forbids an output earlier than the element being processed, and a full batch is scored
 * while processing its last element, so the batch's outputs that are earlier wait in a queue. They
 * leave it as soon as an element at or before their timestamp is processed, latest first, or at
 * finish bundle. On a batch runner a bundle is a whole task's input (Flink's batch translation),
 * and windows come out of a combine in key order, not time order: holding them all to finish bundle
 * kept millions of scored decisions alive (issue 6: young collections of 80–150 ms every second at
 * 1M accounts).
 */
final class ScoreFeaturesFn extends DoFn<Decision, Decision> {
  private final ScoringConfig config;
  private final TupleTag<Decision> scoredTag;
  private final TupleTag<DeadLetter> failuresTag;

  private transient @Nullable ModelSession session;
  private transient List<Pending> buffer;
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
    waiting = new PriorityQueue<>(Comparator.comparing(Ready::timestamp).reversed());
  }

  @StartBundle
  public void startBundle() {
    session.reportLoadMetricsOnce();
    buffer.clear();
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
    if (buffer.size() < config.batchSize) {
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
  }

  @FinishBundle
  public void finishBundle(FinishBundleContext context) {
    if (!buffer.isEmpty()) {
      ModelSession.Outcomes outcomes = scoreBuffer();
      for (int i = 0; i < outcomes.size(); i++) {
        waiting.add(ready(buffer.get(i), outcomes, i));
      }
      buffer.clear();
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
}
