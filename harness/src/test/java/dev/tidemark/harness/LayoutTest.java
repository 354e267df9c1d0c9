package dev.tidemark.harness;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The one place Tidemark reaches into Beam's packages is this module's shims: no other module has a
 * source file under {@code org/apache/beam}.
 */
@RunWith(JUnit4.class)
public class LayoutTest {
  @Test
  public void onlyTheHarnessHasSourcesInBeamsPackages() throws IOException {
    Path home = Paths.get(System.getProperty("tidemark.home", "..")).toAbsolutePath().normalize();
    List<String> modules;
    try (Stream<Path> children = Files.list(home)) {
      modules =
          children
              .filter(p -> Files.isRegularFile(p.resolve("pom.xml")))
              .map(p -> p.getFileName().toString())
              .collect(Collectors.toList());
    }
    assertThat("modules under " + home, modules.contains("pipelines"), is(true));
    List<Path> outside;
    try (Stream<Path> files = Files.walk(home, 12)) {
      outside =
          files
              .filter(p -> p.toString().endsWith(".java"))
              .filter(p -> p.toString().contains("/src/"))
              .filter(p -> p.toString().contains("/org/apache/beam/"))
              .filter(p -> !home.relativize(p).startsWith("harness"))
              .collect(Collectors.toList());
    }
    assertThat(outside, is(empty()));
  }
}
