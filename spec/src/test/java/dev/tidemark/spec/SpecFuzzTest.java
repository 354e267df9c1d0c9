package dev.tidemark.spec;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Seeded random specs, mutations of the bundled ones, either load (and then build their parser and
 * feature combine) or are refused with a {@link SpecException} listing problems; never any other
 * exception. A failure prints the seed, the round and the spec.
 */
@RunWith(JUnit4.class)
public class SpecFuzzTest {
  private static final long SEED = 20261205L;
  private static final int ROUNDS = 1_000;
  private static final ObjectMapper YAML = new YAMLMapper();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private static final String[] WORDS = {
    "",
    "amount",
    "amout",
    "country",
    "success",
    "userId",
    "time",
    "count",
    "sum",
    "distinct",
    "last",
    "custom",
    "mean",
    "PT5M",
    "PT7S",
    "-PT1H",
    "PT0S",
    "P1D",
    "none",
    "string",
    "decimal",
    "integer",
    "boolean",
    "enum",
    "timestamp",
    "files",
    "kafka",
    "bigquery",
    "accumulating",
    "discarding",
    "invalid_json",
    "x_y",
    "Ünïcödé",
    "\u0000",
    "a b",
    "1e400"
  };

  @Test
  public void randomSpecsLoadOrAreRefusedWithProblems() throws Exception {
    Random random = new Random(SEED);
    List<String> bundled = List.of(BundledSpecs.text("payments"), BundledSpecs.text("logins"));
    List<JsonNode> trees = new ArrayList<>();
    for (String text : bundled) {
      trees.add(YAML.readTree(text));
    }
    int loaded = 0;
    int refused = 0;
    for (int round = 0; round < ROUNDS; round++) {
      int which = random.nextInt(bundled.size());
      String yaml;
      if (random.nextInt(5) == 0) {
        yaml = mutateText(bundled.get(which), random);
      } else {
        JsonNode tree = trees.get(which).deepCopy();
        int mutations = 1 + random.nextInt(3);
        for (int m = 0; m < mutations; m++) {
          tree = mutate(tree, random, 0);
        }
        yaml = YAML.writeValueAsString(tree);
      }
      try {
        PipelineSpec spec = SpecLoader.parse(yaml, "fuzz-" + round + ".yaml");
        FieldParser.of(spec);
        SpecFeaturesFn fn = SpecFeaturesFn.of(spec);
        if (spec.features().stream()
            .noneMatch(f -> f.aggregation() == PipelineSpec.Aggregation.CUSTOM)) {
          fn.extractOutput(fn.createAccumulator());
        }
        loaded++;
      } catch (SpecException e) {
        assertThat(e.problems(), is(not(empty())));
        refused++;
      } catch (RuntimeException | Error e) {
        throw new AssertionError(
            "seed " + SEED + ", round " + round + ": " + e + " for the spec\n" + yaml, e);
      }
    }
    assertThat("some mutants load", loaded, greaterThan(ROUNDS / 20));
    assertThat("most mutants are refused", refused, greaterThan(ROUNDS / 3));
  }

  private static String mutateText(String text, Random random) {
    int at = random.nextInt(text.length());
    switch (random.nextInt(4)) {
      case 0:
        return text.substring(0, at);
      case 1:
        return text.substring(0, at)
            + text.substring(Math.min(text.length(), at + 1 + random.nextInt(8)));
      case 2:
        return text.substring(0, at) + "\"[{&*:".charAt(random.nextInt(6)) + text.substring(at);
      default:
        return text.substring(0, at) + "\n" + text.substring(at);
    }
  }

  /** One random change somewhere in the tree: a value replaced, a key renamed or removed. */
  private static JsonNode mutate(JsonNode node, Random random, int depth) {
    if (!node.isContainerNode() || node.isEmpty() || random.nextInt(6) < depth) {
      return randomValue(random);
    }
    if (node.isArray()) {
      ArrayNode array = (ArrayNode) node;
      int i = random.nextInt(array.size());
      switch (random.nextInt(5)) {
        case 0:
          array.remove(i);
          break;
        case 1:
          array.add(array.get(i).deepCopy());
          break;
        default:
          array.set(i, mutate(array.get(i), random, depth + 1));
      }
      return array;
    }
    ObjectNode object = (ObjectNode) node;
    List<String> keys = new ArrayList<>();
    for (Iterator<String> it = object.fieldNames(); it.hasNext(); ) {
      keys.add(it.next());
    }
    String key = keys.get(random.nextInt(keys.size()));
    switch (random.nextInt(6)) {
      case 0:
        object.remove(key);
        break;
      case 1:
        JsonNode value = object.remove(key);
        object.set(typo(key, random), value);
        break;
      default:
        object.set(key, mutate(object.get(key), random, depth + 1));
    }
    return object;
  }

  private static String typo(String word, Random random) {
    if (word.isEmpty() || random.nextBoolean()) {
      return WORDS[random.nextInt(WORDS.length)];
    }
    int at = random.nextInt(word.length());
    return word.substring(0, at) + word.substring(at + 1);
  }

  private static JsonNode randomValue(Random random) {
    switch (random.nextInt(9)) {
      case 0:
        return NODES.nullNode();
      case 1:
        return NODES.booleanNode(random.nextBoolean());
      case 2:
        return NODES.numberNode(random.nextInt(200_001) - 100_000);
      case 3:
        return NODES.numberNode(random.nextDouble() * (random.nextBoolean() ? 1 : 1e300));
      case 4:
        return NODES.arrayNode().add(WORDS[random.nextInt(WORDS.length)]);
      case 5:
        return NODES.objectNode().put(WORDS[random.nextInt(WORDS.length)], "x");
      case 6:
        return NODES.numberNode(Long.MAX_VALUE - random.nextInt(3));
      default:
        return NODES.textNode(WORDS[random.nextInt(WORDS.length)]);
    }
  }
}
