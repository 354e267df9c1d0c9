package dev.tidemark.model;

import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Decision;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.util.ShardedKey;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.TupleTag;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Scores the batches {@code GroupIntoBatches} formed ({@link
 * ScoreFeatures.Batching#GROUP_INTO_BATCHES}): each output keeps the batch's window and timestamp.
 */
final class ScoreBatchesFn extends DoFn<KV<ShardedKey<Integer>, Iterable<Decision>>, Decision> {
  private final ScoringConfig config;
  private final @Nullable ScoringConfig shadowConfig;
  private final @Nullable PCollectionView<Iterable<KV<Long, String>>> models;
  private final TupleTag<Decision> scoredTag;
  private final TupleTag<DeadLetter> failuresTag;

  private transient @Nullable ModelSession session;
  private transient @Nullable ModelSwitch modelSwitch;

  /** See {@link ScoreFeaturesFn}'s constructor of the same parameters. */
  ScoreBatchesFn(
      ScoringConfig config,
      @Nullable ScoringConfig shadowConfig,
      @Nullable PCollectionView<Iterable<KV<Long, String>>> models,
      TupleTag<Decision> scoredTag,
      TupleTag<DeadLetter> failuresTag) {
    this.config = config;
    this.shadowConfig = shadowConfig;
    this.models = models;
    this.scoredTag = scoredTag;
    this.failuresTag = failuresTag;
  }

  @Setup
  public void setup() {
    if (models == null) {
      session = ModelSession.open(config, shadowConfig);
    } else {
      modelSwitch = new ModelSwitch(config, shadowConfig);
    }
  }

  @StartBundle
  public void startBundle() {
    if (session != null) {
      session.reportLoadMetricsOnce();
    }
  }

  @ProcessElement
  public void processElement(
      ProcessContext context,
      @Element KV<ShardedKey<Integer>, Iterable<Decision>> batch,
      MultiOutputReceiver out) {
    if (models != null) {
      KV<Long, String> wanted = ModelSwitch.newest(context.sideInput(models));
      if (modelSwitch.shouldTry(session, wanted)) {
        session = modelSwitch.switchTo(session, wanted);
      }
    }
    List<Decision> rows = new ArrayList<>(config.batchSize);
    for (Decision decision : batch.getValue()) {
      rows.add(decision);
      if (rows.size() == config.batchSize) {
        emit(rows, out);
        rows.clear();
      }
    }
    if (!rows.isEmpty()) {
      emit(rows, out);
    }
  }

  private void emit(List<Decision> rows, MultiOutputReceiver out) {
    ModelSession.Outcomes outcomes = session.score(rows);
    for (int i = 0; i < outcomes.size(); i++) {
      if (outcomes.scored()[i] != null) {
        out.get(scoredTag).output(outcomes.scored()[i]);
      } else {
        out.get(failuresTag).output(outcomes.failure(i));
      }
    }
  }

  @Teardown
  public void teardown() {
    if (session != null) {
      session.close();
      session = null;
    }
  }
}
