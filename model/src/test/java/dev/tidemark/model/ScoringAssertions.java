package dev.tidemark.model;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.junit.Assert.fail;

import dev.tidemark.transforms.values.Decision;
import java.util.HashMap;
import java.util.Map;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.DistributionResult;
import org.apache.beam.sdk.metrics.MetricNameFilter;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.apache.beam.sdk.transforms.SerializableFunction;

/** Assertions shared by the scoring tests. */
final class ScoringAssertions {
  private ScoringAssertions() {}

  /** PAssert check: exactly the expected decisions, each with its expected score. */
  static SerializableFunction<Iterable<Decision>, Void> scoresEqual(
      HashMap<String, Float> expected, String modelName, String engine) {
    return decisions -> {
      int count = 0;
      for (Decision decision : decisions) {
        count++;
        Float want = expected.get(decision.decisionId());
        if (want == null) {
          throw new AssertionError("unexpected decision " + decision.decisionId());
        }
        if (decision.score() == null || decision.score() != want.doubleValue()) {
          throw new AssertionError(
              "decision "
                  + decision.decisionId()
                  + " scored "
                  + decision.score()
                  + ", raw "
                  + want);
        }
        if (!modelName.equals(decision.model().name())
            || !engine.equals(decision.model().engine())) {
          throw new AssertionError("wrong model " + decision.model());
        }
      }
      if (count != expected.size()) {
        throw new AssertionError(count + " decisions scored, expected " + expected.size());
      }
      return null;
    };
  }

  /** Runs {@code action}, expecting a failure whose cause chain mentions {@code text}. */
  static Throwable assertFailsMentioning(Runnable action, String text) {
    try {
      action.run();
    } catch (RuntimeException e) {
      StringBuilder messages = new StringBuilder();
      for (Throwable t = e; t != null; t = t.getCause()) {
        messages.append(t).append('\n');
        if (String.valueOf(t.getMessage()).contains(text)) {
          return t;
        }
      }
      assertThat(messages.toString(), containsString(text));
    }
    fail("expected a failure mentioning: " + text);
    return null;
  }

  static long counter(PipelineResult result, String name) {
    long total = 0;
    for (MetricResult<Long> counter :
        result
            .metrics()
            .queryMetrics(
                MetricsFilter.builder()
                    .addNameFilter(MetricNameFilter.named(ScoringMetrics.NAMESPACE, name))
                    .build())
            .getCounters()) {
      total += counter.getAttempted();
    }
    return total;
  }

  static Map<String, DistributionResult> distributions(PipelineResult result) {
    Map<String, DistributionResult> distributions = new HashMap<>();
    for (MetricResult<DistributionResult> d :
        result.metrics().queryMetrics(MetricsFilter.builder().build()).getDistributions()) {
      if (ScoringMetrics.NAMESPACE.equals(d.getName().getNamespace())) {
        distributions.put(d.getName().getName(), d.getAttempted());
      }
    }
    return distributions;
  }
}
