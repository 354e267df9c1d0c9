package dev.tidemark.model;

import java.util.HashMap;
import java.util.Map;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Scores rows in one engine call and isolates the rows that cannot be scored: rows with a
 * non-finite feature never reach the engine; when the engine fails on a batch, each of its rows is
 * retried alone, so only the rows the engine cannot score fail. Every score must be a finite
 * probability in [0, 1].
 *
 * <p>Not thread-safe: one per DoFn instance, like the predictor behind it.
 */
final class BatchScorer {
  /** One engine call on a row-major batch; returns one score per row. */
  @FunctionalInterface
  interface Engine {
    float[] predict(FeatureBatch batch) throws Exception;
  }

  /** Per row: a score, or why it has none. Error arrays are made on the first failure only. */
  static final class Result {
    final float[] scores;

    /** Per row: the engine returned a value for it (a score, or one outside [0, 1]). */
    final boolean[] answered;

    private @Nullable String[] errors;
    private @Nullable Throwable[] causes;
    private int failures;

    Result(int rows) {
      scores = new float[rows];
      answered = new boolean[rows];
    }

    boolean failed(int row) {
      return errors != null && errors[row] != null;
    }

    boolean anyFailed() {
      return failures > 0;
    }

    @Nullable String error(int row) {
      return errors == null ? null : errors[row];
    }

    @Nullable Throwable cause(int row) {
      return causes == null ? null : causes[row];
    }

    void fail(int row, String error, @Nullable Throwable cause) {
      if (errors == null) {
        errors = new String[scores.length];
        causes = new Throwable[scores.length];
      }
      if (errors[row] == null) {
        failures++;
      }
      errors[row] = error;
      causes[row] = cause;
      scores[row] = Float.NaN;
    }
  }

  private final Engine engine;
  private final int columns;
  private final java.util.List<String> featureNames;
  private final ScoringMetrics metrics;

  BatchScorer(Engine engine, java.util.List<String> featureNames, ScoringMetrics metrics) {
    this.engine = engine;
    this.columns = featureNames.size();
    this.featureNames = featureNames;
    this.metrics = metrics;
  }

  /** Scores {@code rows} (each one vector); the result is in the same order. */
  Result score(float[][] rows) {
    Result result = new Result(rows.length);
    float[] values = new float[rows.length * columns];
    for (int i = 0; i < rows.length; i++) {
      if (rows[i] == null || rows[i].length != columns) {
        result.fail(i, wrongLength(rows[i]), null);
      } else {
        System.arraycopy(rows[i], 0, values, i * columns, columns);
      }
    }
    return score(values, rows.length, result, null);
  }

  /** The error of a vector whose length is not the model's input width. */
  String wrongLength(float @Nullable [] row) {
    return "the feature vector has "
        + (row == null ? "no values" : row.length + " values")
        + "; the model takes "
        + columns
        + " "
        + featureNames;
  }

  /**
   * Scores rows {@code [0, rows)} of the row-major {@code values}, skipping rows {@code result}
   * already failed, and records each row's score or error in {@code result}. Equal rows go to the
   * engine once and share its answer (a model scores each row on its own, so a row's score does not
   * depend on what else is in its batch): sliding windows over a quiet account repeat the same
   * features, ten times over with the default windows for an account with one event. {@code
   * firstOf}, when given, says for each row the first row equal to it (its own index if none), as
   * the caller already compared them; otherwise the rows are compared here.
   */
  Result score(float[] values, int rows, Result result, int @Nullable [] firstOf) {
    int[] valid = new int[rows];
    int count = 0;
    for (int i = 0; i < rows; i++) {
      String problem = result.failed(i) ? "" : check(values, i * columns);
      if (problem == null) {
        valid[count++] = i;
      } else if (!problem.isEmpty()) {
        result.fail(i, problem, null);
      }
    }
    if (count > 0) {
      int[] first = firstOf != null ? firstOf : firstEqualRows(values, valid, count);
      // For each valid row, its position among the distinct rows; the first of each is sent. A
      // row equal to a valid row is valid too (equal bits), so its first row is in `valid`.
      int[] distinctOf = new int[rows];
      int[] distinct = new int[count];
      int distinctCount = 0;
      for (int k = 0; k < count; k++) {
        int row = valid[k];
        if (first[row] == row) {
          distinct[distinctCount] = row;
          distinctOf[row] = distinctCount++;
        } else {
          distinctOf[row] = distinctOf[first[row]];
        }
      }
      // The common case, every row valid and distinct, sends the caller's array as it is.
      float[] batch = distinctCount == rows ? values : rowsOf(values, distinct, distinctCount);
      Result answers = scoreDistinct(batch, distinctCount);
      long answered = 0;
      for (int k = 0; k < count; k++) {
        int row = valid[k];
        int answer = distinctOf[row];
        if (answers.failed(answer)) {
          result.fail(row, answers.error(answer), answers.cause(answer));
        } else {
          result.scores[row] = answers.scores[answer];
        }
        if (answers.answered[answer]) {
          answered++;
        }
      }
      metrics.inferences.inc(answered);
      metrics.repeatedRows.inc(count - distinctCount);
    }
    if (result.anyFailed()) {
      metrics.failedRows.inc(result.failures);
    }
    return result;
  }

  /** For each of the {@code count} rows in {@code valid}, the first of them equal to it. */
  private int[] firstEqualRows(float[] values, int[] valid, int count) {
    int[] first = new int[valid[count - 1] + 1];
    Map<RowKey, Integer> seen = new HashMap<>();
    for (int k = 0; k < count; k++) {
      int row = valid[k];
      Integer earlier = seen.putIfAbsent(new RowKey(values, row * columns, columns), row);
      first[row] = earlier == null ? row : earlier;
    }
    return first;
  }

  /**
   * Scores every row of {@code batch} in one engine call; when the call fails, each row is retried
   * alone, so only the rows the engine cannot score fail.
   */
  private Result scoreDistinct(float[] batch, int count) {
    Result answers = new Result(count);
    try {
      store(answers, null, count, call(batch, count));
    } catch (Exception batchError) {
      for (int row = 0; row < count; row++) {
        if (count == 1) {
          answers.fail(row, "the engine failed on this row: " + message(batchError), batchError);
          break;
        }
        try {
          store(answers, new int[] {row}, 1, call(rowsOf(batch, new int[] {row}, 1), 1));
        } catch (Exception rowError) {
          answers.fail(
              row,
              "the engine failed on this row (retried alone after its batch of "
                  + count
                  + " failed): "
                  + message(rowError),
              rowError);
        }
      }
    }
    return answers;
  }

  /** One row of a row-major array, compared by its values' bits (NaN equals NaN). */
  static final class RowKey {
    private final float[] values;
    private final int offset;
    private final int columns;
    private final int hash;

    RowKey(float[] values, int offset, int columns) {
      this.values = values;
      this.offset = offset;
      this.columns = columns;
      int h = 1;
      for (int j = 0; j < columns; j++) {
        h = 31 * h + Float.floatToIntBits(values[offset + j]);
      }
      this.hash = h;
    }

    /** The row {@code row}, a whole array. */
    static RowKey of(float[] row) {
      return new RowKey(row, 0, row.length);
    }

    @Override
    public boolean equals(@Nullable Object o) {
      if (!(o instanceof RowKey)) {
        return false;
      }
      RowKey that = (RowKey) o;
      if (that.hash != hash || that.columns != columns) {
        return false;
      }
      for (int j = 0; j < columns; j++) {
        if (Float.floatToIntBits(values[offset + j])
            != Float.floatToIntBits(that.values[that.offset + j])) {
          return false;
        }
      }
      return true;
    }

    @Override
    public int hashCode() {
      return hash;
    }
  }

  private float[] rowsOf(float[] values, int[] indices, int count) {
    float[] out = new float[count * columns];
    for (int k = 0; k < count; k++) {
      System.arraycopy(values, indices[k] * columns, out, k * columns, columns);
    }
    return out;
  }

  private float[] call(float[] values, int rows) throws Exception {
    long started = System.nanoTime();
    float[] scores;
    try {
      scores = engine.predict(new FeatureBatch(values, rows, columns));
      if (scores.length != rows) {
        throw new IllegalStateException(
            "the model returned " + scores.length + " scores for " + rows + " rows");
      }
    } catch (Exception e) {
      metrics.failedBatches.inc();
      throw e;
    }
    metrics.batchLatencyMicros.update((System.nanoTime() - started) / 1_000);
    metrics.batchSize.update(rows);
    return scores;
  }

  /** Stores {@code scores} for rows {@code indices[0..count)} (or {@code 0..count) if null). */
  private static void store(Result result, int @Nullable [] indices, int count, float[] scores) {
    for (int i = 0; i < count; i++) {
      int row = indices == null ? i : indices[i];
      float score = scores[i];
      result.answered[row] = true;
      if (score >= 0f && score <= 1f) {
        result.scores[row] = score;
      } else {
        result.fail(row, "the model returned " + score + ", not a probability in [0, 1]", null);
      }
    }
  }

  private @Nullable String check(float[] values, int offset) {
    for (int j = 0; j < columns; j++) {
      float value = values[offset + j];
      if (!Float.isFinite(value)) {
        return "feature "
            + featureNames.get(j)
            + " is "
            + value
            + "; rows with NaN or infinite features are not scored";
      }
    }
    return null;
  }

  private static String message(Exception e) {
    return LoadedModel.rootMessage(e);
  }
}
