package dev.tidemark.transforms.values;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The rule for copies of one (decisionId, version), and the content it compares. */
@RunWith(JUnit4.class)
public class DecisionCopiesTest {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private static ObjectNode decision() throws Exception {
    return (ObjectNode)
        MAPPER.readTree(
            "{\"decisionId\":\"d1\",\"version\":2,\"accountId\":\"acct-1\","
                + "\"windowStart\":\"2026-01-01T00:05:00.000Z\","
                + "\"windowEnd\":\"2026-01-01T00:10:00.000Z\","
                + "\"pane\":{\"timing\":\"LATE\",\"index\":2},"
                + "\"clocks\":{\"processingTime\":\"2026-05-01T10:00:00Z\","
                + "\"decisionTime\":\"2026-05-01T10:00:01Z\"},"
                + "\"score\":0.97,\"decision\":\"review\","
                + "\"model\":{\"name\":\"default\",\"version\":\"1\"},"
                + "\"correction\":\"reversed\","
                + "\"supersedes\":{\"version\":1,\"score\":0.12,\"decision\":\"allow\"}}");
  }

  /**
   * The fingerprint is stored (act's inbox keeps it for the key retention): its canonical form must
   * not change, or redeliveries across an upgrade would look like conflicts.
   */
  @Test
  public void theFingerprintIsPinned() throws Exception {
    String pinned = "88262c80f834a16008503c70f58ac84c52ffbd1de007ff88b0e90f5495542b59";
    assertThat(DecisionCopies.fingerprint(decision()), is(pinned));
    assertThat(
        DecisionCopies.fingerprint(
            "d1",
            2,
            "acct-1",
            "2026-01-01T00:05:00.000Z",
            "2026-01-01T00:10:00.000Z",
            "review",
            0.97),
        is(pinned));
  }

  @Test
  public void copiesThatDifferOnlyInWallClocksOrArrivalOrderAreTheSame() throws Exception {
    String first = DecisionCopies.fingerprint(decision());
    ObjectNode later = decision();
    ((ObjectNode) later.get("clocks")).put("decisionTime", "2026-05-02T00:00:00Z");
    later.put("correction", "refined");
    ((ObjectNode) later.get("supersedes")).put("version", 0);
    ((ObjectNode) later.get("model")).put("version", "2");
    assertThat(
        DecisionCopies.compare(first, DecisionCopies.fingerprint(later)),
        is(DecisionCopies.Copy.SAME));
  }

  @Test
  public void aCopyWithOtherContentIsAConflict() throws Exception {
    String first = DecisionCopies.fingerprint(decision());
    for (String field : new String[] {"score", "decision", "accountId", "windowEnd", "version"}) {
      ObjectNode later = decision();
      switch (field) {
        case "score" -> later.put("score", 0.96);
        case "decision" -> later.put("decision", "allow");
        case "version" -> later.put("version", 3);
        default -> later.put(field, later.get(field).asText() + "x");
      }
      assertThat(
          field,
          DecisionCopies.compare(first, DecisionCopies.fingerprint(later)),
          is(DecisionCopies.Copy.CONFLICT));
    }
  }

  @Test
  public void aRecordWithoutTheFieldsIsRefusedNamingTheField() throws Exception {
    ObjectNode broken = decision();
    broken.put("version", "2");
    IllegalArgumentException refused =
        assertThrows(IllegalArgumentException.class, () -> DecisionCopies.fingerprint(broken));
    assertThat(refused.getMessage(), containsString("version"));
    JsonNode noScore = decision().without("score");
    assertThat(
        assertThrows(IllegalArgumentException.class, () -> DecisionCopies.fingerprint(noScore))
            .getMessage(),
        containsString("score"));
  }
}
