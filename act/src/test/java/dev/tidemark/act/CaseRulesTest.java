package dev.tidemark.act;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import dev.tidemark.act.CaseRules.CaseStatus;
import dev.tidemark.act.CaseRules.Transition;
import dev.tidemark.act.Edition.Verdict;
import java.util.OptionalLong;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** Every (case state, verdict) pair, and staleness. */
@RunWith(JUnit4.class)
public class CaseRulesTest {
  @Test
  public void theCaseFollowsTheVerdictOfTheLatestEdition() {
    assertThat(CaseRules.transition(null, Verdict.REVIEW), is(Transition.OPEN));
    assertThat(CaseRules.transition(null, Verdict.ALLOW), is(Transition.NONE));
    assertThat(CaseRules.transition(CaseStatus.OPEN, Verdict.REVIEW), is(Transition.NONE));
    assertThat(CaseRules.transition(CaseStatus.OPEN, Verdict.ALLOW), is(Transition.CLOSE));
    assertThat(CaseRules.transition(CaseStatus.CLOSED, Verdict.REVIEW), is(Transition.REOPEN));
    assertThat(CaseRules.transition(CaseStatus.CLOSED, Verdict.ALLOW), is(Transition.NONE));
    assertThat(Transition.OPEN.event(), is("case_opened"));
    assertThat(Transition.CLOSE.event(), is("case_closed"));
    assertThat(Transition.REOPEN.event(), is("case_reopened"));
  }

  @Test
  public void anEditionNotAboveTheLastAppliedVersionIsStale() {
    assertThat(CaseRules.isStale(OptionalLong.empty(), 0), is(false));
    assertThat(CaseRules.isStale(OptionalLong.of(2), 3), is(false));
    assertThat(CaseRules.isStale(OptionalLong.of(2), 2), is(true));
    assertThat(CaseRules.isStale(OptionalLong.of(2), 1), is(true));
  }
}
