package dev.tidemark.transforms;

import dev.tidemark.spec.FieldValues;
import dev.tidemark.spec.SpecFeaturesFn;
import dev.tidemark.transforms.values.Features;
import org.apache.beam.sdk.coders.CannotProvideCoderException;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderRegistry;
import org.apache.beam.sdk.transforms.Combine.CombineFn;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * A spec's feature combine ({@link SpecFeaturesFn}) whose output is {@link Features}: the values
 * with their schema, as decisions carry them. The accumulator and its coder are the spec combine's,
 * so the state of a window is the same whichever of the two computes it.
 */
final class FeaturesFn extends CombineFn<FieldValues, SpecFeaturesFn.Accumulator, Features> {
  private static final long serialVersionUID = 1L;

  private final SpecFeaturesFn combine;

  FeaturesFn(SpecFeaturesFn combine) {
    this.combine = combine;
  }

  /** The spec combine this computes. */
  SpecFeaturesFn combine() {
    return combine;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof FeaturesFn && combine.equals(((FeaturesFn) o).combine);
  }

  @Override
  public int hashCode() {
    return combine.hashCode();
  }

  @Override
  public SpecFeaturesFn.Accumulator createAccumulator() {
    return combine.createAccumulator();
  }

  @Override
  public SpecFeaturesFn.Accumulator addInput(
      SpecFeaturesFn.Accumulator accumulator, FieldValues input) {
    return combine.addInput(accumulator, input);
  }

  @Override
  public SpecFeaturesFn.Accumulator mergeAccumulators(
      Iterable<SpecFeaturesFn.Accumulator> accumulators) {
    return combine.mergeAccumulators(accumulators);
  }

  @Override
  public Features extractOutput(SpecFeaturesFn.Accumulator accumulator) {
    return new Features(combine.schema(), combine.extractOutput(accumulator));
  }

  @Override
  public Coder<SpecFeaturesFn.Accumulator> getAccumulatorCoder(
      CoderRegistry registry, Coder<FieldValues> inputCoder) throws CannotProvideCoderException {
    return combine.getAccumulatorCoder(registry, inputCoder);
  }

  @Override
  public Coder<Features> getDefaultOutputCoder(
      CoderRegistry registry, Coder<FieldValues> inputCoder) {
    return Features.FeaturesCoder.of();
  }
}
