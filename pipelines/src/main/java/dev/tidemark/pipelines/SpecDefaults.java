package dev.tidemark.pipelines;

import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecLoader;
import java.util.Locale;
import java.util.Map;
import org.apache.beam.sdk.options.DefaultValueFactory;
import org.apache.beam.sdk.options.PipelineOptions;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * The defaults of the options a spec decides: each factory reads its value from the run's spec
 * ({@link RunSpecs#of}), so an option not given on the command line or in the profile takes the
 * spec's value, and one that is given overrides the spec for that run. Durations are written as the
 * ISO-8601 strings the options take.
 */
public final class SpecDefaults {
  private SpecDefaults() {}

  /** A default read from the run's spec. */
  public abstract static class FromSpec<T> implements DefaultValueFactory<T> {
    @Override
    public @Nullable T create(PipelineOptions options) {
      return value(RunSpecs.of(options));
    }

    /** The option's value under {@code spec}. */
    public abstract @Nullable T value(PipelineSpec spec);
  }

  /**
   * The names of the four outputs ({@link PipelineSpec#OUTPUTS}) on {@code sink} for {@code
   * profile}: the spec's {@code outputs.<profile>.names} when it gives that profile that sink, the
   * sink's defaults otherwise.
   */
  public static Map<String, String> outputNames(
      PipelineSpec spec, String profile, PipelineSpec.Sink sink) {
    PipelineSpec.Output given = spec.outputs().get(profile);
    return given != null && given.sink() == sink ? given.names() : SpecLoader.defaultNames(sink);
  }

  /** {@link #outputNames} of the run's spec and profile ({@code --runnerProfile}). */
  public static Map<String, String> outputNames(PipelineOptions options, PipelineSpec.Sink sink) {
    return outputNames(
        RunSpecs.of(options), options.as(OutputOptions.class).getRunnerProfile(), sink);
  }

  /**
   * The sink of the run's profile ({@code --runnerProfile}) in the spec's {@code outputs}; files
   * when the spec has no entry for the profile.
   */
  public static final class Sink implements DefaultValueFactory<TidemarkOptions.SinkKind> {
    @Override
    public TidemarkOptions.SinkKind create(PipelineOptions options) {
      return sinkOf(RunSpecs.of(options), options.as(OutputOptions.class).getRunnerProfile());
    }

    static TidemarkOptions.SinkKind sinkOf(PipelineSpec spec, String profile) {
      PipelineSpec.Output given = spec.outputs().get(profile);
      return given == null
          ? TidemarkOptions.SinkKind.files
          : TidemarkOptions.SinkKind.valueOf(given.sink().name().toLowerCase(Locale.ROOT));
    }
  }

  /** The name of one output on the Kafka sink for the run's profile ({@link #outputNames}). */
  abstract static class OutputName implements DefaultValueFactory<String> {
    private final String output;

    OutputName(String output) {
      this.output = output;
    }

    @Override
    public String create(PipelineOptions options) {
      return outputNames(options, PipelineSpec.Sink.KAFKA).get(output);
    }
  }

  /** The decisions topic. */
  public static final class DecisionsTopic extends OutputName {
    public DecisionsTopic() {
      super("decisions");
    }
  }

  /** The dead-letters topic. */
  public static final class DeadLettersTopic extends OutputName {
    public DeadLettersTopic() {
      super("deadLetters");
    }
  }

  /** The duplicates topic. */
  public static final class DuplicatesTopic extends OutputName {
    public DuplicatesTopic() {
      super("duplicates");
    }
  }

  /** The too-late topic. */
  public static final class TooLateTopic extends OutputName {
    public TooLateTopic() {
      super("tooLate");
    }
  }

  /** {@code events.types}, comma-separated. */
  public static final class EventTypes extends FromSpec<String> {
    @Override
    public String value(PipelineSpec spec) {
      return String.join(",", spec.events().types());
    }
  }

  /** {@code events.maxEventBytes}. */
  public static final class MaxEventBytes extends FromSpec<Integer> {
    @Override
    public Integer value(PipelineSpec spec) {
      return spec.events().maxEventBytes();
    }
  }

  /** The one value of the {@code currency} field (an enum), or null when the spec has none. */
  public static final class Currency extends FromSpec<String> {
    @Override
    public @Nullable String value(PipelineSpec spec) {
      return spec.field("currency")
          .filter(f -> f.values().size() == 1)
          .map(f -> f.values().get(0))
          .orElse(null);
    }
  }

  /** {@code clocks.maxFutureSkew}. */
  public static final class MaxFutureSkew extends FromSpec<String> {
    @Override
    public String value(PipelineSpec spec) {
      return spec.clocks().maxFutureSkew().toString();
    }
  }

  /** {@code clocks.maxOutOfOrderness}. */
  public static final class MaxOutOfOrderness extends FromSpec<String> {
    @Override
    public String value(PipelineSpec spec) {
      return spec.clocks().maxOutOfOrderness().toString();
    }
  }

  /** {@code identity.horizon}. */
  public static final class DedupHorizon extends FromSpec<String> {
    @Override
    public String value(PipelineSpec spec) {
      return spec.identity().horizon().toString();
    }
  }

  /** {@code windows.size}. */
  public static final class WindowSize extends FromSpec<String> {
    @Override
    public String value(PipelineSpec spec) {
      return spec.windows().size().toString();
    }
  }

  /** {@code windows.period}. */
  public static final class WindowPeriod extends FromSpec<String> {
    @Override
    public String value(PipelineSpec spec) {
      return spec.windows().period().toString();
    }
  }

  /** {@code windows.earlyFiring}, {@code none} for none. */
  public static final class EarlyFiringDelay extends FromSpec<String> {
    @Override
    public String value(PipelineSpec spec) {
      return spec.windows().earlyFiring() == null
          ? "none"
          : spec.windows().earlyFiring().toString();
    }
  }

  /** {@code windows.lateFiring}. */
  public static final class LateFiringDelay extends FromSpec<String> {
    @Override
    public String value(PipelineSpec spec) {
      return spec.windows().lateFiring().toString();
    }
  }

  /** {@code windows.allowedLateness}. */
  public static final class AllowedLateness extends FromSpec<String> {
    @Override
    public String value(PipelineSpec spec) {
      return spec.windows().allowedLateness().toString();
    }
  }

  /** {@code windows.accumulation}. */
  public static final class Accumulation extends FromSpec<TidemarkOptions.AccumulationKind> {
    @Override
    public TidemarkOptions.AccumulationKind value(PipelineSpec spec) {
      return spec.windows().accumulation() == PipelineSpec.Accumulation.DISCARDING
          ? TidemarkOptions.AccumulationKind.DISCARDING
          : TidemarkOptions.AccumulationKind.ACCUMULATING;
    }
  }

  /** {@code model.uri}. */
  public static final class ModelUri extends FromSpec<String> {
    @Override
    public String value(PipelineSpec spec) {
      return spec.model().uri();
    }
  }

  /** {@code model.engine}, unset when the spec names none. */
  public static final class ModelEngine extends FromSpec<String> {
    @Override
    public @Nullable String value(PipelineSpec spec) {
      return spec.model().engine();
    }
  }

  /** {@code model.threshold}. */
  public static final class DecisionThreshold extends FromSpec<Double> {
    @Override
    public Double value(PipelineSpec spec) {
      return spec.model().threshold();
    }
  }
}
