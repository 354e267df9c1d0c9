package dev.tidemark.transforms;

import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.Codec;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.DriftAlarm;
import dev.tidemark.transforms.values.DriftReference;
import dev.tidemark.transforms.values.DriftReferences;
import dev.tidemark.transforms.values.Evaluation;
import dev.tidemark.transforms.values.EvaluationSummary;
import dev.tidemark.transforms.values.ScoreReference;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Distribution;
import org.apache.beam.sdk.state.BagState;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.Timer;
import org.apache.beam.sdk.state.TimerSpec;
import org.apache.beam.sdk.state.TimerSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.Flatten;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.DefaultTrigger;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionList;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drift alarms per model version and role ({@code deciding}, or {@code shadow} with the shadow
 * model's own score and verdict): Page's CUSUM on two streams, each alarm a {@link DriftAlarm}.
 *
 * <ul>
 *   <li><b>Score</b> ({@value DriftAlarm#SCORE}): the scores of the on-time editions of the
 *       decisions (one per decided window, the unit the sidecar's reference was measured on)
 *       against the mean of the model's {@link ScoreReference}, two one-sided sums: {@code S+ =
 *       max(0, S+ + x - mean - delta)} for a rise and {@code S- = max(0, S- + mean - x - delta)}
 *       for a fall. The mean rather than a per-bin statistic: one number whose shift the threshold
 *       reads directly ({@code threshold / (shift - delta)} decisions to an alarm), and a shift of
 *       the fraud mix or of the features moves it for a model whose scores are mostly near 0. A
 *       model without a score reference gets no score test (logged once per model version).
 *   <li><b>Error</b> ({@value DriftAlarm#ERROR}): each {@link Evaluation} is 1 when the verdict at
 *       the threshold ({@code flaggedDecision} or not) disagrees with the label, else 0, summed as
 *       {@code S = max(0, S + x - p0 - delta)} against the model's training error rate {@code p0}
 *       from its sidecar ({@link DriftReference#errorRate()}); without one, {@code p0} is the error
 *       rate of the first {@code baselineEvaluations} evaluations, which are not tested.
 * </ul>
 *
 * <p>A statistic above its threshold emits one alarm, increments the counter {@code
 * drift.alarms/<role>/<name:version>/<kind>} (and the distribution {@code drift.alarmTimeMillis} of
 * alarm times) and logs one line; then that test starts again from 0 (both sums of the score test),
 * so a persisting shift alarms again only after it has re-accumulated.
 *
 * <p>Order: per key (role and model version) the observations are buffered in state and applied in
 * event-time order (then kind, then id) once the watermark has passed them, by an event-time timer
 * at the earliest buffered time, so a replay gives the same alarms whatever the arrival order. An
 * observation that arrives after the watermark passed its time (a late decision) is applied at the
 * next flush, after those already applied. Alarms are emitted at the flush time; {@link
 * DriftAlarm#at()} is the crossing observation's own time. State: the buffer empties at each flush;
 * the sums are cleared by an expiry timer once a key has seen nothing for {@code idleExpiry} of
 * event time (a retired model version), or at the end of the global window.
 *
 * <pre>{@code
 * PCollection<DriftAlarm> alarms =
 *     decisions.apply("DetectDrift",
 *         DetectDrift.of(Map.of("tidemark-fraud-xgb:1", metadata.driftReference()), "review")
 *             .withEvaluations(evaluations));
 * }</pre>
 */
public final class DetectDrift extends PTransform<PCollection<Decision>, PCollection<DriftAlarm>> {
  public static final double DEFAULT_SCORE_DELTA = 0.02;
  public static final double DEFAULT_SCORE_THRESHOLD = 50;
  public static final double DEFAULT_ERROR_DELTA = 0.02;
  public static final double DEFAULT_ERROR_THRESHOLD = 30;
  public static final int DEFAULT_BASELINE_EVALUATIONS = 1000;
  public static final Duration DEFAULT_IDLE_EXPIRY = Duration.standardDays(7);

  private static final Logger LOG = LoggerFactory.getLogger(DetectDrift.class);

  private final DriftReferences references;
  private final String flaggedDecision;
  private final transient @Nullable PCollection<Evaluation> evaluations;
  private final Settings settings;

  /** The tests' numbers, carried to the stateful step. */
  record Settings(
      double scoreDelta,
      double scoreThreshold,
      double errorDelta,
      double errorThreshold,
      int baselineEvaluations,
      long idleExpiryMillis)
      implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
  }

  private DetectDrift(
      DriftReferences references,
      String flaggedDecision,
      @Nullable PCollection<Evaluation> evaluations,
      Settings settings) {
    this.references = references;
    this.flaggedDecision = flaggedDecision;
    this.evaluations = evaluations;
    this.settings = settings;
  }

  /**
   * Drift tests with the default thresholds against {@code references} by model version ({@code
   * name:version}); {@code flaggedDecision} is the verdict at or above the threshold ({@code
   * review} for payments). A model version absent from {@code references} gets the error test on a
   * baseline from its first evaluations only.
   */
  public static DetectDrift of(Map<String, DriftReference> references, String flaggedDecision) {
    return of(DriftReferences.of(references), flaggedDecision);
  }

  /**
   * {@link #of(Map, String)} with {@code references} that may also find, while the pipeline runs,
   * the reference of a version that appears then (a watched model directory's).
   */
  public static DetectDrift of(DriftReferences references, String flaggedDecision) {
    return new DetectDrift(
        Objects.requireNonNull(references, "references"),
        Objects.requireNonNull(flaggedDecision, "flaggedDecision"),
        null,
        new Settings(
            DEFAULT_SCORE_DELTA,
            DEFAULT_SCORE_THRESHOLD,
            DEFAULT_ERROR_DELTA,
            DEFAULT_ERROR_THRESHOLD,
            DEFAULT_BASELINE_EVALUATIONS,
            DEFAULT_IDLE_EXPIRY.getMillis()));
  }

  /** The labelled evaluations of the decisions, for the error test; without them, none. */
  public DetectDrift withEvaluations(PCollection<Evaluation> evaluations) {
    return new DetectDrift(
        references, flaggedDecision, Objects.requireNonNull(evaluations, "evaluations"), settings);
  }

  /** The score test's allowance (from 0 up to 1) and alarm level (above 0). */
  public DetectDrift withScoreTest(double delta, double threshold) {
    check(delta, threshold, "withScoreTest");
    return new DetectDrift(
        references,
        flaggedDecision,
        evaluations,
        new Settings(
            delta,
            threshold,
            settings.errorDelta(),
            settings.errorThreshold(),
            settings.baselineEvaluations(),
            settings.idleExpiryMillis()));
  }

  /** The error test's allowance (from 0 up to 1) and alarm level (above 0). */
  public DetectDrift withErrorTest(double delta, double threshold) {
    check(delta, threshold, "withErrorTest");
    return new DetectDrift(
        references,
        flaggedDecision,
        evaluations,
        new Settings(
            settings.scoreDelta(),
            settings.scoreThreshold(),
            delta,
            threshold,
            settings.baselineEvaluations(),
            settings.idleExpiryMillis()));
  }

  /** How many first evaluations make the baseline error rate of a model without one. */
  public DetectDrift withBaselineEvaluations(int baselineEvaluations) {
    if (baselineEvaluations < 1) {
      throw new IllegalArgumentException(
          "withBaselineEvaluations(" + baselineEvaluations + "): at least 1");
    }
    return new DetectDrift(
        references,
        flaggedDecision,
        evaluations,
        new Settings(
            settings.scoreDelta(),
            settings.scoreThreshold(),
            settings.errorDelta(),
            settings.errorThreshold(),
            baselineEvaluations,
            settings.idleExpiryMillis()));
  }

  /** How long of event time a model version in a role sees nothing before its sums are cleared. */
  public DetectDrift withIdleExpiry(Duration idleExpiry) {
    if (idleExpiry.getMillis() <= 0) {
      throw new IllegalArgumentException("withIdleExpiry(" + idleExpiry + "): must be positive");
    }
    return new DetectDrift(
        references,
        flaggedDecision,
        evaluations,
        new Settings(
            settings.scoreDelta(),
            settings.scoreThreshold(),
            settings.errorDelta(),
            settings.errorThreshold(),
            settings.baselineEvaluations(),
            idleExpiry.getMillis()));
  }

  private static void check(double delta, double threshold, String method) {
    if (!(delta >= 0 && delta < 1) || !(threshold > 0) || Double.isInfinite(threshold)) {
      throw new IllegalArgumentException(
          method
              + "("
              + delta
              + ", "
              + threshold
              + "): the allowance is from 0 up to 1, the threshold a finite number above 0");
    }
  }

  @Override
  public PCollection<DriftAlarm> expand(PCollection<Decision> decisions) {
    KvCoder<String, Observation> coder = KvCoder.of(StringUtf8Coder.of(), ObservationCoder.of());
    PCollectionList<KV<String, Observation>> observations =
        PCollectionList.of(
            decisions
                .apply("UnwindowDecisions", global())
                .apply("ScoreObservations", ParDo.of(new ScoreObservationsFn(references)))
                .setCoder(coder));
    if (evaluations != null) {
      observations =
          observations.and(
              evaluations
                  .apply("UnwindowEvaluations", global())
                  .apply("ErrorObservations", ParDo.of(new ErrorObservationsFn(flaggedDecision)))
                  .setCoder(coder));
    }
    return observations
        .apply("AllObservations", Flatten.pCollections())
        .setCoder(coder)
        // The CUSUM step buffers a model version's observations until the watermark passes
        // them: gathered, they reach it in few bundles (see GatherByMinute).
        .apply("GatherObservations", GatherByMinute.by(KV::getKey))
        .apply("Cusum", ParDo.of(new CusumFn(references, settings)))
        .setCoder(DriftAlarm.AlarmCoder.of());
  }

  private static <T> Window<T> global() {
    return Window.<T>into(new GlobalWindows())
        .triggering(DefaultTrigger.of())
        .withAllowedLateness(Duration.ZERO)
        .discardingFiredPanes();
  }

  /** The kind of an observation, in the order observations of one time are applied. */
  static final int SCORE = 0;

  static final int ERROR = 1;

  /**
   * One observation of a model version in a role: a score ({@link #SCORE}) or 1/0 for a wrong or
   * right verdict ({@link #ERROR}), at its event time, with an id that orders equal times.
   */
  record Observation(long time, int kind, double value, String id) {
    static final Comparator<Observation> ORDER =
        Comparator.comparingLong(Observation::time)
            .thenComparingInt(Observation::kind)
            .thenComparing(Observation::id)
            .thenComparingDouble(Observation::value);
  }

  /** Compact, deterministic coder of an {@link Observation}. */
  static final class ObservationCoder extends Codec.DataCoder<Observation> {
    private static final long serialVersionUID = 1L;
    private static final ObservationCoder INSTANCE = new ObservationCoder();

    static ObservationCoder of() {
      return INSTANCE;
    }

    @Override
    protected int version() {
      return 1;
    }

    @Override
    protected void write(Observation value, DataOutput out) throws IOException {
      out.writeLong(value.time());
      out.writeByte(value.kind());
      out.writeDouble(value.value());
      Codec.writeString(value.id(), out);
    }

    @Override
    protected Observation read(int version, DataInputStream in) throws IOException {
      return new Observation(in.readLong(), in.readByte(), in.readDouble(), Codec.readString(in));
    }
  }

  /** Model versions already logged as having no score reference, once per worker JVM. */
  private static final Set<String> WITHOUT_REFERENCE = ConcurrentHashMap.newKeySet();

  /**
   * The score of each on-time edition under its model version, and under its shadow model's; a
   * model version without a score reference is skipped (and logged once).
   */
  static final class ScoreObservationsFn extends DoFn<Decision, KV<String, Observation>> {
    private final DriftReferences references;

    ScoreObservationsFn(DriftReferences references) {
      this.references = references;
    }

    @ProcessElement
    public void processElement(
        @Element Decision decision,
        @Timestamp Instant timestamp,
        OutputReceiver<KV<String, Observation>> out) {
      Double score = decision.score();
      Decision.ModelRef model = decision.model();
      if (!Evaluation.Edition.ON_TIME.equals(decision.paneTiming())
          || score == null
          || model == null) {
        return;
      }
      String id = decision.decisionId();
      observe(EvaluationSummary.DECIDING, model, score, timestamp, id, out);
      Decision.Shadow shadow = decision.shadow();
      if (shadow != null) {
        observe(EvaluationSummary.SHADOW, shadow.model(), shadow.score(), timestamp, id, out);
      }
    }

    private void observe(
        String role,
        Decision.ModelRef model,
        double score,
        Instant timestamp,
        String id,
        OutputReceiver<KV<String, Observation>> out) {
      String version = model.name() + ":" + model.version();
      DriftReference reference = references.of(version);
      if (reference.score() == null) {
        if (WITHOUT_REFERENCE.add(version)) {
          LOG.info(
              "drift: model {} has no scoreReference in its sidecar: no score drift test, only"
                  + " the error test once labels arrive",
              version);
        }
        return;
      }
      out.output(
          KV.of(
              SummarizeEvaluations.modelKey(role, model.name(), model.version()),
              new Observation(timestamp.getMillis(), SCORE, score, id)));
    }
  }

  /** Each evaluation's verdicts, 1 when wrong, under their model versions and roles. */
  static final class ErrorObservationsFn extends DoFn<Evaluation, KV<String, Observation>> {
    private final String flaggedDecision;

    ErrorObservationsFn(String flaggedDecision) {
      this.flaggedDecision = flaggedDecision;
    }

    @ProcessElement
    public void processElement(
        @Element Evaluation evaluation,
        @Timestamp Instant timestamp,
        OutputReceiver<KV<String, Observation>> out) {
      String id = evaluation.edition().decisionId() + "/" + evaluation.label().identity();
      for (SummarizeEvaluations.Verdict verdict :
          SummarizeEvaluations.verdicts(evaluation, flaggedDecision)) {
        double wrong = verdict.flagged() == evaluation.positive() ? 0 : 1;
        out.output(
            KV.of(
                SummarizeEvaluations.modelKey(
                    verdict.role(), verdict.modelName(), verdict.modelVersion()),
                new Observation(timestamp.getMillis(), ERROR, wrong, id)));
      }
    }
  }

  /**
   * The CUSUM sums of one key, and the baseline of its error test while it is being measured. Means
   * are of the observations since the test's last reset.
   */
  record Sums(
      double scoreUp,
      double scoreDown,
      long scores,
      double scoreSum,
      double errorUp,
      long evaluations,
      double errorSum,
      long baselineCount,
      long baselineErrors,
      long lastTime) {
    static final Sums EMPTY = new Sums(0, 0, 0, 0, 0, 0, 0, 0, 0, Long.MIN_VALUE);
  }

  /** Compact, deterministic coder of {@link Sums}. */
  static final class SumsCoder extends Codec.DataCoder<Sums> {
    private static final long serialVersionUID = 1L;
    private static final SumsCoder INSTANCE = new SumsCoder();

    static SumsCoder of() {
      return INSTANCE;
    }

    @Override
    protected int version() {
      return 1;
    }

    @Override
    protected void write(Sums value, DataOutput out) throws IOException {
      out.writeDouble(value.scoreUp());
      out.writeDouble(value.scoreDown());
      out.writeLong(value.scores());
      out.writeDouble(value.scoreSum());
      out.writeDouble(value.errorUp());
      out.writeLong(value.evaluations());
      out.writeDouble(value.errorSum());
      out.writeLong(value.baselineCount());
      out.writeLong(value.baselineErrors());
      out.writeLong(value.lastTime());
    }

    @Override
    protected Sums read(int version, DataInputStream in) throws IOException {
      return new Sums(
          in.readDouble(),
          in.readDouble(),
          in.readLong(),
          in.readDouble(),
          in.readDouble(),
          in.readLong(),
          in.readDouble(),
          in.readLong(),
          in.readLong(),
          in.readLong());
    }
  }

  /**
   * Per key (role and model version): observations buffered until the watermark passes them, then
   * applied in order to the sums; an alarm when a sum crosses its threshold, then that test reset.
   * The flush timer holds the output watermark at the earliest buffered time (alarms are emitted
   * there); the expiry timer holds nothing.
   */
  static final class CusumFn extends DoFn<KV<String, Observation>, DriftAlarm> {
    static final String BUFFER = "buffer";
    static final String SUMS = "sums";
    static final String NEXT_FLUSH = "nextFlush";
    static final String FLUSH = "flush";
    static final String EXPIRE = "expire";

    private final DriftReferences references;
    private final Settings settings;
    private transient Map<String, Counter> counters;
    private final Distribution alarmTimes =
        TidemarkMetrics.distribution(TidemarkMetrics.DRIFT_ALARM_TIME);

    @StateId(BUFFER)
    private final StateSpec<BagState<Observation>> bufferSpec =
        StateSpecs.bag(ObservationCoder.of());

    @StateId(SUMS)
    private final StateSpec<ValueState<Sums>> sumsSpec = StateSpecs.value(SumsCoder.of());

    @StateId(NEXT_FLUSH)
    private final StateSpec<ValueState<Long>> nextFlushSpec =
        StateSpecs.value(org.apache.beam.sdk.coders.VarLongCoder.of());

    @TimerId(FLUSH)
    private final TimerSpec flushSpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

    @TimerId(EXPIRE)
    private final TimerSpec expireSpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

    CusumFn(DriftReferences references, Settings settings) {
      this.references = references;
      this.settings = settings;
    }

    @Setup
    public void setup() {
      counters = new HashMap<>();
    }

    @ProcessElement
    public void processElement(
        @Element KV<String, Observation> element,
        @Timestamp Instant timestamp,
        @StateId(BUFFER) BagState<Observation> buffer,
        @StateId(NEXT_FLUSH) ValueState<Long> nextFlush,
        @TimerId(FLUSH) Timer flush) {
      buffer.add(element.getValue());
      long at = timestamp.getMillis();
      Long next = nextFlush.read();
      if (next == null || at < next) {
        flush.set(timestamp);
        nextFlush.write(at);
      }
    }

    @OnTimer(FLUSH)
    public void onFlush(
        OnTimerContext context,
        @Key String key,
        @StateId(BUFFER) BagState<Observation> buffer,
        @StateId(SUMS) ValueState<Sums> sumsState,
        @StateId(NEXT_FLUSH) ValueState<Long> nextFlush,
        @TimerId(FLUSH) Timer flush,
        @TimerId(EXPIRE) Timer expire) {
      long now = context.timestamp().getMillis();
      List<Observation> ready = new ArrayList<>();
      List<Observation> later = new ArrayList<>();
      long next = Long.MAX_VALUE;
      for (Observation observation : buffer.read()) {
        if (observation.time() <= now) {
          ready.add(observation);
        } else {
          later.add(observation);
          next = Math.min(next, observation.time());
        }
      }
      buffer.clear();
      later.forEach(buffer::add);
      if (later.isEmpty()) {
        nextFlush.clear();
      } else {
        flush.set(new Instant(next));
        nextFlush.write(next);
      }
      if (ready.isEmpty()) {
        return;
      }
      ready.sort(Observation.ORDER);
      String[] parts = key.split(String.valueOf(SummarizeEvaluations.SEPARATOR), 3);
      Model model = new Model(parts[0], parts[1], parts[2]);
      DriftReference reference = references.of(model.name() + ":" + model.version());
      Sums sums = sumsState.read();
      if (sums == null) {
        sums = Sums.EMPTY;
      }
      for (Observation observation : ready) {
        sums =
            observation.kind() == SCORE
                ? score(sums, observation, model, reference, context)
                : error(sums, observation, model, reference, context);
      }
      sumsState.write(sums);
      long expireAt = capped(sums.lastTime() + settings.idleExpiryMillis());
      expire.withNoOutputTimestamp().set(new Instant(expireAt));
    }

    /** Clears a key that has seen nothing for the idle expiry. */
    @OnTimer(EXPIRE)
    public void onExpire(
        OnTimerContext context,
        @StateId(SUMS) ValueState<Sums> sumsState,
        @StateId(BUFFER) BagState<Observation> buffer,
        @StateId(NEXT_FLUSH) ValueState<Long> nextFlush) {
      Sums sums = sumsState.read();
      long now = context.timestamp().getMillis();
      if (sums != null
          && capped(sums.lastTime() + settings.idleExpiryMillis()) <= now
          && nextFlush.read() == null) {
        sumsState.clear();
        buffer.clear();
      }
    }

    /** A model version in a role. */
    record Model(String role, String name, String version) {}

    private Sums score(
        Sums sums,
        Observation observation,
        Model model,
        DriftReference reference,
        OnTimerContext context) {
      ScoreReference scoreReference = reference.score();
      if (scoreReference == null) {
        return sums;
      }
      double mean = scoreReference.mean();
      double x = observation.value();
      double up = Math.max(0, sums.scoreUp() + x - mean - settings.scoreDelta());
      double down = Math.max(0, sums.scoreDown() + mean - x - settings.scoreDelta());
      long count = sums.scores() + 1;
      double sum = sums.scoreSum() + x;
      double crossed = up > settings.scoreThreshold() ? up : down;
      if (up > settings.scoreThreshold() || down > settings.scoreThreshold()) {
        alarm(
            context,
            new DriftAlarm(
                model.role(),
                model.name(),
                model.version(),
                DriftAlarm.SCORE,
                up > settings.scoreThreshold() ? DriftAlarm.UP : DriftAlarm.DOWN,
                new Instant(observation.time()),
                crossed,
                settings.scoreThreshold(),
                count,
                mean,
                sum / count));
        up = 0;
        down = 0;
        count = 0;
        sum = 0;
      }
      return new Sums(
          up,
          down,
          count,
          sum,
          sums.errorUp(),
          sums.evaluations(),
          sums.errorSum(),
          sums.baselineCount(),
          sums.baselineErrors(),
          Math.max(sums.lastTime(), observation.time()));
    }

    private Sums error(
        Sums sums,
        Observation observation,
        Model model,
        DriftReference reference,
        OnTimerContext context) {
      double x = observation.value();
      long lastTime = Math.max(sums.lastTime(), observation.time());
      Double p0 = reference.errorRate();
      if (p0 == null) {
        if (sums.baselineCount() < settings.baselineEvaluations()) {
          return new Sums(
              sums.scoreUp(),
              sums.scoreDown(),
              sums.scores(),
              sums.scoreSum(),
              sums.errorUp(),
              sums.evaluations(),
              sums.errorSum(),
              sums.baselineCount() + 1,
              sums.baselineErrors() + (long) x,
              lastTime);
        }
        p0 = (double) sums.baselineErrors() / sums.baselineCount();
      }
      double up = Math.max(0, sums.errorUp() + x - p0 - settings.errorDelta());
      long count = sums.evaluations() + 1;
      double sum = sums.errorSum() + x;
      if (up > settings.errorThreshold()) {
        alarm(
            context,
            new DriftAlarm(
                model.role(),
                model.name(),
                model.version(),
                DriftAlarm.ERROR,
                DriftAlarm.UP,
                new Instant(observation.time()),
                up,
                settings.errorThreshold(),
                count,
                p0,
                sum / count));
        up = 0;
        count = 0;
        sum = 0;
      }
      return new Sums(
          sums.scoreUp(),
          sums.scoreDown(),
          sums.scores(),
          sums.scoreSum(),
          up,
          count,
          sum,
          sums.baselineCount(),
          sums.baselineErrors(),
          lastTime);
    }

    private void alarm(OnTimerContext context, DriftAlarm alarm) {
      counters
          .computeIfAbsent(
              TidemarkMetrics.DRIFT_ALARMS_PREFIX
                  + alarm.role()
                  + "/"
                  + alarm.model()
                  + "/"
                  + alarm.kind(),
              TidemarkMetrics::counter)
          .inc();
      alarmTimes.update(alarm.at().getMillis());
      LOG.warn(
          "drift alarm: {} test of {} model {}, {}, at {}: CUSUM {} > {} after {} observations,"
              + " reference mean {}, observed mean {}",
          alarm.kind(),
          alarm.role(),
          alarm.model(),
          alarm.direction(),
          alarm.at(),
          String.format(java.util.Locale.ROOT, "%.3f", alarm.statistic()),
          alarm.threshold(),
          alarm.observations(),
          String.format(java.util.Locale.ROOT, "%.5f", alarm.referenceMean()),
          String.format(java.util.Locale.ROOT, "%.5f", alarm.observedMean()));
      context.output(alarm);
    }

    private static long capped(long millis) {
      return Math.min(millis, GlobalWindow.INSTANCE.maxTimestamp().getMillis());
    }
  }
}
