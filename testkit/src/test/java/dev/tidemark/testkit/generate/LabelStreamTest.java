package dev.tidemark.testkit.generate;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.allOf;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;

import dev.tidemark.transforms.values.Label;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

@RunWith(JUnit4.class)
public class LabelStreamTest {
  private static final int EVENTS = 3000;

  private static EventGenerator generated(Workload workload) throws Exception {
    EventGenerator generator =
        new EventGenerator(
            GeneratorConfig.builder().seed(5).numEvents(EVENTS).workload(workload).build());
    generator.writeTo(new ByteArrayOutputStream());
    return generator;
  }

  private static List<String> lines(List<LabelStream.Subject> subjects, long seed)
      throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    LabelStream.write(subjects, LabelStream.Config.defaults(seed), out);
    return List.of(out.toString(StandardCharsets.UTF_8).split("\n"));
  }

  @Test
  public void everyEventGetsItsTrueOutcomeOnceAfterItHappened() throws Exception {
    EventGenerator generator = generated(Workload.PAYMENTS);
    List<LabelStream.Subject> subjects = generator.subjects();
    assertThat(subjects.size(), is((int) generator.stats().eventsWritten()));
    Map<String, LabelStream.Subject> bySubject = new HashMap<>();
    subjects.forEach(s -> bySubject.put(s.source() + "\u0000" + s.id(), s));

    Map<String, Label> byIdentity = new HashMap<>();
    Set<String> labelled = new HashSet<>();
    long repeated = 0;
    long unknown = 0;
    long fraud = 0;
    List<Long> delays = new ArrayList<>();
    long previous = Long.MIN_VALUE;
    for (String line : lines(subjects, 5)) {
      Label label = Label.parse(line);
      Label first = byIdentity.putIfAbsent(label.identity(), label);
      if (first != null) {
        assertThat("a re-sent label is the same label", label, is(first));
        repeated++;
        continue;
      }
      assertThat("in label-time order", label.time().getMillis(), greaterThanOrEqualTo(previous));
      previous = label.time().getMillis();
      LabelStream.Subject subject = bySubject.get(label.subject());
      if (subject == null) {
        unknown++;
        continue;
      }
      assertThat("one label per event", labelled.add(label.subject()), is(true));
      assertThat(label.value(), is(subject.value()));
      assertThat(label.key(), is(subject.key()));
      assertThat(label.eventTime().getMillis(), is(subject.eventTimeMs()));
      assertThat(label.time().getMillis(), greaterThan(subject.eventTimeMs()));
      delays.add(label.time().getMillis() - subject.eventTimeMs());
      fraud += label.value().equals("fraud") ? 1 : 0;
    }
    assertThat(labelled.size(), is(subjects.size()));
    assertThat(fraud, is(generator.stats().fraudEvents()));
    assertThat(repeated, is(allOf(greaterThan(EVENTS / 100L), lessThan(EVENTS / 25L))));
    assertThat(unknown, is(Math.round(EVENTS * 0.005)));

    // Most within hours, a tail over days.
    long[] sorted = delays.stream().mapToLong(Long::longValue).sorted().toArray();
    long median = sorted[sorted.length / 2];
    assertThat(median, is(allOf(greaterThan(hours(1)), lessThan(hours(5)))));
    long overADay = Arrays.stream(sorted).filter(d -> d > hours(24)).count();
    assertThat((double) overADay / sorted.length, is(allOf(greaterThan(0.05), lessThan(0.25))));
    assertThat(sorted[sorted.length - 1], greaterThan(hours(72)));
  }

  @Test
  public void sameSubjectsAndSeedGiveTheSameBytesAnotherSeedOthers() throws Exception {
    List<LabelStream.Subject> subjects = generated(Workload.PAYMENTS).subjects();
    assertThat(lines(subjects, 5), is(lines(generated(Workload.PAYMENTS).subjects(), 5)));
    assertThat(lines(subjects, 5).equals(lines(subjects, 6)), is(false));
  }

  @Test
  public void loginsAreLabelledWithTheirOwnOutcomes() throws Exception {
    EventGenerator generator = generated(Workload.LOGINS);
    Set<String> values = new HashSet<>();
    for (String line : lines(generator.subjects(), 5)) {
      Label label = Label.parse(line);
      if (label.key().startsWith("user-")) {
        values.add(label.value());
      }
    }
    assertThat(values, is(Set.of(LoginsContent.POSITIVE_LABEL, LoginsContent.NEGATIVE_LABEL)));
  }

  private static long hours(long hours) {
    return Duration.ofHours(hours).toMillis();
  }
}
