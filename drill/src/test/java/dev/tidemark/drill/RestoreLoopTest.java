package dev.tidemark.drill;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.nullValue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** Three failures in a row with one message, since a moment, are a restore loop. */
@RunWith(JUnit4.class)
public class RestoreLoopTest {
  private static final String SINK =
      "java.lang.IllegalStateException: record 27166 replayed after a restore is not the record";

  private static JsonNode history(Object... timestampAndTrace) throws IOException {
    StringBuilder json = new StringBuilder("{\"exceptionHistory\":{\"entries\":[");
    for (int i = 0; i < timestampAndTrace.length; i += 2) {
      json.append(i == 0 ? "" : ",")
          .append("{\"timestamp\":")
          .append(timestampAndTrace[i])
          .append(",\"stacktrace\":")
          .append(Json.MAPPER.writeValueAsString(timestampAndTrace[i + 1] + "\n\tat x.y(Z.java:1)"))
          .append('}');
    }
    return Json.MAPPER.readTree(json.append("]}}").toString());
  }

  @Test
  public void threeFailuresWithOneMessageSinceTheMomentAreALoop() throws IOException {
    assertThat(RestoreLoop.of(history(300, SINK, 200, SINK, 100, SINK), 100), is(SINK));
    // In any order of the body.
    assertThat(RestoreLoop.of(history(100, SINK, 300, SINK, 200, SINK), 0), is(SINK));
  }

  @Test
  public void fewerOrDifferentFailuresAreNot() throws IOException {
    assertThat(RestoreLoop.of(history(300, SINK, 200, SINK), 0), nullValue());
    assertThat(
        RestoreLoop.of(history(300, SINK, 200, "TaskManager lost", 100, SINK), 0), nullValue());
    // Failures before the moment (the faults the drill struck) do not count.
    assertThat(RestoreLoop.of(history(300, SINK, 200, SINK, 100, SINK), 150), nullValue());
    assertThat(RestoreLoop.of(Json.MAPPER.readTree("{}"), 0), nullValue());
  }
}
