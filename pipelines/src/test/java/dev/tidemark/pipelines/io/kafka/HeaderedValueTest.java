package dev.tidemark.pipelines.io.kafka;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.ObjectStreamClass;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.testing.CoderProperties;
import org.apache.beam.sdk.util.CoderUtils;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The versioned coder of {@link HeaderedValue}, which the transactional sink keeps in state. */
@RunWith(JUnit4.class)
public class HeaderedValueTest {
  private static HeaderedValue value() {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("ce_id", "evt-1");
    headers.put("content-type", "application/json");
    return new HeaderedValue("{\"a\":1}".getBytes(StandardCharsets.UTF_8), headers);
  }

  /** Version 1, written by hand: the value, then the headers in order. */
  private static byte[] version1() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(bytes);
    out.writeByte(1);
    byte[] json = "{\"a\":1}".getBytes(StandardCharsets.UTF_8);
    out.writeInt(json.length);
    out.write(json);
    out.writeInt(2);
    for (String text : new String[] {"ce_id", "evt-1", "content-type", "application/json"}) {
      byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
      out.writeInt(utf8.length);
      out.write(utf8);
    }
    return bytes.toByteArray();
  }

  @Test
  public void roundTripsAndReadsVersionOneWrittenByHand() throws Exception {
    HeaderedValue.Coder coder = HeaderedValue.Coder.of();
    CoderProperties.coderDecodeEncodeEqual(coder, value());
    CoderProperties.coderDecodeEncodeEqual(coder, HeaderedValue.of("{}"));
    HeaderedValue back = CoderUtils.decodeFromByteArray(coder, version1());
    assertThat(back, equalTo(value()));
    assertThat(back.headers().keySet().iterator().next(), is("ce_id"));
    assertThat(CoderUtils.encodeToByteArray(coder, value()), equalTo(version1()));
    assertThat(ObjectStreamClass.lookup(HeaderedValue.Coder.class).getSerialVersionUID(), is(1L));
  }

  @Test
  public void anUnknownVersionFailsNamingTheCoder() throws Exception {
    byte[] bytes = version1();
    bytes[0] = 2;
    CoderException e =
        assertThrows(
            CoderException.class,
            () -> CoderUtils.decodeFromByteArray(HeaderedValue.Coder.of(), bytes));
    assertThat(e.getMessage(), containsString("HeaderedValue.Coder cannot read format version 2"));
  }
}
