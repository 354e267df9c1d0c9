package dev.tidemark.launcher;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * How the modules divide the code: the one place Tidemark reaches into Beam's packages is the test
 * kit's embedded-Flink shims, and no Java package has sources in two modules (a module's tests live
 * in its own packages).
 */
@RunWith(JUnit4.class)
public class LayoutTest {
  @Test
  public void onlyTheTestKitHasSourcesInBeamsPackages() throws IOException {
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
              .filter(p -> !home.relativize(p).startsWith("testkit"))
              .collect(Collectors.toList());
    }
    assertThat(outside, is(empty()));
  }

  @Test
  public void noPackageIsSplitAcrossModules() throws IOException {
    Path home = Paths.get(System.getProperty("tidemark.home", "..")).toAbsolutePath().normalize();
    Map<String, Set<String>> modulesByPackage = new TreeMap<>();
    try (Stream<Path> files = Files.walk(home, 14)) {
      for (Path file :
          files
              .filter(p -> p.toString().endsWith(".java"))
              .filter(
                  p ->
                      p.toString().contains("/src/main/java/")
                          || p.toString().contains("/src/test/java/"))
              .filter(p -> !p.toString().contains("/target/"))
              .collect(Collectors.toList())) {
        String relative = home.relativize(file).toString();
        String module = relative.substring(0, relative.indexOf("/src/"));
        String source = relative.substring(relative.indexOf("/java/") + "/java/".length());
        String pkg = source.contains("/") ? source.substring(0, source.lastIndexOf('/')) : "";
        modulesByPackage.computeIfAbsent(pkg.replace('/', '.'), k -> new TreeSet<>()).add(module);
      }
    }
    assertThat(modulesByPackage.size() > 20, is(true));
    Map<String, Set<String>> split = new TreeMap<>();
    modulesByPackage.forEach(
        (pkg, modules) -> {
          if (modules.size() > 1) {
            split.put(pkg, modules);
          }
        });
    assertThat(split, is(Map.of()));
  }
}
