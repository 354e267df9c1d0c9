package dev.tidemark.transforms.util;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;

import dev.tidemark.transforms.values.Decision;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;
import org.joda.time.Instant;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

@RunWith(JUnit4.class)
public class Sha256Test {
  private final MessageDigest sha256 = Sha256.newDigest();

  @Test
  public void prefix128IsTheSha256OfTheLengthPrefixedUtf8Parts() {
    // Known answers, from Python: hashlib.sha256(b'\x00\x00\x00\x14/tidemark/mobile/app'
    //   + b'\x00\x00\x00\x0atxn-000001').hexdigest()[:32], and of b'\x00\x00\x00\x00'.
    assertEquals(
        "19de3f460c1f7d79f5f27614e6fd9c2a",
        HexFormat.of().formatHex(Sha256.prefix128(sha256, "/tidemark/mobile/app", "txn-000001")));
    assertEquals(
        "df3f619804a92fdb4057192dc43dd748", HexFormat.of().formatHex(Sha256.prefix128(sha256, "")));
  }

  @Test
  public void decisionIdIsTheSha256OfTheLengthPrefixedAccountAndTheWindowBounds() {
    // From Python: hashlib.sha256(b'\x00\x00\x00\x0aacct-00042'
    //   + struct.pack('>qq', 1767225900000, 1767226200000)).hexdigest()[:32]
    assertEquals(
        "74171c60d5521a547c3df2fa7cede323",
        Decision.decisionId(
            "acct-00042",
            Instant.parse("2026-01-01T00:05:00Z"),
            Instant.parse("2026-01-01T00:10:00Z")));
  }

  @Test
  public void theBoundariesBetweenPartsAreHashed() {
    assertFalse(
        Arrays.equals(Sha256.prefix128(sha256, "ab", "c"), Sha256.prefix128(sha256, "a", "bc")));
    assertFalse(
        Arrays.equals(Sha256.prefix128(sha256, "abc"), Sha256.prefix128(sha256, "abc", "")));
  }

  @Test
  public void aReusedDigestGivesTheSameAnswerAsAFreshOne() {
    Sha256.prefix128(sha256, "left over", "state");
    assertArrayEquals(
        Sha256.prefix128(Sha256.newDigest(), "/s", "id-1"), Sha256.prefix128(sha256, "/s", "id-1"));
    assertEquals(Sha256.PREFIX_BYTES, Sha256.prefix128(sha256, "/s", "id-1").length);
  }
}
