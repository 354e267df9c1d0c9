package dev.tidemark.transforms.values;

import dev.tidemark.spec.FieldValues;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.PipelineSpec.FieldType;
import dev.tidemark.spec.SpecLoader;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;

/**
 * Where a payments spec's events keep the payment fields: the key {@code accountId} (a required
 * string), {@code amount} (a required decimal with scale 2, so its unscaled value is in minor
 * units), {@code currency} (a required enum of one value), {@code merchantId} and {@code country}
 * (optional strings or countries). The spec may declare more fields, in any order, and rules of its
 * own for these. Code written for payments (the benchmarks' hand-written baselines, the drill's
 * recomputation, the payments trainer) reads an {@link Event}'s payment fields by name here.
 */
public final class PaymentFields implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The key and the fields a payments spec must declare, with what each must be. */
  public static final String REQUIRED =
      "key accountId, a required string; amount, a required decimal with scale 2; currency, a"
          + " required enum of one value; merchantId and country, optional strings or countries";

  final int accountId;
  final int amount;
  final int currency;
  final int merchantId;
  final int country;
  private final int fields;

  private static volatile @Nullable PaymentFields bundled;

  private PaymentFields(
      int accountId, int amount, int currency, int merchantId, int country, int fields) {
    this.fields = fields;
    this.accountId = accountId;
    this.amount = amount;
    this.currency = currency;
    this.merchantId = merchantId;
    this.country = country;
  }

  /**
   * The payment fields of {@code events}.
   *
   * @throws IllegalArgumentException listing every field that is missing or of another kind
   */
  public static PaymentFields of(PipelineSpec.Events events) {
    List<String> problems = new ArrayList<>();
    if (!events.key().equals("accountId")) {
      problems.add("the key is '" + events.key() + "', not accountId");
    }
    int accountId = index(events, "accountId", false, problems, FieldType.STRING);
    int amount = index(events, "amount", false, problems, FieldType.DECIMAL);
    if (amount >= 0 && events.fields().get(amount).scale() != 2) {
      problems.add("amount has scale " + events.fields().get(amount).scale() + ", not 2");
      amount = -1;
    }
    int currency = index(events, "currency", false, problems, FieldType.ENUM);
    if (currency >= 0 && events.fields().get(currency).values().size() != 1) {
      problems.add(
          "currency accepts " + events.fields().get(currency).values() + ", not one value");
      currency = -1;
    }
    int merchantId =
        index(events, "merchantId", true, problems, FieldType.STRING, FieldType.COUNTRY);
    int country = index(events, "country", true, problems, FieldType.COUNTRY, FieldType.STRING);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(
          "the events are not payments (" + REQUIRED + "): " + String.join("; ", problems));
    }
    return new PaymentFields(
        accountId, amount, currency, merchantId, country, events.fields().size());
  }

  private static int index(
      PipelineSpec.Events events,
      String name,
      boolean optional,
      List<String> problems,
      FieldType... types) {
    List<PipelineSpec.Field> fields = events.fields();
    for (int i = 0; i < fields.size(); i++) {
      PipelineSpec.Field field = fields.get(i);
      if (!field.name().equals(name)) {
        continue;
      }
      if (!List.of(types).contains(field.type())) {
        problems.add(name + " is a " + field.type().specName());
        return -1;
      }
      if (!optional && field.optional()) {
        problems.add(name + " is optional");
        return -1;
      }
      return i;
    }
    problems.add("no field " + name);
    return -1;
  }

  /** The payment fields of the bundled payments spec. */
  public static PaymentFields bundled() {
    PaymentFields fields = bundled;
    if (fields == null) {
      fields = of(SpecLoader.loadBundled(SpecLoader.DEFAULT_BUNDLED).events());
      bundled = fields;
    }
    return fields;
  }

  /**
   * A payment event with these fields, laid out as the spec's fields (the spec's other fields
   * absent); the other arguments are the event's envelope, as in {@link Event}'s constructor. For
   * code that makes payments itself: tests, benchmarks and the reading of an old release's events.
   */
  public Event event(
      String source,
      String id,
      String type,
      Instant eventTime,
      Instant ingestionTime,
      String accountIdValue,
      long amountCents,
      String currencyValue,
      @Nullable String merchantIdValue,
      @Nullable String countryValue,
      byte[] fingerprint) {
    return new Event(
        source,
        id,
        type,
        values(
            accountIdValue,
            amountCents,
            currencyValue,
            merchantIdValue,
            countryValue,
            eventTime.getMillis(),
            ingestionTime.getMillis()),
        accountId,
        fingerprint);
  }

  /** The account of a payment event: its key. */
  public String accountId(Event event) {
    return event.key();
  }

  /** The amount of a payment event in minor units (pence). */
  public long amountCents(Event event) {
    return event.fields().getLong(amount);
  }

  /** The currency of a payment event. */
  public @Nullable String currency(Event event) {
    return event.fields().getString(currency);
  }

  /** The merchant of a payment event, or null. */
  public @Nullable String merchantId(Event event) {
    return event.fields().isPresent(merchantId) ? event.fields().getString(merchantId) : null;
  }

  /** The country of a payment event, or null. */
  public @Nullable String country(Event event) {
    return event.fields().isPresent(country) ? event.fields().getString(country) : null;
  }

  /** The payment fields given, where the spec's fields lay them out; a null field is absent. */
  FieldValues values(
      @Nullable String accountIdValue,
      long amountCents,
      @Nullable String currencyValue,
      @Nullable String merchantIdValue,
      @Nullable String countryValue,
      long eventTimeMillis,
      long ingestionTimeMillis) {
    long[] longs = new long[fields];
    String[] strings = new String[fields];
    long present = 1L << amount;
    longs[amount] = amountCents;
    String[] values = {accountIdValue, currencyValue, merchantIdValue, countryValue};
    int[] at = {accountId, currency, merchantId, country};
    for (int i = 0; i < at.length; i++) {
      if (values[i] != null) {
        strings[at[i]] = values[i];
        present |= 1L << at[i];
      }
    }
    return FieldValues.of(longs, strings, present, eventTimeMillis, ingestionTimeMillis);
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof PaymentFields)) {
      return false;
    }
    PaymentFields that = (PaymentFields) o;
    return accountId == that.accountId
        && amount == that.amount
        && currency == that.currency
        && merchantId == that.merchantId
        && country == that.country
        && fields == that.fields;
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(accountId, amount, currency, merchantId, country, fields);
  }

  /** The one currency the spec's {@code currency} field accepts. */
  public static String currencyOf(PipelineSpec.Events events) {
    return events.fields().get(of(events).currency).values().get(0);
  }

  /**
   * {@code events} with {@code currency} as the one value its {@code currency} field accepts.
   *
   * @throws IllegalArgumentException when the events are not payments
   */
  public static PipelineSpec.Events withCurrency(PipelineSpec.Events events, String currency) {
    int index = of(events).currency;
    List<PipelineSpec.Field> fields = new ArrayList<>(events.fields());
    PipelineSpec.Field f = fields.get(index);
    fields.set(
        index,
        new PipelineSpec.Field(
            f.name(),
            f.type(),
            f.optional(),
            f.reason(),
            f.minLength(),
            f.maxLength(),
            f.plainText(),
            f.scale(),
            f.integerDigits(),
            f.min(),
            f.max(),
            List.of(currency)));
    return new PipelineSpec.Events(events.types(), events.maxEventBytes(), events.key(), fields);
  }
}
