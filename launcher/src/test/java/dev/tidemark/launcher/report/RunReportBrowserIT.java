package dev.tidemark.launcher.report;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.fail;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.launcher.Tidemark;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.tools.report.RunReport;
import dev.tidemark.transforms.util.Json;
import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.imageio.ImageIO;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.BeforeClass;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.chromium.ChromiumNetworkConditions;

/**
 * The report of a real run, opened in headless Chromium from the system's packages: a screenshot,
 * every chart drawn (marks of non-zero size in the rendered page, and a chart's own screenshot in
 * colour, not blank), and the identity table as rendered equal to summary.json.
 *
 * <p>The browser runs offline (network emulation off, a proxy and host resolver that reach nothing)
 * and may listen on loopback only; the test checks that, and that chromedriver and every Chromium
 * process it started have ended, by pid. Without Chromium the test fails and says how to install
 * it. Screenshots go to {@code target/report-it/}.
 */
@RunWith(JUnit4.class)
public class RunReportBrowserIT {
  private static final Path WORK = Paths.get("target", "report-it").toAbsolutePath();
  private static final List<String> CHARTS =
      List.of("clocks", "lateness", "panes", "corrections", "scores");
  private static final String INSTALL =
      "install it with: sudo apt-get install -y --no-install-recommends chromium chromium-driver"
          + " (.ci/run does this)";

  private static final java.time.Duration ALLOWED_LATENESS = java.time.Duration.ofMinutes(10);

  private static Path output;

  @BeforeClass
  public static void runThePipeline() throws IOException {
    Path replay = WORK.resolve("small.ndjson");
    output = WORK.resolve("out");
    Files.createDirectories(WORK);
    new EventGenerator(
            GeneratorConfig.builder()
                .seed(7)
                .numAccounts(10)
                .numEvents(120)
                .eventsPerSecond(0.05) // 40 minutes of event time
                .allowedLateness(ALLOWED_LATENESS) // room for too-late events in 40 minutes
                .tooLateFraction(0.05)
                .build())
        .writeTo(replay);
    TidemarkOptions options =
        PipelineOptionsFactory.fromArgs(
                "--runner=DirectRunner",
                "--source=replay",
                "--input=" + replay,
                "--output=" + output,
                "--allowedLateness=" + ALLOWED_LATENESS,
                "--windowPeriod=PT1M") // each event in 5 windows, not 10: a shorter run
            .withValidation()
            .as(TidemarkOptions.class);
    Summary summary = Launch.run(options);
    Tidemark.writeReport(output, options);
    assertThat(summary.identityViolations().toString(), summary.identityHolds(), is(true));
    assertThat(summary.tooLate(), greaterThan(0L));
  }

  @Test
  public void theReportRendersEveryChartAndTheIdentityOfSummaryJson() throws Exception {
    Path report = output.resolve(RunReport.FILE_NAME);
    assertThat("the run wrote " + report, Files.isRegularFile(report), is(true));
    JsonNode summary = Json.MAPPER.readTree(output.resolve("summary.json").toFile());
    Path chromium = executable("Chromium", "chromium", "chromium-browser");
    Path chromedriver = executable("chromedriver (package chromium-driver)", "chromedriver");

    Set<Long> before = descendants();
    ChromeDriverService service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(chromedriver.toFile())
            .usingAnyFreePort()
            .withLogFile(WORK.resolve("chromedriver.log").toFile())
            .build();
    ChromeDriver browser = null;
    List<ProcessHandle> started = new ArrayList<>();
    try {
      service.start();
      browser = new ChromeDriver(service, browserOptions(chromium));
      ChromiumNetworkConditions offline = new ChromiumNetworkConditions();
      offline.setOffline(true);
      browser.setNetworkConditions(offline);
      started.addAll(startedSince(before));
      assertThat("chromedriver and Chromium are running", started.size(), greaterThan(1));
      assertListensOnLoopbackOnly(started);

      browser.get(report.toUri().toString());
      assertThat(
          "resources the page fetched",
          browser.executeScript("return performance.getEntriesByType('resource').length"),
          is(0L));
      long height = (Long) browser.executeScript("return document.documentElement.scrollHeight");
      browser.manage().window().setSize(new Dimension(1000, (int) height + 40));
      Path screenshot = WORK.resolve("report.png");
      Files.write(screenshot, browser.getScreenshotAs(OutputType.BYTES));
      // The README's screenshot is this one: -Dtidemark.screenshotTo=<path> copies it there.
      String copyTo = System.getProperty("tidemark.screenshotTo");
      if (copyTo != null) {
        Files.copy(screenshot, Path.of(copyTo), StandardCopyOption.REPLACE_EXISTING);
      }
      assertThat(
          screenshot + " has colour",
          colouredPixels(Files.readAllBytes(screenshot)),
          greaterThan(1000));

      List<String> figures = new ArrayList<>();
      for (WebElement figure : browser.findElements(By.cssSelector("figure.chart-figure"))) {
        String id = figure.getDomAttribute("id").substring("chart-".length());
        figures.add(id);
        WebElement svg = figure.findElement(By.cssSelector("svg.chart"));
        assertThat(id + " is drawn, not empty", svg.getDomAttribute("class"), is("chart"));
        long marks =
            (Long)
                browser.executeScript(
                    "return Array.from(arguments[0].querySelectorAll('.mark')).filter(m => {"
                        + " const r = m.getBoundingClientRect();"
                        + " return r.width > 0 && r.height > 0; }).length",
                    svg);
        assertThat(id + ": marks of non-zero size", marks, greaterThan(0L));
        byte[] png = svg.getScreenshotAs(OutputType.BYTES);
        Files.write(WORK.resolve("chart-" + id + ".png"), png);
        assertThat(
            id + ": coloured pixels in its screenshot", colouredPixels(png), greaterThan(50));
      }
      assertThat(figures, contains(CHARTS.toArray()));
      // The lateness marked is the run's, as it recorded it beside summary.json.
      assertThat(
          browser.findElement(By.cssSelector("#chart-lateness line.marker + text")).getText(),
          is("allowed lateness " + ALLOWED_LATENESS));

      List<String> identities = new ArrayList<>();
      for (WebElement row : browser.findElements(By.cssSelector("#identity tbody tr"))) {
        WebElement left = row.findElement(By.cssSelector("td.left"));
        String key = left.getDomAttribute("data-key");
        identities.add(key);
        assertThat(key, number(left), is(summary.get(key).asLong()));
        long sum = 0;
        for (WebElement term : row.findElements(By.cssSelector("span.term"))) {
          String termKey = term.getDomAttribute("data-key");
          assertThat(key + ": " + termKey, number(term), is(summary.get(termKey).asLong()));
          sum += summary.get(termKey).asLong();
        }
        assertThat(key + ": sum", number(row.findElement(By.cssSelector("td.sum"))), is(sum));
        String holds = summary.get(key).asLong() == sum ? "yes" : "no";
        assertThat(
            key + ": holds",
            row.findElement(By.cssSelector("td[class^='holds-']")).getText(),
            is(holds));
        assertThat(key + " holds in this run", holds, is("yes"));
      }
      assertThat(identities, contains("read", "valid", "unique"));
    } finally {
      if (browser != null) {
        browser.quit();
      }
      service.stop();
      started.addAll(startedSince(before));
      assertAllEnded(started);
    }
  }

  private static ChromeOptions browserOptions(Path chromium) {
    ChromeOptions options = new ChromeOptions();
    options.setBinary(chromium.toFile());
    options.addArguments(
        "--headless=new",
        "--window-size=1000,1200",
        "--force-device-scale-factor=1",
        "--hide-scrollbars",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--disable-default-apps",
        // Offline: any request would go to a closed loopback port, and no name resolves.
        "--proxy-server=http://127.0.0.1:9",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--remote-debugging-address=127.0.0.1",
        "--user-data-dir=" + WORK.resolve("chromium-profile"));
    if ("root".equals(System.getProperty("user.name"))) {
      options.addArguments("--no-sandbox"); // Chromium refuses to run as root with its sandbox.
    }
    return options;
  }

  /** The first of {@code names} on the PATH, or a failure that says how to install it. */
  private static Path executable(String what, String... names) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      for (String name : names) {
        Path candidate = Paths.get(dir, name);
        if (Files.isExecutable(candidate)) {
          return candidate;
        }
      }
    }
    fail(what + " is not installed (none of " + List.of(names) + " on the PATH): " + INSTALL);
    throw new AssertionError("unreachable");
  }

  private static long number(WebElement cell) {
    return Long.parseLong(cell.getText().replace(",", "").trim());
  }

  /** Pixels that are clearly coloured (not white, grey or black): chart marks, not background. */
  private static int colouredPixels(byte[] png) throws IOException {
    BufferedImage image = ImageIO.read(new ByteArrayInputStream(png));
    int coloured = 0;
    for (int y = 0; y < image.getHeight(); y++) {
      for (int x = 0; x < image.getWidth(); x++) {
        int rgb = image.getRGB(x, y);
        int r = (rgb >> 16) & 0xff;
        int g = (rgb >> 8) & 0xff;
        int b = rgb & 0xff;
        if (Math.max(r, Math.max(g, b)) - Math.min(r, Math.min(g, b)) > 40) {
          coloured++;
        }
      }
    }
    return coloured;
  }

  private static Set<Long> descendants() {
    return ProcessHandle.current()
        .descendants()
        .map(ProcessHandle::pid)
        .collect(Collectors.toSet());
  }

  private static List<ProcessHandle> startedSince(Set<Long> before) {
    return ProcessHandle.current()
        .descendants()
        .filter(p -> !before.contains(p.pid()))
        .collect(Collectors.toList());
  }

  /** Waits for each process to end; one still running is killed, by pid, and fails the test. */
  private static void assertAllEnded(List<ProcessHandle> processes) throws Exception {
    List<String> left = new ArrayList<>();
    Set<Long> seen = new HashSet<>();
    for (ProcessHandle process : processes) {
      if (!seen.add(process.pid())) {
        continue;
      }
      try {
        process.onExit().get(10, TimeUnit.SECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        left.add(process.pid() + " " + process.info().command().orElse("?"));
        process.destroyForcibly();
        process.onExit().get(10, TimeUnit.SECONDS);
      }
    }
    assertThat("processes still running after quit() (killed now)", left, is(empty()));
  }

  /** Every listening socket of {@code processes} is bound to a loopback address. */
  private static void assertListensOnLoopbackOnly(List<ProcessHandle> processes)
      throws IOException {
    Set<String> inodes = new HashSet<>();
    for (ProcessHandle process : processes) {
      Path fds = Paths.get("/proc", Long.toString(process.pid()), "fd");
      try (Stream<Path> links = Files.list(fds)) {
        for (Path link : (Iterable<Path>) links::iterator) {
          Optional<String> target = readLink(link);
          if (target.isPresent() && target.get().startsWith("socket:[")) {
            inodes.add(target.get().substring(8, target.get().length() - 1));
          }
        }
      } catch (IOException e) {
        // The process ended meanwhile; assertAllEnded accounts for it.
      }
    }
    List<String> exposed = new ArrayList<>();
    int listening = 0;
    for (String table : List.of("tcp", "tcp6", "udp", "udp6")) {
      Path file = Paths.get("/proc/net", table);
      if (!Files.exists(file)) {
        continue;
      }
      List<String> lines = Files.readAllLines(file, StandardCharsets.US_ASCII);
      for (String line : lines.subList(1, lines.size())) {
        String[] f = line.trim().split("\\s+");
        boolean listens = table.startsWith("udp") || "0A".equals(f[3]);
        if (listens && inodes.contains(f[9])) {
          listening++;
          String address = f[1].substring(0, f[1].indexOf(':'));
          boolean loopback =
              address.length() == 8
                  ? address.endsWith("7F")
                  : address.equals("00000000000000000000000001000000")
                      || address.matches("0000000000000000FFFF0000..00007F");
          if (!loopback) {
            exposed.add(table + " " + f[1]);
          }
        }
      }
    }
    assertThat("the browser and its driver listen", listening, greaterThan(0));
    assertThat("sockets listening beyond loopback", exposed, is(empty()));
  }

  private static Optional<String> readLink(Path link) {
    try {
      return Optional.of(Files.readSymbolicLink(link).toString());
    } catch (IOException e) {
      return Optional.empty();
    }
  }
}
