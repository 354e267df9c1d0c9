package dev.tidemark.transforms.values;

import dev.tidemark.spec.FieldValues;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.IOException;

/**
 * What is left of the input the hand-written payment features combine read: its coder's name. A
 * savepoint of release 0.1 or 0.2 names that coder among the output coders of the step that keyed
 * events for the windows, and Flink deserializes it before it restores the step; it reads (and
 * writes) that format as the payments spec's {@link FieldValues}, which the step outputs now.
 */
public final class FeatureInput {
  private FeatureInput() {}

  /**
   * The format of releases 0.1 and 0.2 (version 1: amount in minor units, merchant and country or
   * null, event and ingestion times) as the payment fields of the bundled payments spec.
   */
  public static final class FeatureInputCoder extends Codec.DataCoder<FieldValues> {
    private static final long serialVersionUID = 1L;

    private PaymentFields fields() {
      return PaymentFields.bundled();
    }

    @Override
    protected int version() {
      return 1;
    }

    @Override
    protected void write(FieldValues value, DataOutput out) throws IOException {
      PaymentFields f = fields();
      out.writeLong(value.getLong(f.amount));
      Codec.writeNullableString(
          value.isPresent(f.merchantId) ? value.getString(f.merchantId) : null, out);
      Codec.writeNullableString(
          value.isPresent(f.country) ? value.getString(f.country) : null, out);
      out.writeLong(value.eventTimeMillis());
      out.writeLong(value.ingestionTimeMillis());
    }

    @Override
    protected FieldValues read(int version, DataInputStream in) throws IOException {
      long amount = in.readLong();
      String merchant = Codec.readNullableString(in);
      String country = Codec.readNullableString(in);
      return fields().values(null, amount, null, merchant, country, in.readLong(), in.readLong());
    }
  }
}
