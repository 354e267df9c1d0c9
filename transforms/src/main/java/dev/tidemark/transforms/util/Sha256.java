package dev.tidemark.transforms.util;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * Tidemark's stable ids and keys: the first 128 bits of the SHA-256 of length-prefixed parts. The
 * length prefixes put the boundaries between the parts into what is hashed, so ("ab", "c") and
 * ("a", "bc") differ. 128 bits of SHA-256: finding a second input with the digest of a given one
 * takes about 2^128 work, any two colliding inputs about 2^64.
 */
public final class Sha256 {
  /** Bytes of a truncated digest. */
  public static final int PREFIX_BYTES = 16;

  private Sha256() {}

  /** A new SHA-256 digest (not thread-safe: one per DoFn instance or per call). */
  public static MessageDigest newDigest() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by every Java runtime", e);
    }
  }

  private static final ThreadLocal<MessageDigest> THREAD =
      ThreadLocal.withInitial(Sha256::newDigest);

  /**
   * This thread's digest, reset: for code that hashes one value at a time and calls nothing that
   * uses it in between (looking a digest up costs more than hashing a short id).
   */
  public static MessageDigest threadDigest() {
    MessageDigest digest = THREAD.get();
    digest.reset();
    return digest;
  }

  /**
   * The first {@value #PREFIX_BYTES} bytes of the SHA-256 of the parts, each as UTF-8 preceded by
   * its length as 4 big-endian bytes. Resets {@code sha256} first.
   */
  public static byte[] prefix128(MessageDigest sha256, String... parts) {
    sha256.reset();
    for (String part : parts) {
      updateLengthPrefixed(sha256, part);
    }
    return Arrays.copyOf(sha256.digest(), PREFIX_BYTES);
  }

  /** Feeds {@code part} to {@code digest} as UTF-8 preceded by its length as 4 big-endian bytes. */
  public static void updateLengthPrefixed(MessageDigest digest, String part) {
    byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
    int n = bytes.length;
    digest.update(new byte[] {(byte) (n >>> 24), (byte) (n >>> 16), (byte) (n >>> 8), (byte) n});
    digest.update(bytes);
  }
}
