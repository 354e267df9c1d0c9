package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import dev.tidemark.spec.SpecLoader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Variants of the bundled specs for tests, written as files. */
final class TestSpecs {
  private TestSpecs() {}

  /**
   * The bundled payments spec with each {@code from} replaced by its {@code to} (each must occur),
   * written to {@code file}.
   */
  static Path paymentsWith(Path file, String... fromTo) throws IOException {
    String text = SpecLoader.bundledText("payments");
    for (int i = 0; i < fromTo.length; i += 2) {
      assertThat(fromTo[i], text.contains(fromTo[i]), is(true));
      text = text.replace(fromTo[i], fromTo[i + 1]);
    }
    Files.writeString(file, text, StandardCharsets.UTF_8);
    return file;
  }
}
