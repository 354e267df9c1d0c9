package dev.tidemark.drill;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThanOrEqualTo;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.Test;

/** The drill's input rate and its fault plan. */
public class DrillInputTest {
  @Test
  public void theDefaultRateKeepsAFailoversBacklogInsideTheTooLateMargin() {
    assertThat(DrillCommand.defaultRate(DrillCommand.inputConfig(1, 100_000)), is(240.0));
    assertThat(DrillCommand.defaultRate(DrillCommand.inputConfig(1, 20_000)), is(60.0));
    assertThat(DrillCommand.defaultRate(DrillCommand.inputConfig(1, 10_000)), is(30.0));
    assertThat(DrillCommand.defaultRate(DrillCommand.inputConfig(1, 100)), is(1.0));
  }

  @Test
  public void theSameSeedGivesTheSamePlanInsideTheFeed() {
    Duration feed = Duration.ofSeconds(100);
    FaultPlan plan = FaultPlan.draw(7, feed, 3, 1);
    assertThat(plan, is(FaultPlan.draw(7, feed, 3, 1)));
    assertThat(plan.count(FaultPlan.Kind.KILL_TASK_MANAGER), is(3L));
    assertThat(plan.count(FaultPlan.Kind.RESTART_BROKER), is(1L));
    List<Long> at = new ArrayList<>();
    plan.faults().forEach(fault -> at.add(fault.at().toMillis()));
    assertThat(at, everyItem(greaterThanOrEqualTo(10_000L)));
    assertThat(at, everyItem(lessThanOrEqualTo(90_000L)));
    List<Long> sorted = new ArrayList<>(at);
    sorted.sort(null);
    assertThat(at, is(sorted));
    assertThat(FaultPlan.draw(8, feed, 3, 1).equals(plan), is(false));
  }
}
