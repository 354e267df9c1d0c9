package dev.tidemark.transforms.util;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import org.checkerframework.checker.nullness.qual.Nullable;

/** Strict UTF-8 decoding: malformed bytes are reported, never replaced. */
public final class Utf8 {
  private Utf8() {}

  /** {@code bytes} as text, or null when they are not valid UTF-8. */
  public static @Nullable String decodeOrNull(byte[] bytes) {
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      return null;
    }
  }
}
