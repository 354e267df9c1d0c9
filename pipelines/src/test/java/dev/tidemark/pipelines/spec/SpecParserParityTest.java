package dev.tidemark.pipelines.spec;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.pipelines.generate.AdversarialCorpus;
import dev.tidemark.spec.FieldParser;
import dev.tidemark.spec.FieldRejection;
import dev.tidemark.spec.FieldValues;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.transforms.ParseCloudEvents;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.PaymentEvent;
import dev.tidemark.transforms.values.RawRecord;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import org.joda.time.Instant;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The spec-driven parser of {@code data}, given {@code specs/payments.yaml}, agrees with {@link
 * ParseCloudEvents} on every record whose envelope the parser accepts: the same dead-letter reason
 * for a bad field, the same values for a valid event. The inputs are the adversarial corpus (every
 * hostile kind) and a generated stream with its malformed lines.
 */
@RunWith(JUnit4.class)
public class SpecParserParityTest {
  private static final long SEED = 20261205L;

  @Test
  public void agreesOnTheAdversarialCorpus() {
    List<byte[]> lines = new ArrayList<>();
    for (AdversarialCorpus.Line line : new AdversarialCorpus(SEED, 65_536).lines(4_000)) {
      lines.add(line.bytes);
    }
    Map<String, Integer> compared =
        compare(lines, Instant.ofEpochMilli(AdversarialCorpus.INGESTED_AT.toEpochMilli()));
    assertThat(compared.toString(), compared.getOrDefault("valid", 0), greaterThan(1_000));
    for (String reason :
        List.of(
            "invalid_account_id",
            "invalid_amount",
            "invalid_currency",
            "invalid_country",
            "invalid_data")) {
      assertThat(reason + " in " + compared, compared.getOrDefault(reason, 0), greaterThan(0));
    }
  }

  /** Field values at and past every edge the parser draws, each in a valid envelope. */
  private static final String[] DATA = {
    "\"accountId\":\"a\",\"amount\":12.34,\"currency\":\"GBP\"",
    "\"accountId\":\"a\",\"amount\":0,\"currency\":\"GBP\",\"merchantId\":null",
    "\"accountId\":\"a\",\"amount\":-0.0,\"currency\":\"GBP\"",
    "\"accountId\":\"a\",\"amount\":1E+2,\"currency\":\"GBP\"",
    "\"accountId\":\"a\",\"amount\":1.230,\"currency\":\"GBP\"",
    "\"accountId\":\"a\",\"amount\":0.001,\"currency\":\"GBP\"",
    "\"accountId\":\"a\",\"amount\":-0.01,\"currency\":\"GBP\"",
    "\"accountId\":\"a\",\"amount\":999999999999999.99,\"currency\":\"GBP\"",
    "\"accountId\":\"a\",\"amount\":1000000000000000,\"currency\":\"GBP\"",
    "\"accountId\":\"a\",\"amount\":1E+99999999,\"currency\":\"GBP\"",
    "\"accountId\":\"a\",\"amount\":1E-99999999,\"currency\":\"GBP\"",
    "\"accountId\":\"a\",\"amount\":\"12.34\",\"currency\":\"GBP\"",
    "\"accountId\":\"a\",\"amount\":true,\"currency\":\"GBP\"",
    "\"accountId\":\"a\",\"currency\":\"GBP\"",
    "\"accountId\":\"\",\"amount\":1,\"currency\":\"GBP\"",
    "\"accountId\":7,\"amount\":1,\"currency\":\"GBP\"",
    "\"accountId\":null,\"amount\":1,\"currency\":\"GBP\"",
    "\"accountId\":\"a\\u0007b\",\"amount\":1,\"currency\":\"GBP\"",
    "\"accountId\":\"a\\ud800\",\"amount\":1,\"currency\":\"GBP\"",
    "\"accountId\":\"\\ud83d\\ude00\",\"amount\":1,\"currency\":\"GBP\"",
    "\"accountId\":\"" + "x".repeat(128) + "\",\"amount\":1,\"currency\":\"GBP\"",
    "\"accountId\":\"" + "x".repeat(129) + "\",\"amount\":1,\"currency\":\"GBP\"",
    "\"accountId\":\"" + "\\ud83d\\ude00".repeat(128) + "\",\"amount\":1,\"currency\":\"GBP\"",
    "\"accountId\":\"a\",\"amount\":1,\"currency\":\"gbp\"",
    "\"accountId\":\"a\",\"amount\":1,\"currency\":[\"GBP\"]",
    "\"accountId\":\"a\",\"amount\":1",
    "\"accountId\":\"a\",\"amount\":1,\"currency\":\"GBP\",\"merchantId\":\"\"",
    "\"accountId\":\"a\",\"amount\":1,\"currency\":\"GBP\",\"merchantId\":5",
    "\"accountId\":\"a\",\"amount\":1,\"currency\":\"GBP\",\"merchantId\":\"m\\u009f\"",
    "\"accountId\":\"a\",\"amount\":1,\"currency\":\"GBP\",\"merchantId\":\"m\\udfff\"",
    "\"accountId\":\"a\",\"amount\":1,\"currency\":\"GBP\",\"country\":\"GB\"",
    "\"accountId\":\"a\",\"amount\":1,\"currency\":\"GBP\",\"country\":\"gb\"",
    "\"accountId\":\"a\",\"amount\":1,\"currency\":\"GBP\",\"country\":\"GBR\"",
    "\"accountId\":\"a\",\"amount\":1,\"currency\":\"GBP\",\"country\":{}",
    "\"accountId\":\"a\",\"amount\":1,\"currency\":\"GBP\",\"country\":null",
    "\"amount\":-1,\"currency\":\"USD\",\"country\":\"XX\"",
    "\"accountId\":\"a\",\"amount\":-1,\"currency\":\"USD\",\"merchantId\":\"\"",
    "\"accountId\":\"a\",\"amount\":1,\"currency\":\"USD\",\"merchantId\":\"\"",
    "\"accountId\":\"a\",\"amount\":1,\"currency\":\"GBP\",\"merchantId\":\"\",\"country\":\"XX\"",
  };

  @Test
  public void agreesOnEveryFieldEdge() {
    List<byte[]> lines = new ArrayList<>();
    for (int i = 0; i < DATA.length; i++) {
      lines.add(
          ("{\"specversion\":\"1.0\",\"id\":\"e"
                  + i
                  + "\",\"source\":\"/s\",\"type\":\"payments.transaction.v1\","
                  + "\"time\":\"2026-01-01T00:00:00Z\",\"data\":{"
                  + DATA[i]
                  + "}}")
              .getBytes(StandardCharsets.UTF_8));
    }
    lines.add(
        ("{\"specversion\":\"1.0\",\"id\":\"x\",\"source\":\"/s\",\"type\":"
                + "\"payments.transaction.v1\",\"time\":\"2026-01-01T00:00:00Z\",\"data\":[1]}")
            .getBytes(StandardCharsets.UTF_8));
    Map<String, Integer> compared = compare(lines, Instant.parse("2030-01-01T00:00:00Z"));
    assertThat(
        compared.toString(),
        compared.values().stream().mapToInt(Integer::intValue).sum(),
        is(DATA.length + 1));
    for (String reason :
        List.of(
            "valid",
            "invalid_account_id",
            "invalid_amount",
            "invalid_currency",
            "invalid_merchant_id",
            "invalid_country",
            "invalid_data")) {
      assertThat(reason + " in " + compared, compared.getOrDefault(reason, 0), greaterThan(0));
    }
  }

  @Test
  public void agreesOnAGeneratedStream() throws IOException {
    GeneratorConfig config =
        GeneratorConfig.builder().seed(SEED).numAccounts(40).numEvents(2_000).build();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    new EventGenerator(config).writeTo(out);
    List<byte[]> lines = new ArrayList<>();
    for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
      lines.add(line.getBytes(StandardCharsets.UTF_8));
    }
    Map<String, Integer> compared = compare(lines, Instant.parse("2030-01-01T00:00:00Z"));
    assertThat(compared.toString(), compared.getOrDefault("valid", 0), greaterThan(1_900));
  }

  /**
   * Runs both parsers over {@code lines}; fails on any disagreement; counts the compared outcomes
   * by reason ({@code valid} for an event).
   */
  static Map<String, Integer> compare(List<byte[]> lines, Instant ingestion) {
    PipelineSpec spec = PaymentsSpecTest.payments();
    FieldParser fields = FieldParser.of(spec);
    ParseCloudEvents.Parser parser = ParseCloudEvents.create().newParser();
    Set<String> fieldReasons = new java.util.HashSet<>();
    spec.events().fields().forEach(f -> fieldReasons.add(f.reason()));
    fieldReasons.add("invalid_data");
    Map<String, Integer> compared = new TreeMap<>();
    List<String> wrong = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      byte[] bytes = lines.get(i);
      List<DeadLetter> deadLetters = new ArrayList<>();
      PaymentEvent event =
          parser.parse(RawRecord.of(bytes, ingestion, "line " + i), deadLetters::add);
      String today = event != null ? "valid" : deadLetters.get(0).reason().code();
      if (!today.equals("valid") && !fieldReasons.contains(today)) {
        continue;
      }
      JsonNode data;
      try {
        data = Json.STRICT_READER.readTree(bytes).get("data");
      } catch (IOException e) {
        wrong.add("line " + i + ": today " + today + " but not JSON: " + e);
        continue;
      }
      String generic;
      FieldValues values = null;
      try {
        values = fields.parse(data, 0, 0);
        generic = "valid";
      } catch (FieldRejection rejection) {
        generic = rejection.reason();
      }
      if (!generic.equals(today)) {
        wrong.add(
            "line "
                + i
                + ": today "
                + today
                + ", spec "
                + generic
                + ": "
                + new String(bytes, StandardCharsets.UTF_8));
      } else if (event != null && !sameValues(event, values, fields)) {
        wrong.add("line " + i + ": values differ: " + event + " vs " + values);
      }
      compared.merge(today, 1, Integer::sum);
    }
    assertThat(
        wrong.size() + " disagreements, first: " + wrong.stream().limit(5).toList(),
        wrong.size(),
        is(0));
    return compared;
  }

  private static boolean sameValues(PaymentEvent event, FieldValues values, FieldParser fields) {
    return event.accountId().equals(fields.key(values))
        && event.amountCents() == values.getLong(fields.indexOf("amount"))
        && event.currency().equals(values.getString(fields.indexOf("currency")))
        && Objects.equals(event.merchantId(), values.getString(fields.indexOf("merchantId")))
        && Objects.equals(event.country(), values.getString(fields.indexOf("country")));
  }
}
