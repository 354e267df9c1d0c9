package dev.tidemark.model;

import dev.tidemark.transforms.DeadLetter;
import dev.tidemark.transforms.Decision;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.values.TupleTag;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;

/**
 * Bundle-level batching: buffers decisions with their timestamp, window and pane; scores a batch
 * when it is full and the rest at finish bundle. See {@link ScoreFeatures}.
 */
final class ScoreFeaturesFn extends DoFn<Decision, Decision> {
  private final ScoringConfig config;
  private final TupleTag<Decision> scoredTag;
  private final TupleTag<DeadLetter> failuresTag;

  private transient @Nullable ModelSession session;
  private transient List<Pending> buffer;
  private transient List<Ready> deferred;

  /** A buffered input with where it lives. */
  private record Pending(
      Decision decision, Instant timestamp, BoundedWindow window, PaneInfo pane) {}

  /** A scored decision or a dead letter waiting for finish bundle. */
  private record Ready(
      @Nullable Decision scored,
      @Nullable DeadLetter failure,
      Instant timestamp,
      BoundedWindow window) {}

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
    deferred = new ArrayList<>();
  }

  @StartBundle
  public void startBundle() {
    session.reportLoadMetricsOnce();
    buffer.clear();
    deferred.clear();
  }

  @ProcessElement
  public void processElement(
      @Element Decision decision,
      @Timestamp Instant timestamp,
      BoundedWindow window,
      PaneInfo pane,
      MultiOutputReceiver out) {
    buffer.add(new Pending(decision, timestamp, window, pane));
    if (buffer.size() < config.batchSize) {
      return;
    }
    ModelSession.Outcomes outcomes = scoreBuffer();
    for (int i = 0; i < outcomes.size(); i++) {
      Pending pending = buffer.get(i);
      Decision scored = outcomes.scored()[i];
      if (pending.timestamp().isBefore(timestamp)) {
        // Beam forbids outputs before the current element's timestamp here; finish bundle may.
        deferred.add(new Ready(scored, outcomes.failure(i), pending.timestamp(), pending.window()));
      } else if (scored != null) {
        out.get(scoredTag)
            .outputWindowedValue(
                scored, pending.timestamp(), List.of(pending.window()), pending.pane());
      } else {
        out.get(failuresTag)
            .outputWindowedValue(
                outcomes.failure(i),
                pending.timestamp(),
                List.of(pending.window()),
                pending.pane());
      }
    }
    buffer.clear();
  }

  @FinishBundle
  public void finishBundle(FinishBundleContext context) {
    if (!buffer.isEmpty()) {
      ModelSession.Outcomes outcomes = scoreBuffer();
      for (int i = 0; i < outcomes.size(); i++) {
        Pending pending = buffer.get(i);
        deferred.add(
            new Ready(
                outcomes.scored()[i], outcomes.failure(i), pending.timestamp(), pending.window()));
      }
      buffer.clear();
    }
    for (Ready ready : deferred) {
      if (ready.scored() != null) {
        context.output(scoredTag, ready.scored(), ready.timestamp(), ready.window());
      } else {
        context.output(failuresTag, ready.failure(), ready.timestamp(), ready.window());
      }
    }
    deferred.clear();
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
