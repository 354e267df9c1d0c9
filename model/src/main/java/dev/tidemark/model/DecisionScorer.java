package dev.tidemark.model;

import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Decision;
import java.util.function.Consumer;

/**
 * What one {@link ScoreFeatures} DoFn instance does between {@code @Setup} and {@code @Teardown},
 * as plain Java, for code that is not a Beam pipeline (the native Flink baseline of the benchmark
 * suite, which must score exactly as Tidemark does): a lease on the JVM's shared model, its own
 * predictor, and batches scored in one engine call with failing rows isolated.
 *
 * <p>Not thread-safe and not serialisable: open one per worker thread, close it when done.
 *
 * <pre>{@code
 * try (DecisionScorer scorer = DecisionScorer.open(ScoreFeatures.defaultModel())) {
 *   DecisionScorer.Batch batch = scorer.newBatch();
 *   for (Decision decision : decisions) {
 *     if (batch.add(decision)) {
 *       scorer.score(batch, scored::add, failures::add);
 *     }
 *   }
 *   scorer.score(batch, scored::add, failures::add);
 * }
 * }</pre>
 */
public final class DecisionScorer implements AutoCloseable {
  private final ModelSession session;
  private final ScoringConfig config;

  private DecisionScorer(ModelSession session, ScoringConfig config) {
    this.session = session;
    this.config = config;
  }

  /** Loads (or shares) the model {@code transform} is configured with, and a predictor on it. */
  public static DecisionScorer open(ScoreFeatures transform) {
    ScoringConfig config = transform.config();
    return new DecisionScorer(ModelSession.open(config), config);
  }

  /** The distinct rows per engine call the transform is configured with. */
  public int batchSize() {
    return config.batchSize;
  }

  /** A new, empty count of a batch being filled; see {@link Batch}. */
  public Batch newBatch() {
    return new Batch(config);
  }

  /**
   * A batch being filled, with its decisions' feature rows; full, as the transform's bundle
   * batching decides it, at {@code batchSize} distinct feature rows (a repeated row is not sent to
   * the engine again), or at {@link #maxDecisions} decisions.
   */
  public static final class Batch {
    private final ScoringConfig.FeatureVector featureVector;
    private final ScoreFeaturesFn.DistinctRows rows;

    private Batch(ScoringConfig config) {
      this.featureVector = config.featureVector;
      this.rows = new ScoreFeaturesFn.DistinctRows(config.batchSize);
    }

    /** Adds {@code decision}; true when the batch is full. */
    public boolean add(Decision decision) {
      return rows.add(decision, featureVector.apply(decision));
    }

    /** The decisions added since the batch was last scored. */
    public int size() {
      return rows.size();
    }

    /** The most decisions a batch holds. */
    public int maxDecisions() {
      return rows.maxDecisions();
    }
  }

  /**
   * Scores the decisions in {@code batch} in one engine call, in the order they were added, from
   * the rows the batch built: each goes to {@code scored} with its score, or to {@code failures} as
   * a dead letter when it cannot be scored. The batch is then empty, for the next decisions.
   */
  public void score(Batch batch, Consumer<Decision> scored, Consumer<DeadLetter> failures) {
    if (batch.size() == 0) {
      return;
    }
    ModelSession.Outcomes outcomes = session.score(batch.rows);
    batch.rows.clear();
    for (int i = 0; i < outcomes.size(); i++) {
      Decision decision = outcomes.scored()[i];
      if (decision != null) {
        scored.accept(decision);
      } else {
        failures.accept(outcomes.failure(i));
      }
    }
  }

  @Override
  public void close() {
    session.close();
  }
}
