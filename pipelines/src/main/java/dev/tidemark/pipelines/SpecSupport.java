package dev.tidemark.pipelines;

import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecException;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.transforms.values.PaymentFields;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * What the graph ({@link ScoreCloudEvents}) takes from a spec today, and what it refuses rather
 * than run something else. Every declared field is checked as the spec says, and the event types,
 * size limit, event time, future skew, identity, windows, features, model and threshold come from
 * any spec; the events are still payments and the decision labels the payments ones. So a spec must
 * declare the payment fields ({@link PaymentFields}; it may add fields and change any field's
 * rules), compute its features over those fields (any aggregation, filter and order; not a {@code
 * custom} one, whose combine only Java can supply), and keep the payments labels. The event time
 * may be the attribute {@code time} or a timestamp field of {@code data}, as {@code
 * clocks.eventTime} says.
 */
public final class SpecSupport {
  private static final String WHY =
      " this build aggregates payments only (features over the payment fields accountId, amount,"
          + " currency, merchantId and country); a spec of other events is refused until the"
          + " pipeline carries any spec's fields";

  private SpecSupport() {}

  /** The fields a payment event carries, which features may read. */
  private static final Set<String> PAYMENT_FIELDS =
      Set.of("accountId", "amount", "currency", "merchantId", "country");

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
    check(spec, location, false);
  }

  /**
   * {@link #check(PipelineSpec, String)}; with {@code customFns}, a {@code custom} feature passes:
   * the caller supplies its combine in Java ({@link ScoreCloudEvents#withFeatureFn}).
   */
  public static void check(PipelineSpec spec, String location, boolean customFns) {
    List<SpecException.Problem> problems = problems(spec, customFns);
    if (!problems.isEmpty()) {
      throw new SpecException(location, problems);
    }
  }

  /** Each part of {@code spec} the graph cannot follow, with its path; empty when it can. */
  public static List<SpecException.Problem> problems(PipelineSpec spec) {
    return problems(spec, false);
  }

  private static List<SpecException.Problem> problems(PipelineSpec spec, boolean customFns) {
    PipelineSpec payments = Payments.SPEC;
    List<SpecException.Problem> problems = new ArrayList<>();
    try {
      PaymentFields.of(spec.events());
    } catch (IllegalArgumentException e) {
      problems.add(new SpecException.Problem("events.fields", e.getMessage() + ";" + WHY));
    }
    List<PipelineSpec.Feature> features = spec.features();
    for (int i = 0; i < features.size(); i++) {
      PipelineSpec.Feature feature = features.get(i);
      String path = "features[" + i + "]";
      if (feature.aggregation() == PipelineSpec.Aggregation.CUSTOM) {
        if (customFns) {
          continue;
        }
        problems.add(
            new SpecException.Problem(
                path,
                "'"
                    + feature.name()
                    + "' is custom: a run from a spec cannot supply its combine; apply"
                    + " ComputeFeatures.withFeatureFn(\""
                    + feature.name()
                    + "\", fn) in a pipeline of your own"));
        continue;
      }
      if (feature.of() != null && !PAYMENT_FIELDS.contains(feature.of())) {
        problems.add(
            new SpecException.Problem(
                path + ".of", "'" + feature.of() + "' is not a payment field:" + WHY));
      }
      for (int j = 0; j < feature.where().size(); j++) {
        String field = feature.where().get(j).field();
        if (!PAYMENT_FIELDS.contains(field)) {
          problems.add(
              new SpecException.Problem(
                  path + ".where", "'" + field + "' is not a payment field:" + WHY));
        }
      }
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
