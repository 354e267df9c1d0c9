package dev.tidemark.bench.scoring;

import dev.tidemark.model.DecisionScorer;
import dev.tidemark.model.ScoreFeatures;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Decision;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.joda.time.Instant;

/**
 * The three ways {@link ScoringPart} scores the same rows, each a pass over all of them in batches
 * of a given size: the raw engine call on precomputed float rows; the same call plus the per-row
 * work any scoring step does around it; and Tidemark's scoring transform.
 */
final class ScoringPasses {
  /** One timed workload: scores every row in batches of {@code batchSize}. */
  @FunctionalInterface
  interface Pass {
    void run(int batchSize) throws Exception;
  }

  /** Where every pass leaves its last result, so that the JIT cannot drop the work. */
  static volatile Object sink;

  private ScoringPasses() {}

  /** The raw engine call on the rows' precomputed feature vectors. */
  static Pass raw(RawEngine engine, float[][] vectors) {
    int rows = vectors.length;
    int columns = vectors[0].length;
    return batch -> {
      for (int from = 0; from < rows; from += batch) {
        int n = Math.min(batch, rows - from);
        float[] values = new float[n * columns];
        for (int i = 0; i < n; i++) {
          System.arraycopy(vectors[from + i], 0, values, i * columns, columns);
        }
        sink = engine.predict(values, n, columns);
      }
    };
  }

  /**
   * The raw call plus the per-row work any scoring step must do around it: each decision's feature
   * vector in, a scored decision out.
   */
  static Pass rawWithDecisions(RawEngine engine, List<Decision> decisions) {
    int rows = decisions.size();
    int columns = decisions.get(0).features().toVector().length;
    Decision.ModelRef model = new Decision.ModelRef("bench", "1", "raw");
    return batch -> {
      for (int from = 0; from < rows; from += batch) {
        int n = Math.min(batch, rows - from);
        float[] values = new float[n * columns];
        for (int i = 0; i < n; i++) {
          System.arraycopy(
              decisions.get(from + i).features().toVector(), 0, values, i * columns, columns);
        }
        float[] scores = engine.predict(values, n, columns);
        Instant now = Instant.now();
        Decision[] scored = new Decision[n];
        for (int i = 0; i < n; i++) {
          scored[i] =
              decisions
                  .get(from + i)
                  .withScore(scores[i], scores[i] >= 0.5 ? "review" : "allow", model, now);
        }
        sink = scored;
      }
    };
  }

  /**
   * Tidemark's scoring transform, per batch as its DoFn does it between {@code @Setup} and
   * {@code @Teardown} ({@link DecisionScorer}: the feature vectors, the repeated-row check, the DJL
   * call, the checks and the scored decisions), with the scorer {@code scorers} holds for the
   * pass's batch size.
   */
  static Pass transform(Scorers scorers, List<Decision> decisions) {
    Consumer<Decision> scored = decision -> sink = decision;
    Consumer<DeadLetter> failed =
        deadLetter -> {
          throw new IllegalStateException("a row failed to score: " + deadLetter);
        };
    return batchSize -> {
      DecisionScorer scorer = scorers.at(batchSize);
      DecisionScorer.Batch batch = scorer.newBatch();
      for (Decision decision : decisions) {
        if (batch.add(decision)) {
          scorer.score(batch, scored, failed);
        }
      }
      scorer.score(batch, scored, failed);
    };
  }

  /** The transform's scorers of one model, one per batch size, open before any pass is timed. */
  static final class Scorers implements AutoCloseable {
    private final Map<Integer, DecisionScorer> bySize = new HashMap<>();

    Scorers(ScoreFeatures transform, int... batchSizes) {
      try {
        for (int size : batchSizes) {
          bySize.put(size, DecisionScorer.open(transform.withBatchSize(size)));
        }
      } catch (RuntimeException e) {
        close();
        throw e;
      }
    }

    DecisionScorer at(int batchSize) {
      DecisionScorer scorer = bySize.get(batchSize);
      if (scorer == null) {
        throw new IllegalArgumentException("no scorer opened at batch size " + batchSize);
      }
      return scorer;
    }

    @Override
    public void close() {
      bySize.values().forEach(DecisionScorer::close);
      bySize.clear();
    }
  }
}
