package dev.tidemark.tools.train;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.PaymentFeatures;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Comparator;
import org.joda.time.Instant;

/**
 * One training row: the features of one account in one window (exactly as the serving transforms
 * compute them) and whether the window holds a fraud-labelled event.
 */
public record LabelledWindow(
    String accountId, Instant windowStart, Instant windowEnd, Features features, boolean fraud) {

  /** Time order (window end, then start, then account): the order the split and training use. */
  public static final Comparator<LabelledWindow> TIME_ORDER =
      Comparator.comparing(LabelledWindow::windowEnd)
          .thenComparing(LabelledWindow::windowStart)
          .thenComparing(LabelledWindow::accountId);

  /** The key of (account, window), as {@code account|startMillis|endMillis}. */
  public String key() {
    return key(accountId, windowStart, windowEnd);
  }

  static String key(String accountId, Instant start, Instant end) {
    return accountId + "|" + start.getMillis() + "|" + end.getMillis();
  }

  String toJsonLine() {
    return Json.object(
        out -> {
          out.writeStringField("accountId", accountId);
          out.writeNumberField("windowStart", windowStart.getMillis());
          out.writeNumberField("windowEnd", windowEnd.getMillis());
          out.writeNumberField("txnCount", features.getLong(PaymentFeatures.TXN_COUNT));
          out.writeNumberField("amountSumCents", features.getLong(PaymentFeatures.AMOUNT_SUM));
          out.writeNumberField("amountMaxCents", features.getLong(PaymentFeatures.AMOUNT_MAX));
          out.writeNumberField(
              "distinctMerchants", features.getLong(PaymentFeatures.DISTINCT_MERCHANTS));
          out.writeNumberField(
              "distinctCountries", features.getLong(PaymentFeatures.DISTINCT_COUNTRIES));
          out.writeNumberField("latestEventTime", features.latestEventTime().getMillis());
          out.writeNumberField("latestIngestionTime", features.latestIngestionTime().getMillis());
          out.writeBooleanField("fraud", fraud);
        });
  }

  static LabelledWindow fromJsonLine(String line) {
    try {
      JsonNode n = Json.MAPPER.readTree(line);
      return new LabelledWindow(
          n.get("accountId").asText(),
          new Instant(n.get("windowStart").asLong()),
          new Instant(n.get("windowEnd").asLong()),
          PaymentFeatures.of(
              n.get("txnCount").asLong(),
              n.get("amountSumCents").asLong(),
              n.get("amountMaxCents").asLong(),
              n.get("distinctMerchants").asLong(),
              n.get("distinctCountries").asLong(),
              new Instant(n.get("latestEventTime").asLong()),
              new Instant(n.get("latestIngestionTime").asLong())),
          n.get("fraud").asBoolean());
    } catch (IOException e) {
      throw new UncheckedIOException("bad training row " + line, e);
    }
  }
}
