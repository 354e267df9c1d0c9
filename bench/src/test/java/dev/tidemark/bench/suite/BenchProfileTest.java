package dev.tidemark.bench.suite;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.transforms.util.Json;
import java.util.List;
import org.junit.Test;

public class BenchProfileTest {
  @Test
  public void narrowsAProfileAndSaysHow() {
    BenchProfile narrowed = BenchProfile.FULL.with(List.of(1_000, 1_000_000), List.of(10), null, 1);
    assertThat(narrowed.id(), is("full"));
    assertThat(narrowed.isFull(), is(true));
    assertThat(narrowed.accounts, is(List.of(1_000, 1_000_000)));
    assertThat(narrowed.fanOuts, is(List.of(10)));
    assertThat(narrowed.warmups, is(BenchProfile.FULL.warmups));
    assertThat(narrowed.repeats, is(1));
    assertThat(narrowed.events, is(BenchProfile.FULL.events));
    assertThat(narrowed.overrides(), is("--accounts=1000,1000000 --fanOuts=10 --repeats=1"));
    assertThat(narrowed.toString(), is("full (--accounts=1000,1000000 --fanOuts=10 --repeats=1)"));
  }

  @Test
  public void theOverridesAsPrintedNarrowTheProfileAgain() {
    BenchProfile narrowed = BenchProfile.FULL.with(List.of(1_000, 1_000_000), List.of(10), 0, 1);

    BenchProfile again = BenchProfile.FULL.withOverrides(narrowed.overrides());

    assertThat(again.overrides(), is(narrowed.overrides()));
    assertThat(again.accounts, is(List.of(1_000, 1_000_000)));
    assertThat(again.fanOuts, is(List.of(10)));
    assertThat(again.warmups, is(0));
    assertThat(again.repeats, is(1));
    assertThat(BenchProfile.SMALL.withOverrides("").overrides(), is(""));
    assertThrows(
        IllegalArgumentException.class, () -> BenchProfile.SMALL.withOverrides("--events=5"));
  }

  @Test
  public void withoutOverridesIsThePublishedProfile() {
    BenchProfile same = BenchProfile.SMALL.with(List.of(), List.of(), null, null);
    assertThat(same.overrides(), is(""));
    assertThat(same.isFull(), is(false));
    assertThat(same.isSmoke(), is(false));
    assertThat(same.accounts, is(BenchProfile.SMALL.accounts));
    assertThat(same.repeats, is(BenchProfile.SMALL.repeats));
  }

  @Test
  public void rejectsCountsThatCannotMeasure() {
    assertThrows(
        IllegalArgumentException.class, () -> BenchProfile.SMALL.with(null, null, null, 0));
    assertThrows(
        IllegalArgumentException.class, () -> BenchProfile.SMALL.with(null, null, -1, null));
    assertThrows(
        IllegalArgumentException.class,
        () -> BenchProfile.SMALL.with(List.of(0), null, null, null));
  }

  @Test
  public void latestJsonNamesTheOverrides() throws Exception {
    BenchResults narrowed =
        new BenchResults(BenchProfile.FULL.with(List.of(1_000, 1_000_000), null, 0, 1));
    JsonNode root = Json.MAPPER.readTree(narrowed.toJson("test machine"));
    assertThat(root.path("profile").asText(), is("full"));
    assertThat(
        root.path("profileOverrides").asText(),
        is("--accounts=1000,1000000 --warmups=0 --repeats=1"));
    assertThat(
        new BenchResults(BenchProfile.FULL).toJson("m").contains("profileOverrides"), is(false));
  }

  @Test
  public void eachProfileIsKnownByItsId() {
    for (BenchProfile profile : BenchProfile.values()) {
      assertThat(BenchProfile.fromId(profile.id()), is(profile));
    }
    assertThat(BenchProfile.SMOKE.isSmoke(), is(true));
    assertThat(BenchProfile.SMOKE.isFull(), is(false));
    assertThat(BenchProfile.SMOKE.events < BenchProfile.SMALL.events, is(true));
    assertThrows(IllegalArgumentException.class, () -> BenchProfile.fromId("tiny"));
  }
}
