package dev.tidemark.spec;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.sameInstance;
import static org.junit.Assert.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.List;
import org.apache.beam.sdk.coders.CoderException;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** A spec's feature schema: what it says of each feature, its bytes, and model input. */
@RunWith(JUnit4.class)
public class FeatureSchemaTest {
  private static final PipelineSpec LOGINS = SpecLoader.loadBundled("logins");
  private static final PipelineSpec PAYMENTS = SpecLoader.loadBundled("payments");

  private static FeatureSchema roundTrip(FeatureSchema schema) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    schema.writeTo(new DataOutputStream(bytes));
    return FeatureSchema.readFrom(
        new DataInputStream(new ByteArrayInputStream(bytes.toByteArray())));
  }

  @Test
  public void theSchemaFollowsTheSpecsFeatures() {
    FeatureSchema payments = FeatureSchema.of(PAYMENTS);
    assertThat(payments.names(), is(PAYMENTS.featureNames()));
    assertThat(payments.type(1), is(PipelineSpec.ValueType.DECIMAL));
    assertThat(payments.scale(1), is(2));
    assertThat(payments.isSum(1), is(true));
    assertThat(payments.isSum(2), is(false));
    assertThat(payments.type(0), is(PipelineSpec.ValueType.INTEGER));
    FeatureSchema logins = FeatureSchema.of(LOGINS);
    assertThat(
        logins.names(),
        is(List.of("attempts", "failures", "distinctIps", "distinctCountries", "distinctDevices")));
    assertThat(logins.indexOf("failures"), is(1));
    assertThat(logins.indexOf("amount"), is(-1));
  }

  @Test
  public void aSchemaReadBackEqualsItselfAndOneSchemaObjectServesEveryRecord() throws Exception {
    FeatureSchema logins = FeatureSchema.of(LOGINS);
    FeatureSchema first = roundTrip(logins);
    assertThat(first, is(logins));
    assertThat(first.hashCode(), is(logins.hashCode()));
    assertThat(roundTrip(logins), sameInstance(first));
    assertThat(roundTrip(FeatureSchema.of(PAYMENTS)).equals(first), is(false));
  }

  @Test
  public void anUnknownFormatIsRefusedNamingIt() {
    byte[] bytes = FeatureSchema.of(PAYMENTS).bytes().clone();
    bytes[0] = 7;
    ByteArrayOutputStream framed = new ByteArrayOutputStream();
    framed.write(bytes.length);
    framed.writeBytes(bytes);
    CoderException e =
        assertThrows(
            CoderException.class,
            () ->
                FeatureSchema.readFrom(
                    new DataInputStream(new ByteArrayInputStream(framed.toByteArray()))));
    assertThat(e.getMessage(), containsString("FeatureSchema cannot read format version 7"));
  }

  @Test
  public void aSchemaCarriesItsKeyAndVersionOneReadsAsTheAccount() throws IOException {
    assertThat(FeatureSchema.of(LOGINS).keyName(), is("userId"));
    FeatureSchema payments = FeatureSchema.of(PAYMENTS);
    assertThat(payments.keyName(), is("accountId"));
    // Version 1 is version 2 without the key's name (written after the version byte).
    byte[] current = payments.bytes();
    int keyBytes = 1 + "accountId".length();
    ByteArrayOutputStream version1 = new ByteArrayOutputStream();
    version1.write(1);
    version1.write(current, 1 + keyBytes, current.length - 1 - keyBytes);
    ByteArrayOutputStream framed = new ByteArrayOutputStream();
    framed.write(version1.size());
    framed.writeBytes(version1.toByteArray());
    FeatureSchema read =
        FeatureSchema.readFrom(new DataInputStream(new ByteArrayInputStream(framed.toByteArray())));
    assertThat(read, equalTo(payments));
    assertThat(read.bytes(), equalTo(current));
  }

  @Test
  public void modelInputScalesDecimalsAndGivesAbsentFeaturesAsNaN() {
    FeatureSchema payments = FeatureSchema.of(PAYMENTS);
    FeatureValues values =
        FeatureValues.of(new long[] {3, 1234, 0, 2, 1}, 0b11011, 0, 1_000L, 2_000L);
    float[] vector = payments.toVector(values);
    assertThat(vector[0], is(3f));
    assertThat(vector[1], is(12.34f));
    assertThat(Float.isNaN(vector[2]), is(true));
    assertThat(vector[4], is(1f));
  }
}
