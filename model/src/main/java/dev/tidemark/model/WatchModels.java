package dev.tidemark.model;

import java.util.Objects;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.AfterPane;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.Repeatedly;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches a directory or glob pattern of models (local, {@code gs://} or any Beam filesystem) and
 * emits the newest valid one whenever it changes: Beam Java's counterpart of Beam Python's {@code
 * WatchFilePattern}, for {@link ScoreFeatures#withModelUpdates}.
 *
 * <p>Every {@link #withInterval interval} of processing time (a {@code GenerateSequence} tick) it
 * lists the pattern and picks the newest valid model as {@link ModelDirectory} defines it: the
 * latest last-modified time, then the greater URI; a file without a sidecar, with a bad sidecar,
 * with features other than the spec's, or that the engine cannot load is refused (the counter
 * {@value ScoringMetrics#MODEL_REFUSED} and a log line at WARN say why) and the next newest is
 * taken; a refused file is checked again at the next listing. It emits {@code KV(tick, model
 * identity)} ({@link ModelIdentity}: the URI and the SHA-256 of the content it checked, so a file
 * overwritten in place is a new model) at every listing that finds a valid model, in the global
 * window with a trigger that fires per element and discards, so a side input of it holds the latest
 * listing's choice. The tick orders the elements: of several in one pane, the greatest tick is the
 * latest; a scoring worker that could not open a model tries it again when a later listing names it
 * ({@link ModelSwitch}). Costs: one listing per interval, and one load of each new file on the
 * worker that watches (the scoring workers load it again).
 *
 * <pre>{@code
 * PCollection<KV<Long, String>> models =
 *     p.apply("WatchModels", WatchModels.of("gs://bucket/models/").withInterval(Duration.standardMinutes(1)));
 * decisions.apply("ScoreFeatures", ScoreFeatures.of("gs://bucket/models/").withModelUpdates(models));
 * }</pre>
 */
public final class WatchModels extends PTransform<PBegin, PCollection<KV<Long, String>>> {
  private static final Logger LOG = LoggerFactory.getLogger(WatchModels.class);

  public static final Duration DEFAULT_INTERVAL = Duration.standardMinutes(1);

  private final ScoringConfig config;
  private final Duration interval;

  private WatchModels(ScoringConfig config, Duration interval) {
    this.config = config;
    this.interval = interval;
  }

  /** Watches {@code pattern}: a directory, or a glob such as {@code gs://bucket/models/*.ubj}. */
  public static WatchModels of(String pattern) {
    return forConfig(ScoreFeatures.of(pattern).config(), DEFAULT_INTERVAL);
  }

  static WatchModels forConfig(ScoringConfig config, Duration interval) {
    if (!ModelDirectory.isWatched(config.modelUri)) {
      throw new IllegalArgumentException(
          config.modelUri
              + " is not a directory or pattern of models; end it with / or use a glob such as"
              + " models/*.ubj");
    }
    return new WatchModels(config, interval);
  }

  /** How often the pattern is listed (processing time); default one minute. */
  public WatchModels withInterval(Duration interval) {
    if (interval == null || interval.getMillis() <= 0) {
      throw new IllegalArgumentException(
          "the model watch interval must be a positive duration such as PT1M, got "
              + interval
              + "; set it with withInterval(...)");
    }
    return new WatchModels(config, interval);
  }

  @Override
  public PCollection<KV<Long, String>> expand(PBegin begin) {
    return begin
        .apply("Tick", GenerateSequence.from(0).withRate(1, interval))
        .apply("FindNewestModel", onTicks());
  }

  /** The watch driven by the given ticks instead of a timer: for tests that control time. */
  PTransform<PCollection<Long>, PCollection<KV<Long, String>>> onTicks() {
    return new OnTicks(config);
  }

  private static final class OnTicks
      extends PTransform<PCollection<Long>, PCollection<KV<Long, String>>> {
    private final ScoringConfig config;

    OnTicks(ScoringConfig config) {
      this.config = config;
    }

    @Override
    public PCollection<KV<Long, String>> expand(PCollection<Long> ticks) {
      return ticks
          .apply(
              "LatestOnly",
              Window.<Long>into(new GlobalWindows())
                  .triggering(Repeatedly.forever(AfterPane.elementCountAtLeast(1)))
                  .withAllowedLateness(Duration.ZERO)
                  .discardingFiredPanes())
          .apply("NewestValidModel", ParDo.of(new NewestModelFn(config)))
          .setCoder(KvCoder.of(VarLongCoder.of(), StringUtf8Coder.of()));
    }
  }

  /** Per tick, the newest valid model when it changed; see {@link ModelDirectory}. */
  static final class NewestModelFn extends DoFn<Long, KV<Long, String>> {
    private final ScoringConfig config;
    private final Counter refused =
        Metrics.counter(ScoringMetrics.NAMESPACE, ScoringMetrics.MODEL_REFUSED);
    private transient @Nullable ModelDirectory directory;
    private transient @Nullable String emitted;

    NewestModelFn(ScoringConfig config) {
      this.config = Objects.requireNonNull(config, "config");
    }

    @Setup
    public void setup() {
      directory = new ModelDirectory(config);
    }

    @ProcessElement
    public void processElement(@Element Long tick, OutputReceiver<KV<Long, String>> out) {
      ModelDirectory.Found newest = directory.newest();
      refused.inc(directory.refusals().size());
      if (newest == null && emitted == null) {
        LOG.warn("no valid model in {} yet; decisions wait for the first one", config.modelUri);
      }
      if (newest != null) {
        String identity = newest.identity().format();
        if (!identity.equals(emitted)) {
          LOG.info("the newest valid model in {} is now {}", config.modelUri, identity);
          emitted = identity;
        }
        // Every listing: a worker that refused this model tries it again on a later tick.
        out.output(KV.of(tick, identity));
      }
    }
  }
}
