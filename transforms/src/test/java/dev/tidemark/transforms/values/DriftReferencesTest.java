package dev.tidemark.transforms.values;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.nullValue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.beam.sdk.util.SerializableUtils;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

@RunWith(JUnit4.class)
public class DriftReferencesTest {
  private static final DriftReference ONE =
      new DriftReference(ScoreReference.of(new double[] {0.05, 0.15}), 0.1);
  private static final DriftReference TWO =
      new DriftReference(ScoreReference.of(new double[] {0.25, 0.35}), null);

  /** Counts its calls in a static counter: a deserialized copy counts in the same place. */
  private static final AtomicInteger CALLS = new AtomicInteger();

  @Test
  public void aKnownVersionWinsAndAnUnknownOneHasNone() {
    DriftReferences references = DriftReferences.of(Map.of("m:1", ONE));
    assertThat(references.of("m:1"), is(ONE));
    assertThat(references.of("m:2"), is(DriftReference.none()));
    assertThat(references.of("m:2").score(), is(nullValue()));
  }

  @Test
  public void theLookupIsAskedOncePerVersionAndOnlyForVersionsNotKnown() {
    CALLS.set(0);
    DriftReferences references =
        DriftReferences.of(Map.of("m:1", ONE))
            .withLookup(
                version -> {
                  CALLS.incrementAndGet();
                  return "m:2".equals(version) ? TWO : null;
                });
    // Each worker gets its own copy, with an empty cache of found versions.
    DriftReferences copy = SerializableUtils.clone(references);
    for (int i = 0; i < 3; i++) {
      assertThat(copy.of("m:1"), is(ONE));
      assertThat(copy.of("m:2"), is(TWO));
      assertThat(copy.of("m:3"), is(DriftReference.none()));
    }
    assertThat(CALLS.get(), is(2));
  }

  @Test
  public void aLaterLookupIsAskedWhenAnEarlierOneFindsNothing() {
    DriftReferences references =
        DriftReferences.of(Map.of())
            .withLookup(version -> "m:1".equals(version) ? ONE : null)
            .withLookup(version -> "m:1".equals(version) || "m:2".equals(version) ? TWO : null);
    assertThat(
        List.of(references.of("m:1"), references.of("m:2"), references.of("m:3")),
        is(List.of(ONE, TWO, DriftReference.none())));
  }
}
