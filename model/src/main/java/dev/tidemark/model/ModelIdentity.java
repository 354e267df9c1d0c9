package dev.tidemark.model;

import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * A model as a watch chooses it: its URI and the SHA-256 of its content. Two files under one URI
 * with different bytes (a model overwritten in place) are two models: the watch's listing sees the
 * new content and every scoring worker moves to it, and a worker never loads, under an identity,
 * bytes other than those the listing checked.
 *
 * <p>Written as {@code <uri>#sha256=<hex>} in the watch's side input ({@link #format}); a plain URI
 * (no content) is an identity too, for model updates given by hand ({@link
 * ScoreFeatures#withModelUpdates}).
 *
 * @param sha256 lower-case hex; null: whatever content the URI holds when it is loaded
 */
record ModelIdentity(String uri, @Nullable String sha256) {
  static final String CONTENT = "#sha256=";

  /** The identity written by {@link #format}, or a plain URI. */
  static ModelIdentity parse(String text) {
    int at = text.lastIndexOf(CONTENT);
    if (at < 0) {
      return new ModelIdentity(text, null);
    }
    return new ModelIdentity(text.substring(0, at), text.substring(at + CONTENT.length()));
  }

  String format() {
    return sha256 == null ? uri : uri + CONTENT + sha256;
  }

  @Override
  public String toString() {
    return format();
  }
}
