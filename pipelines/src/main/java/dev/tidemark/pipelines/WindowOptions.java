package dev.tidemark.pipelines;

import dev.tidemark.transforms.ComputeFeatures;
import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.DefaultValueFactory;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/** The four windowing decisions. */
public interface WindowOptions extends PipelineOptions {
  @Description("Sliding window size (ISO-8601). Unless given, the spec's windows.size.")
  @Default.InstanceFactory(SpecDefaults.WindowSize.class)
  String getWindowSize();

  void setWindowSize(String duration);

  @Description(
      "Sliding window period (ISO-8601); equal to the size gives fixed windows. Unless given, the spec's windows.period.")
  @Default.InstanceFactory(SpecDefaults.WindowPeriod.class)
  String getWindowPeriod();

  void setWindowPeriod(String duration);

  @Description(
      "Early firings this long (processing time, ISO-8601) after the first element of a pane;"
          + " PT0S fires on every element; 'none' disables early firings. Unless given, the spec's windows.earlyFiring.")
  @Default.InstanceFactory(SpecDefaults.EarlyFiringDelay.class)
  String getEarlyFiringDelay();

  void setEarlyFiringDelay(String duration);

  @Description(
      "Late firings this long (processing time, ISO-8601) after the first late element; PT0S"
          + " fires on every late element. Unless given, the spec's windows.lateFiring.")
  @Default.InstanceFactory(SpecDefaults.LateFiringDelay.class)
  String getLateFiringDelay();

  void setLateFiringDelay(String duration);

  @Description(
      "How long after the end of a window late events still revise it (ISO-8601). Unless given, the spec's windows.allowedLateness.")
  @Default.InstanceFactory(SpecDefaults.AllowedLateness.class)
  String getAllowedLateness();

  void setAllowedLateness(String duration);

  @Description(
      "ACCUMULATING (each pane has everything so far) or DISCARDING (only what is new). Unless given, the spec's windows.accumulation.")
  @Default.InstanceFactory(SpecDefaults.Accumulation.class)
  TidemarkOptions.AccumulationKind getAccumulationMode();

  void setAccumulationMode(TidemarkOptions.AccumulationKind mode);

  @Description(
      "How sliding windows are aggregated: SLICES (each event combined once, into its slice of one"
          + " period, and each window merged from its slices) or ONE_STAGE (Beam's SlidingWindows:"
          + " each event combined once per window). A stream with DISCARDING panes always uses"
          + " ONE_STAGE. A job restored from a savepoint must keep the aggregation it started"
          + " with (releases up to 0.2.0: ONE_STAGE). See docs/sliding-windows.md.")
  @Default.Enum("SLICES")
  ComputeFeatures.Aggregation getWindowAggregation();

  void setWindowAggregation(ComputeFeatures.Aggregation aggregation);

  @Description(
      "Keys of the too-late gate before the windowing step (default: the job's parallelism:"
          + " --parallelism on Flink, --targetParallelism on the DirectRunner, --maxNumWorkers or"
          + " --numWorkers on Dataflow). A job restored from a savepoint must keep the count it"
          + " started with: pass it explicitly before changing the parallelism.")
  @Default.InstanceFactory(GateShardsFactory.class)
  Integer getGateShards();

  void setGateShards(Integer shards);

  /** The job's parallelism on its runner ({@link Runners#parallelism}), at least one. */
  final class GateShardsFactory implements DefaultValueFactory<Integer> {
    @Override
    public Integer create(PipelineOptions options) {
      return Math.max(1, Runners.parallelism(options));
    }
  }
}
