package dev.tidemark.spec;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.Assert.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The generic parser reads data per the spec's field types and names each failure's reason. */
@RunWith(JUnit4.class)
public class FieldParserTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static final PipelineSpec TYPES =
      SpecLoader.parse(
          String.join(
              "\n",
              "spec: 1",
              "name: types",
              "events:",
              "  types: [t.v1]",
              "  key: id",
              "  fields:",
              "    id: {type: string, minLength: 2, maxLength: 4}",
              "    raw: {type: string, chars: any, optional: true}",
              "    price: {type: decimal, scale: 3, integerDigits: 4, min: -5, max: 9999.999}",
              "    qty: {type: integer, min: 1, max: 10, reason: bad_qty}",
              "    flag: {type: boolean, optional: true}",
              "    colour: {type: enum, values: [red, blue], optional: true}",
              "    at: {type: timestamp, optional: true}",
              "features: [{name: n, aggregate: count}]",
              "model: {uri: m.ubj}"),
          "types.yaml");
  private static final FieldParser PARSER = FieldParser.of(TYPES);

  private static FieldValues parse(String json) throws Exception {
    return PARSER.parse(JSON.readTree(json), 1000, 2000);
  }

  private static String reason(String json) throws IOException {
    JsonNode data = JSON.readTree(json);
    FieldRejection e = assertThrows(FieldRejection.class, () -> PARSER.parse(data, 0, 0));
    return e.reason() + ": " + e.getMessage();
  }

  @Test
  public void aRequiredTimestampFieldCanStampTheEventTime() throws Exception {
    FieldParser timed =
        FieldParser.of(
            SpecLoader.parse(
                String.join(
                    "\n",
                    "spec: 1",
                    "name: timed",
                    "events:",
                    "  types: [t.v1]",
                    "  key: id",
                    "  fields:",
                    "    id: {type: string}",
                    "    at: {type: timestamp}",
                    "clocks: {eventTime: at}",
                    "features: [{name: n, aggregate: count}]",
                    "model: {uri: m.ubj}"),
                "timed.yaml"));
    FieldValues values =
        timed.parseTimedBy(
            timed.indexOf("at"),
            JSON.readTree("{\"id\":\"x\",\"at\":\"1970-01-01T00:00:05Z\"}"),
            9000);
    assertThat(values.eventTimeMillis(), is(5000L));
    assertThat(values.ingestionTimeMillis(), is(9000L));
    assertThat(values.getLong(timed.indexOf("at")), is(5000L));
    assertThat(timed.nameOf(1), is("at"));
    // Not a required timestamp: the optional one of TYPES, a string.
    assertThrows(
        IllegalArgumentException.class,
        () -> PARSER.parseTimedBy(PARSER.indexOf("at"), JSON.readTree("{}"), 0));
    assertThrows(
        IllegalArgumentException.class,
        () -> timed.parseTimedBy(timed.indexOf("id"), JSON.readTree("{}"), 0));
  }

  @Test
  public void readsEachTypeWithoutBoxing() throws Exception {
    FieldValues values =
        parse(
            "{\"id\":\"ab\",\"price\":-1.5,\"qty\":3,\"flag\":true,\"colour\":\"red\","
                + "\"at\":\"2026-01-01T00:00:01Z\",\"extra\":{}}");
    assertThat(PARSER.key(values), is("ab"));
    assertThat(values.getLong(PARSER.indexOf("price")), is(-1500L));
    assertThat(values.getLong(PARSER.indexOf("qty")), is(3L));
    assertThat(values.getLong(PARSER.indexOf("flag")), is(1L));
    assertThat(values.getString(PARSER.indexOf("colour")), is("red"));
    assertThat(values.getLong(PARSER.indexOf("at")), is(1767225601000L));
    assertThat(values.isPresent(PARSER.indexOf("raw")), is(false));
    assertThat(values.getString(PARSER.indexOf("raw")), is(nullValue()));
    assertThat(values.eventTimeMillis(), is(1000L));
  }

  @Test
  public void eachFailureHasItsFieldsReason() throws Exception {
    assertThat(reason("{\"price\":1,\"qty\":1}"), is("invalid_id: data.id is missing"));
    assertThat(reason("{\"id\":\"a\",\"price\":1,\"qty\":1}"), containsString("invalid_id"));
    assertThat(
        reason("{\"id\":\"abcde\",\"price\":1,\"qty\":1}"), containsString("over the limit of 4"));
    assertThat(
        reason("{\"id\":\"a\\u0001\",\"price\":1,\"qty\":1}"), containsString("control character"));
    assertThat(
        reason("{\"id\":\"ab\",\"price\":\"1\",\"qty\":1}"), containsString("invalid_price"));
    assertThat(
        reason("{\"id\":\"ab\",\"price\":-6,\"qty\":1}"), containsString("below the minimum -5"));
    assertThat(reason("{\"id\":\"ab\",\"price\":1.0001,\"qty\":1}"), containsString("more than 3"));
    assertThat(
        reason("{\"id\":\"ab\",\"price\":1E+99999999,\"qty\":1}"), containsString("invalid_price"));
    assertThat(
        reason("{\"id\":\"ab\",\"price\":10000,\"qty\":1}"), containsString("above the maximum"));
    assertThat(reason("{\"id\":\"ab\",\"price\":1,\"qty\":11}"), containsString("bad_qty"));
    assertThat(reason("{\"id\":\"ab\",\"price\":1,\"qty\":1.5}"), containsString("bad_qty"));
    assertThat(
        reason("{\"id\":\"ab\",\"price\":1,\"qty\":1,\"flag\":1}"), containsString("invalid_flag"));
    assertThat(
        reason("{\"id\":\"ab\",\"price\":1,\"qty\":1,\"colour\":\"green\"}"),
        containsString("invalid_colour"));
    assertThat(
        reason("{\"id\":\"ab\",\"price\":1,\"qty\":1,\"at\":\"yesterday\"}"),
        containsString("invalid_at"));
    assertThat(reason("[1]"), is("invalid_data: data is not a JSON object"));
  }

  @Test
  public void theFirstFailingFieldInSpecOrderDecides() throws Exception {
    assertThat(
        reason("{\"id\":\"ab\",\"price\":\"x\",\"qty\":0}"), containsString("invalid_price"));
  }

  @Test
  public void charsAnyAcceptsControlCharacters() throws Exception {
    FieldValues values = parse("{\"id\":\"ab\",\"raw\":\"\\u0000\",\"price\":0,\"qty\":1}");
    assertThat(values.getString(PARSER.indexOf("raw")), is("\u0000"));
  }

  @Test
  public void theCoderRoundTripsAndIsDeterministic() throws Exception {
    FieldValues values =
        parse("{\"id\":\"ab\",\"price\":2.5,\"qty\":3,\"colour\":\"blue\",\"flag\":false}");
    FieldValues.Coder coder = PARSER.coder();
    ByteArrayOutputStream first = new ByteArrayOutputStream();
    coder.encode(values, first);
    FieldValues decoded = coder.decode(new ByteArrayInputStream(first.toByteArray()));
    assertThat(decoded, is(values));
    ByteArrayOutputStream second = new ByteArrayOutputStream();
    coder.encode(decoded, second);
    assertThat(second.toByteArray(), is(first.toByteArray()));
    assertThat(first.toByteArray()[0], is((byte) 1));
  }
}
