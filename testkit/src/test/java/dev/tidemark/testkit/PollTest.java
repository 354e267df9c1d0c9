package dev.tidemark.testkit;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

@RunWith(JUnit4.class)
public class PollTest {
  @Test
  public void returnsOnceTheConditionHoldsCheckingBeforeEachPoll() throws Exception {
    AtomicInteger polls = new AtomicInteger();
    AtomicInteger checks = new AtomicInteger();
    Poll.until(
        "three polls",
        Duration.ofSeconds(30),
        checks::incrementAndGet,
        () -> polls.incrementAndGet() == 3,
        () -> "");
    assertThat(polls.get(), is(3));
    assertThat(checks.get(), is(3));
  }

  @Test
  public void aTimeoutNamesTheWaitAndTheState() {
    AssertionError e =
        assertThrows(
            AssertionError.class,
            () -> Poll.until("never", Duration.ZERO, () -> {}, () -> false, () -> "state 7"));
    assertThat(e.getMessage(), containsString("waiting for never; state 7"));
  }

  @Test
  public void aFailedCheckEndsTheWait() {
    IllegalStateException e =
        assertThrows(
            IllegalStateException.class,
            () ->
                Poll.until(
                    "a dead job",
                    Duration.ofSeconds(30),
                    () -> {
                      throw new IllegalStateException("the job failed");
                    },
                    () -> false,
                    () -> ""));
    assertThat(e.getMessage(), is("the job failed"));
  }
}
