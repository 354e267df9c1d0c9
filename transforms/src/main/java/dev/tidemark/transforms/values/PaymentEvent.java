package dev.tidemark.transforms.values;

import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.ObjectStreamException;

/**
 * What is left of the payment event class, which {@link Event} replaced: the name of its coder. A
 * savepoint of release 0.1 or 0.2 names that coder in the serializers of the steps that took
 * payment events, and Flink deserializes it before it restores them; it resolves to {@link
 * Event.EventCoder}, which reads the old format as the payments spec's fields.
 */
public final class PaymentEvent {
  private PaymentEvent() {}

  /** Resolves, when deserialized, to {@link Event.EventCoder}. */
  public static final class PaymentEventCoder extends Codec.DataCoder<Event> {
    private static final long serialVersionUID = 1L;

    private PaymentEventCoder() {}

    private Object readResolve() throws ObjectStreamException {
      return Event.EventCoder.of();
    }

    @Override
    protected int version() {
      return 1;
    }

    @Override
    protected void write(Event value, DataOutput out) {
      throw new UnsupportedOperationException("a stand-in resolved when deserialized");
    }

    @Override
    protected Event read(int version, DataInputStream in) {
      throw new UnsupportedOperationException("a stand-in resolved when deserialized");
    }
  }
}
