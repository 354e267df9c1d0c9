package dev.tidemark.bench.suite;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

@RunWith(JUnit4.class)
public class ChartsTest {
  @Rule public final TemporaryFolder temp = new TemporaryFolder();

  private static BenchResults accountsCurve() {
    BenchResults results = new BenchResults(BenchProfile.FULL);
    double[] accounts = {1_000, 10_000, 100_000, 1_000_000};
    for (int i = 0; i < accounts.length; i++) {
      results.point("throughput-vs-accounts", "tidemark", accounts[i], 5_000 - 500 * i);
      results.point("throughput-vs-accounts", "native flink", accounts[i], 6_000 - 700 * i);
    }
    return results;
  }

  @Test
  public void writesOnePngPerChartName() throws Exception {
    BenchResults results = accountsCurve();
    results.point("my-new-chart", "only line", 1, 2);
    results.point("my-new-chart", "only line", 2, 3);

    List<Path> files = Charts.write(results, temp.getRoot().toPath().resolve("out"));

    assertThat(
        files.stream().map(f -> f.getFileName().toString()).toArray(),
        is(new Object[] {"throughput-vs-accounts.png", "my-new-chart.png"}));
    for (Path file : files) {
      byte[] bytes = Files.readAllBytes(file);
      assertThat(bytes.length, greaterThan(5_000));
      assertThat(bytes[1] == 'P' && bytes[2] == 'N' && bytes[3] == 'G', is(true));
      BufferedImage image = ImageIO.read(file.toFile());
      assertThat(image.getWidth(), is(Charts.WIDTH));
      assertThat(image.getHeight(), is(Charts.HEIGHT));
    }
  }

  @Test
  public void logAxisWhenXSpansMoreThanTwoDecades() {
    BenchResults results = accountsCurve();

    JFreeChart chart = Charts.chart("throughput-vs-accounts", results.series(), BenchProfile.FULL);

    assertThat(Charts.useLogAxis(results.series()), is(true));
    assertThat(chart.getXYPlot().getDomainAxis(), instanceOf(LogAxis.class));
    assertThat(chart.getTitle().getText(), containsString("Throughput vs accounts"));
    assertThat(chart.getXYPlot().getRangeAxis().getLabel(), is("events/s"));
  }

  @Test
  public void linearAxisForTwoDecadesOrLessOrNonPositiveX() {
    BenchResults narrow = new BenchResults(BenchProfile.SMALL);
    narrow.point("latency-cdf", "idempotent @50%", 10, 0.01);
    narrow.point("latency-cdf", "idempotent @50%", 1_000, 1.0);
    BenchResults withZero = new BenchResults(BenchProfile.SMALL);
    withZero.point("heap-over-time", "tidemark", 0, 100);
    withZero.point("heap-over-time", "tidemark", 100_000, 200);

    assertThat(Charts.useLogAxis(narrow.series()), is(false));
    assertThat(Charts.useLogAxis(withZero.series()), is(false));
    assertThat(
        Charts.chart("latency-cdf", narrow.series(), BenchProfile.SMALL)
            .getXYPlot()
            .getDomainAxis(),
        not(instanceOf(LogAxis.class)));
  }

  @Test
  public void unknownChartsGetAGenericTitleAndAxes() {
    Charts.Labels labels = Charts.labels("queue-depth-over-time");

    assertThat(labels.title, is("Queue depth over time"));
    assertThat(List.of(labels.x, labels.y), contains("x", "y"));
    assertThat(Charts.fileName("a b/c"), is("a_b_c.png"));
  }
}
