package dev.tidemark.pipelines.io;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.nullValue;

import dev.tidemark.pipelines.io.kafka.KafkaCloudEvents;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.joda.time.Instant;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** Sources read an event's time where the spec's {@code clocks.eventTime} says. */
@RunWith(JUnit4.class)
public class CloudEventTimeTest {
  private static final String STRUCTURED =
      "{\"specversion\":\"1.0\",\"id\":\"a\",\"source\":\"/s\",\"type\":\"t\","
          + "\"time\":\"2026-01-01T00:00:00Z\",\"data\":{\"nested\":{\"paidAt\":\"x\"},"
          + "\"paidAt\":\"2026-01-01T00:07:30Z\",\"other\":[1,2]}}";

  private static final Instant ATTRIBUTE = Instant.parse("2026-01-01T00:00:00Z");
  private static final Instant FIELD = Instant.parse("2026-01-01T00:07:30Z");

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  public void theAttributeOrADataFieldOfAStructuredEvent() throws IOException {
    CloudEventTime attribute = CloudEventTime.of("time");
    CloudEventTime field = CloudEventTime.of("paidAt");
    assertThat(attribute.isAttribute(), is(true));
    assertThat(field.isAttribute(), is(false));
    assertThat(attribute.ofStructured(bytes(STRUCTURED)), is(ATTRIBUTE));
    assertThat(field.ofStructured(bytes(STRUCTURED)), is(FIELD));
    assertThat(attribute.of(Json.MAPPER.readTree(STRUCTURED)), is(ATTRIBUTE));
    assertThat(field.of(Json.MAPPER.readTree(STRUCTURED)), is(FIELD));
    // Only data's own member counts, and a missing or unreadable one gives null.
    assertThat(CloudEventTime.of("nested").ofStructured(bytes(STRUCTURED)), nullValue());
    assertThat(CloudEventTime.of("absent").ofStructured(bytes(STRUCTURED)), nullValue());
    assertThat(field.ofStructured(bytes("{\"data\":\"text\"}")), nullValue());
    assertThat(field.ofStructured(bytes("not json")), nullValue());
    assertThat(
        field.of(Json.MAPPER.readTree("{\"paidAt\":\"2026-01-01T00:07:30Z\"}")), nullValue());
  }

  @Test
  public void kafkaRecordsInEitherContentMode() {
    CloudEventTime field = CloudEventTime.of("paidAt");
    assertThat(KafkaCloudEvents.eventTime(null, bytes(STRUCTURED)), is(ATTRIBUTE));
    assertThat(KafkaCloudEvents.eventTime(null, bytes(STRUCTURED), field), is(FIELD));
    // Binary mode: the time is the ce_time header, and the value is the event's data.
    RecordHeaders headers = new RecordHeaders();
    headers.add("ce_specversion", bytes("1.0"));
    headers.add("ce_time", bytes("2026-01-01T00:00:00Z"));
    byte[] data = bytes("{\"paidAt\":\"2026-01-01T00:07:30Z\",\"amount\":1}");
    assertThat(KafkaCloudEvents.eventTime(headers, data), is(ATTRIBUTE));
    assertThat(KafkaCloudEvents.eventTime(headers, data, field), is(FIELD));
    assertThat(KafkaCloudEvents.eventTime(headers, null, field), nullValue());
  }
}
