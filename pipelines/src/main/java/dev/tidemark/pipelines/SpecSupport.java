package dev.tidemark.pipelines;

import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecException;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.transforms.values.PaymentFields;
import java.util.ArrayList;
import java.util.List;

/**
 * What the graph ({@link ScoreCloudEvents}) takes from a spec today, and what it refuses rather
 * than run something else. Every declared field is checked as the spec says, and the event types,
 * size limit, event time, future skew, identity, windows, model and threshold come from any spec;
 * the features and the decision labels are still the payments ones. So a spec must declare the
 * payment fields ({@link PaymentFields}; it may add fields and change any field's rules) and the
 * bundled payments spec's features and labels. The event time may be the attribute {@code time} or
 * a timestamp field of {@code data}, as {@code clocks.eventTime} says.
 */
public final class SpecSupport {
  private static final String WHY =
      " this build aggregates payments only (the features of specs/payments.yaml over its payment"
          + " fields); a spec of other events is refused until the pipeline derives its features"
          + " from the spec";

  private SpecSupport() {}

  /** The bundled payments spec, read once. */
  private static final class Payments {
    static final PipelineSpec SPEC = SpecLoader.loadBundled(SpecLoader.DEFAULT_BUNDLED);
  }

  /**
   * Refuses a spec the graph cannot follow.
   *
   * @throws SpecException naming {@code location} and every problem
   */
  public static void check(PipelineSpec spec, String location) {
    List<SpecException.Problem> problems = problems(spec);
    if (!problems.isEmpty()) {
      throw new SpecException(location, problems);
    }
  }

  /** Each part of {@code spec} the graph cannot follow, with its path; empty when it can. */
  public static List<SpecException.Problem> problems(PipelineSpec spec) {
    PipelineSpec payments = Payments.SPEC;
    List<SpecException.Problem> problems = new ArrayList<>();
    try {
      PaymentFields.of(spec.events());
    } catch (IllegalArgumentException e) {
      problems.add(new SpecException.Problem("events.fields", e.getMessage() + ";" + WHY));
    }
    if (!spec.features().equals(payments.features())) {
      problems.add(
          new SpecException.Problem(
              "features",
              "the features are not the payments spec's " + payments.featureNames() + ":" + WHY));
    }
    PipelineSpec.Model model = spec.model();
    if (!model.positiveLabel().equals(payments.model().positiveLabel())
        || !model.negativeLabel().equals(payments.model().negativeLabel())) {
      problems.add(
          new SpecException.Problem(
              "model.labels",
              "this build decides 'review' and 'allow' only; leave model.labels out"));
    }
    return problems;
  }
}
