package dev.tidemark.pipelines.io;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import java.nio.charset.StandardCharsets;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** Which replay records are labels: a top-level {@code type} of tidemark.label.v1, nothing else. */
@RunWith(JUnit4.class)
public class ReplayLabelsTest {
  private static boolean isLabel(String line) {
    return ReplayLabels.isLabel(line.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  public void onlyARecordWhoseOwnTypeIsALabelsIsALabel() {
    assertThat(
        isLabel("{\"specversion\":\"1.0\",\"type\":\"tidemark.label.v1\",\"id\":\"1\"}"), is(true));
    assertThat(
        isLabel("{\"data\":{\"a\":[1,{\"b\":2}]},\"type\":\"tidemark.label.v1\"}"), is(true));
    // An event that mentions the type, in its data or in another field, is an event.
    assertThat(
        isLabel("{\"type\":\"payments.transaction.v1\",\"data\":{\"type\":\"tidemark.label.v1\"}}"),
        is(false));
    assertThat(isLabel("{\"data\":{\"type\":\"tidemark.label.v1\"}}"), is(false));
    assertThat(isLabel("{\"subject\":\"tidemark.label.v1\",\"type\":\"x\"}"), is(false));
    // Not JSON, not an object, or no string type: the events' parser dead-letters it.
    assertThat(isLabel("tidemark.label.v1"), is(false));
    assertThat(isLabel("[\"type\",\"tidemark.label.v1\"]"), is(false));
    assertThat(isLabel("{\"type\":[\"tidemark.label.v1\"]}"), is(false));
    // A label broken after its type is a label: the labels' parser dead-letters it.
    assertThat(isLabel("{\"id\":\"1\",\"type\":\"tidemark.label.v1\",\"time\":"), is(true));
  }
}
