package dev.tidemark.transforms.values;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.Assert.assertThrows;

import org.joda.time.Instant;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

@RunWith(JUnit4.class)
public class LabelTest {
  private static final String LINE =
      "{\"specversion\":\"1.0\",\"id\":\"label-000001\",\"source\":\"/tidemark/labels\","
          + "\"type\":\"tidemark.label.v1\",\"time\":\"2026-01-01T03:12:09.120Z\","
          + "\"datacontenttype\":\"application/json\",\"data\":{\"subject\":{\"source\":"
          + "\"/tidemark/pos/eu-west\",\"id\":\"txn-000123\"},\"key\":\"acct-00042\","
          + "\"eventTime\":\"2026-01-01T00:03:12.345Z\",\"value\":\"fraud\"}}";

  @Test
  public void aLabelNamesItsEventItsOutcomeAndItsOwnTime() {
    Label label = Label.parse(LINE);
    assertThat(label.source(), is("/tidemark/labels"));
    assertThat(label.id(), is("label-000001"));
    assertThat(label.time(), is(Instant.parse("2026-01-01T03:12:09.120Z")));
    assertThat(label.subjectSource(), is("/tidemark/pos/eu-west"));
    assertThat(label.subjectId(), is("txn-000123"));
    assertThat(label.key(), is("acct-00042"));
    assertThat(label.eventTime(), is(Instant.parse("2026-01-01T00:03:12.345Z")));
    assertThat(label.value(), is("fraud"));
    assertThat(label.identity(), not(is(label.subject())));
    assertThat(Label.parse(label.toJsonLine()), is(label));
  }

  @Test
  public void keyAndEventTimeAreOptional() {
    Label label =
        Label.parse(
            LINE.replace(",\"key\":\"acct-00042\"", "")
                .replace(",\"eventTime\":\"2026-01-01T00:03:12.345Z\"", ""));
    assertThat(label.key(), is(nullValue()));
    assertThat(label.eventTime(), is(nullValue()));
    assertThat(Label.parse(label.toJsonLine()), is(label));
  }

  @Test
  public void eachDefectIsNamed() {
    assertRejected("{", "not JSON");
    assertRejected("[]", "not a JSON object");
    assertRejected(LINE.replace("\"1.0\"", "\"0.3\""), "specversion");
    assertRejected(LINE.replace("tidemark.label.v1", "payments.transaction.v1"), "type is");
    assertRejected(LINE.replace("\"id\":\"label-000001\",", ""), "id is missing");
    assertRejected(LINE.replace("2026-01-01T03:12:09.120Z", "soon"), "time is not an RFC 3339");
    assertRejected(LINE.replace("\"id\":\"txn-000123\"", "\"id\":\"\""), "data.subject.id");
    assertRejected(LINE.replace(",\"value\":\"fraud\"", ""), "data.value");
    assertRejected(
        LINE.replace("2026-01-01T00:03:12.345Z", "2026-13-01T00:03:12.345Z"), "data.eventTime");
    assertRejected(LINE.replace("\"key\":", "\"value\":\"legit\",\"key\":"), "not JSON");
  }

  private static void assertRejected(String line, String reason) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Label.parse(line));
    assertThat(e.getMessage(), containsString(reason));
  }
}
