package dev.tidemark.transforms;

import dev.tidemark.spec.SpecFeaturesFn;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.transforms.values.Codec;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.InvalidObjectException;
import java.io.ObjectStreamException;
import org.apache.beam.sdk.coders.CannotProvideCoderException;
import org.apache.beam.sdk.coders.CoderRegistry;

/**
 * What is left of the hand-written payment features combine, which {@link SpecFeaturesFn} replaced:
 * the name of its accumulator coder. A savepoint of release 0.1 or 0.2 names that coder in its
 * window state's serializer, and Flink deserializes it before it restores the state; it resolves to
 * the payments spec's accumulator coder, which reads the old state's format.
 */
final class AggregateFeaturesFn {
  private AggregateFeaturesFn() {}

  /** Resolves, when deserialized, to the bundled payments spec's accumulator coder. */
  static final class AccumulatorCoder extends Codec.DataCoder<Object> {
    private static final long serialVersionUID = 1L;

    private AccumulatorCoder() {}

    private Object readResolve() throws ObjectStreamException {
      try {
        return SpecFeaturesFn.of(SpecLoader.loadBundled(SpecLoader.DEFAULT_BUNDLED))
            .getAccumulatorCoder(CoderRegistry.createDefault(), null);
      } catch (CannotProvideCoderException e) {
        InvalidObjectException failure =
            new InvalidObjectException("no accumulator coder for the payments spec");
        failure.initCause(e);
        throw failure;
      }
    }

    @Override
    protected int version() {
      return 1;
    }

    @Override
    protected void write(Object value, DataOutput out) {
      throw new UnsupportedOperationException("a stand-in resolved when deserialized");
    }

    @Override
    protected Object read(int version, DataInputStream in) {
      throw new UnsupportedOperationException("a stand-in resolved when deserialized");
    }
  }
}
