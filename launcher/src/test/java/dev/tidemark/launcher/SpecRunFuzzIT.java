package dev.tidemark.launcher;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.tidemark.pipelines.launch.ExitCodes;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Seeded random mutations of the bundled payments spec, each run with {@code tidemark run} on a
 * small generated replay: a spec either runs (exit 0, the accounting identity holding) or is
 * refused at start with exit 2 naming the spec; never exit 1 or 3. Half the mutations keep the
 * payment fields and change field rules, add fields, or change windows, identity and lateness: they
 * must run. The other half break a rule: they must be refused. A failure names the seed, the round
 * and the spec.
 */
@RunWith(JUnit4.class)
public class SpecRunFuzzIT {
  private static final long SEED = 20261205L;
  private static final int ROUNDS = 12;
  private static final YAMLMapper YAML = new YAMLMapper();

  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  @Test
  public void randomSpecsRunOrAreRefusedWithExitTwo() throws IOException {
    Path input = folder.getRoot().toPath().resolve("events.ndjson");
    assertThat(
        Tidemark.execute("generate", "--output=" + input, "--events=80", "--seed=7"),
        is(ExitCodes.DONE));
    ObjectNode payments = bundledPayments();
    Random random = new Random(SEED);
    int ran = 0;
    int refused = 0;
    for (int round = 0; round < ROUNDS; round++) {
      ObjectNode spec = payments.deepCopy();
      boolean breaks = round % 2 == 1;
      String change = breaks ? breakARule(spec, random) : changeWhatRuns(spec, random);
      Path file = folder.getRoot().toPath().resolve("spec-" + round + ".yaml");
      YAML.writeValue(file.toFile(), spec);
      Path out = folder.getRoot().toPath().resolve("out-" + round);
      CliRun run = CliRun.of("run", "--spec=" + file, "--input=" + input, "--output=" + out);
      String context =
          "seed " + SEED + ", round " + round + " (" + change + "):\n" + Files.readString(file);
      assertThat(
          context + "\n" + run.err, run.exit, is(breaks ? ExitCodes.USAGE_ERROR : ExitCodes.DONE));
      if (breaks) {
        assertThat(context + "\n" + run.err, run.err.contains(file.toString()), is(true));
        refused++;
      } else {
        JsonNode summary = Json.MAPPER.readTree(out.resolve("summary.json").toFile());
        assertThat(context, summary.get("identityHolds").asBoolean(), is(true));
        ran++;
      }
    }
    assertThat("specs that ran", ran, is(ROUNDS / 2));
    assertThat("specs refused", refused, is(ROUNDS / 2));
  }

  private static ObjectNode bundledPayments() throws IOException {
    return (ObjectNode) YAML.readTree(SpecLoader.bundledText("payments"));
  }

  private static ObjectNode fields(ObjectNode spec) {
    return (ObjectNode) spec.get("events").get("fields");
  }

  /** A change that keeps the payment fields and the features: the spec runs. */
  private static String changeWhatRuns(ObjectNode spec, Random random) {
    StringBuilder changes = new StringBuilder();
    int count = 1 + random.nextInt(3);
    for (int i = 0; i < count; i++) {
      switch (random.nextInt(7)) {
        case 0 -> {
          int max = 6 + random.nextInt(200);
          ((ObjectNode) fields(spec).get("accountId")).put("maxLength", max);
          changes.append("accountId maxLength ").append(max).append("; ");
        }
        case 1 -> {
          int min = random.nextInt(60);
          ((ObjectNode) fields(spec).get("amount")).put("min", min);
          changes.append("amount min ").append(min).append("; ");
        }
        case 2 -> {
          boolean optional = random.nextBoolean();
          fields(spec)
              .putObject("channel")
              .put("type", "enum")
              .put("optional", optional)
              .put("reason", "invalid_channel")
              .putArray("values")
              .add("web")
              .add("pos");
          changes.append("channel enum, optional ").append(optional).append("; ");
        }
        case 3 -> {
          fields(spec).putObject("note").put("type", "string").put("optional", true);
          changes.append("optional note; ");
        }
        case 4 -> {
          String[][] windows = {{"PT1M", "PT30S"}, {"PT5M", "PT1M"}, {"PT10M", "PT10M"}};
          String[] w = windows[random.nextInt(windows.length)];
          ((ObjectNode) spec.get("windows")).put("size", w[0]).put("period", w[1]);
          changes.append("windows ").append(w[0]).append('/').append(w[1]).append("; ");
        }
        case 5 -> {
          String[] lateness = {"PT0S", "PT10M", "PT2H"};
          String l = lateness[random.nextInt(lateness.length)];
          ((ObjectNode) spec.get("windows")).put("allowedLateness", l);
          changes.append("allowedLateness ").append(l).append("; ");
        }
        default -> {
          String[] horizons = {"PT10M", "PT1H", "P2D"};
          String h = horizons[random.nextInt(horizons.length)];
          ((ObjectNode) spec.get("identity")).put("horizon", h);
          changes.append("horizon ").append(h).append("; ");
        }
      }
    }
    return changes.toString();
  }

  /** A change the loader or the start checks refuse. */
  private static String breakARule(ObjectNode spec, Random random) {
    switch (random.nextInt(6)) {
      case 0 -> {
        ((ObjectNode) spec.get("features").get(1)).put("of", "amout");
        return "feature over a missing field";
      }
      case 1 -> {
        fields(spec).remove("amount");
        return "no amount";
      }
      case 2 -> {
        ((ObjectNode) fields(spec).get("amount")).put("scale", 3);
        return "amount scale 3";
      }
      case 3 -> {
        ((ObjectNode) spec.get("windows")).put("period", "PT7S");
        return "period not dividing the size";
      }
      case 4 -> {
        ((ObjectNode) spec.get("events")).put("kye", "accountId");
        return "unknown key";
      }
      default -> {
        ((ObjectNode) spec.get("windows")).put("allowedLateness", "-PT1H");
        return "negative lateness";
      }
    }
  }
}
