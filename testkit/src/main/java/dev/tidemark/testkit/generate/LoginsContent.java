package dev.tidemark.testkit.generate;

import static dev.tidemark.testkit.generate.EventGenerator.HOME_COUNTRIES;
import static dev.tidemark.testkit.generate.EventGenerator.HOME_COUNTRY_CUMULATIVE;
import static dev.tidemark.testkit.generate.EventGenerator.INVALID_UTF8_MARKER;
import static dev.tidemark.testkit.generate.EventGenerator.RFC3339_MILLIS;
import static dev.tidemark.testkit.generate.EventGenerator.exponential;
import static dev.tidemark.testkit.generate.EventGenerator.nextInt;
import static dev.tidemark.testkit.generate.EventGenerator.nextLong;
import static dev.tidemark.testkit.generate.EventGenerator.pick;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.tidemark.testkit.generate.EventGenerator.Envelope;
import dev.tidemark.testkit.generate.EventGenerator.Event;
import dev.tidemark.testkit.generate.EventGenerator.Generation;
import dev.tidemark.testkit.generate.EventGenerator.SkewedSampler;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The logins workload ({@code specs/logins.yaml}): login attempts of type {@value #EVENT_TYPE},
 * e.g. {@code {"specversion":"1.0","id":"login-000123","source":"/tidemark/auth/web","type":
 * "auth.login.v1","time":"2026-01-01T00:03:12.345Z","datacontenttype":"application/json","data":
 * {"userId":"user-00042","ip":"81.2.69.160","success":true,"country":"GB","device":
 * "dev-3f2a91c07b","label":"legit"}}}.
 *
 * <p>Users ({@code numAccounts}, picked with the same skew as payment accounts) have a home
 * country, one or two usual addresses and one to three devices. A legit session is one attempt, or
 * a few failed attempts (a mistyped password; 1 in 100 sessions has 3 to 6) and then a success, 5
 * to 40 seconds apart, all from one address and device; 15 % of sessions come from another address
 * (a mobile network), some of those from abroad; 7 % from a new device; 2 % without a country (no
 * location for the address). Labelled {@code legit}.
 *
 * <p>Account-takeover episodes ({@code takeoverBurstsPerThousand} per 1000 events) are labelled
 * {@code takeover}: for one user, 3 to 30 attempts within 1 to 8 minutes from a pool of 1 to 30
 * addresses abroad (credential stuffing through proxies), on 1 to 3 devices or none, all failing
 * but the last, which succeeds. An episode with one or two addresses and a few attempts looks much
 * like a user who mistyped a password: the hard cases a model must rank.
 *
 * <p>Duplicates whose payload changed (conflicts) flip {@code success}. Malformed kinds, used in
 * turn: see {@link MalformedKind}; each has one defect that {@code specs/logins.yaml} or the
 * CloudEvents envelope rejects, an id {@code bad-NNNNNN} and no label.
 */
final class LoginsContent implements EventGenerator.Content {
  /** The CloudEvent type of every valid event. */
  static final String EVENT_TYPE = "auth.login.v1";

  /** The CloudEvent sources, in the order their share of events decreases. */
  static final List<String> SOURCES =
      List.of("/tidemark/auth/web", "/tidemark/auth/mobile", "/tidemark/auth/sso");

  /** Countries of the addresses takeovers come from; never a home country. */
  static final String[] ATTACK_COUNTRIES = {"RU", "BR", "NG", "VN", "CN", "IN", "ID", "UA", "RO"};

  /** Countries legit users travel to. */
  static final String[] TRAVEL_COUNTRIES = {"ES", "FR", "IT", "PT", "US", "GR"};

  /** The labels of the two classes. */
  static final String POSITIVE_LABEL = "takeover";

  static final String NEGATIVE_LABEL = "legit";

  private static final double OTHER_ADDRESS = 0.15;
  private static final double ABROAD_GIVEN_OTHER_ADDRESS = 0.3;
  private static final double NEW_DEVICE = 0.07;
  private static final double NO_COUNTRY = 0.02;
  private static final double ATTACKER_NO_DEVICE = 0.25;

  /** The kinds of malformed lines, written in this order, cyclically. */
  enum MalformedKind {
    TRUNCATED_JSON,
    NOT_A_CLOUDEVENT_OBJECT,
    NOT_A_CLOUDEVENT_ARRAY,
    MISSING_ID,
    EMPTY_SOURCE,
    UNPARSEABLE_TIME,
    WRONG_TYPE,
    MISSING_USER_ID,
    SUCCESS_AS_STRING,
    IP_TOO_LONG,
    COUNTRY_XX,
    COUNTRY_GBR,
    OVERSIZED,
    INVALID_UTF8
  }

  /** One login attempt. */
  private static final class Login extends Event {
    final int user;
    final String ip;
    final boolean success;
    final String country;
    final String device;

    Login(
        long timeMs,
        int user,
        String ip,
        boolean success,
        String country,
        String device,
        boolean takeover) {
      super(timeMs, takeover);
      this.user = user;
      this.ip = ip;
      this.success = success;
      this.country = country;
      this.device = device;
    }
  }

  /** The fields of a login line; a null field is left out. */
  private static final class LoginFields extends Envelope {
    String userId;
    String ip;
    Boolean success;
    String successText;
    String device;
    String label;

    LoginFields() {
      super(EVENT_TYPE);
    }

    @Override
    void writeData(JsonGenerator g) throws IOException {
      writeField(g, "userId", userId);
      writeField(g, "ip", ip);
      if (success != null) {
        g.writeBooleanField("success", success);
      } else {
        writeField(g, "success", successText);
      }
      writeField(g, "country", country);
      writeField(g, "device", device);
      writeField(g, "label", label);
      writeField(g, "padding", padding);
    }

    @Override
    void markForInvalidUtf8() {
      device = "dev-" + INVALID_UTF8_MARKER;
    }
  }

  private final GeneratorConfig config;
  private final long startMs;
  private final SplittableRandom userRandom;
  private final SplittableRandom timeRandom;
  private final SplittableRandom takeoverRandom;
  private final SplittableRandom behaviourRandom;
  private final SplittableRandom malformedRandom;
  private final String[] homeCountry;
  private final String[][] homeAddresses;
  private final String[][] devices;
  private final SkewedSampler users;

  LoginsContent(Generation generation) {
    config = generation.config;
    startMs = generation.startMs;
    userRandom = generation.accountRandom;
    timeRandom = generation.timeRandom;
    takeoverRandom = generation.fraudRandom;
    behaviourRandom = generation.amountRandom;
    malformedRandom = generation.malformedRandom;
    int n = config.numAccounts();
    homeCountry = new String[n];
    homeAddresses = new String[n][];
    devices = new String[n][];
    for (int i = 0; i < n; i++) {
      homeCountry[i] = HOME_COUNTRIES[pick(HOME_COUNTRY_CUMULATIVE, userRandom.nextDouble())];
      homeAddresses[i] = new String[1 + nextInt(userRandom, 2)];
      for (int a = 0; a < homeAddresses[i].length; a++) {
        homeAddresses[i][a] = address(userRandom);
      }
      devices[i] = new String[1 + nextInt(userRandom, 3)];
      for (int d = 0; d < devices[i].length; d++) {
        devices[i][d] = device(userRandom);
      }
    }
    users = new SkewedSampler(n, EventGenerator.ACCOUNT_SKEW, userRandom);
  }

  @Override
  public List<String> sources() {
    return SOURCES;
  }

  @Override
  public double[] sourceCumulative() {
    return EventGenerator.SOURCE_CUMULATIVE;
  }

  @Override
  public long addEvents(List<Event> events) {
    int n = config.numEvents();
    int maxTakeover = (n - 1) / 2;
    List<Integer> episodeSizes = new ArrayList<>();
    int takeoverTotal = 0;
    long episodes = Math.round(n * config.takeoverBurstsPerThousand() / 1000.0);
    for (long b = 0; b < episodes; b++) {
      int size = 3 + nextInt(takeoverRandom, 28);
      if (takeoverTotal + size <= maxTakeover) {
        episodeSizes.add(size);
        takeoverTotal += size;
      }
    }

    // Legit sessions on an event-time process of eventsPerSecond attempts.
    double meanGapMs = 1000.0 / config.eventsPerSecond();
    int budget = n - takeoverTotal;
    long t = startMs;
    long lastLegitMs = startMs;
    for (int made = 0; made < budget; ) {
      int user = users.next(userRandom);
      int attempts = Math.min(budget - made, 1 + failedAttempts(behaviourRandom));
      String ip;
      String country = homeCountry[user];
      if (behaviourRandom.nextDouble() < OTHER_ADDRESS) {
        ip = address(behaviourRandom);
        if (behaviourRandom.nextDouble() < ABROAD_GIVEN_OTHER_ADDRESS) {
          country = TRAVEL_COUNTRIES[nextInt(behaviourRandom, TRAVEL_COUNTRIES.length)];
        }
      } else {
        ip = homeAddresses[user][nextInt(behaviourRandom, homeAddresses[user].length)];
      }
      if (behaviourRandom.nextDouble() < NO_COUNTRY) {
        country = null;
      }
      String device =
          behaviourRandom.nextDouble() < NEW_DEVICE
              ? device(behaviourRandom)
              : devices[user][nextInt(behaviourRandom, devices[user].length)];
      long at = t;
      for (int a = 0; a < attempts; a++) {
        if (a > 0) {
          at += 5_000 + nextLong(behaviourRandom, 35_001);
        }
        events.add(new Login(at, user, ip, a == attempts - 1, country, device, false));
        lastLegitMs = Math.max(lastLegitMs, at);
      }
      made += attempts;
      for (int a = 0; a < attempts; a++) {
        t += Math.round(exponential(timeRandom, meanGapMs));
      }
    }

    for (int size : episodeSizes) {
      long span = 60_000 + nextLong(takeoverRandom, 420_001);
      long begin = EventGenerator.burstBegin(takeoverRandom, startMs, span, lastLegitMs);
      int user = nextInt(takeoverRandom, config.numAccounts());
      String[] addresses = new String[1 + nextInt(takeoverRandom, size)];
      String[] countries = new String[addresses.length];
      for (int a = 0; a < addresses.length; a++) {
        addresses[a] = address(takeoverRandom);
        countries[a] = ATTACK_COUNTRIES[nextInt(takeoverRandom, ATTACK_COUNTRIES.length)];
      }
      String[] attackerDevices = new String[1 + nextInt(takeoverRandom, 3)];
      for (int d = 0; d < attackerDevices.length; d++) {
        attackerDevices[d] = device(takeoverRandom);
      }
      long[] offsets = EventGenerator.sortedOffsets(takeoverRandom, size, span);
      for (int e = 0; e < size; e++) {
        int a = nextInt(takeoverRandom, addresses.length);
        String device =
            takeoverRandom.nextDouble() < ATTACKER_NO_DEVICE
                ? null
                : attackerDevices[nextInt(takeoverRandom, attackerDevices.length)];
        events.add(
            new Login(
                begin + offsets[e], user, addresses[a], e == size - 1, countries[a], device, true));
      }
    }
    return takeoverTotal;
  }

  /** Failed attempts before a legit user's success: mostly none, rarely several. */
  private static int failedAttempts(SplittableRandom random) {
    double u = random.nextDouble();
    if (u < 0.90) {
      return 0;
    }
    if (u < 0.97) {
      return 1;
    }
    if (u < 0.99) {
      return 2;
    }
    return 3 + nextInt(random, 4);
  }

  /** An IPv4 address in unicast space outside 10/8 and 127/8. */
  private static String address(SplittableRandom random) {
    int first = 11 + nextInt(random, 212);
    if (first == 127) {
      first = 128;
    }
    return String.format(
        Locale.ROOT,
        "%d.%d.%d.%d",
        first,
        nextInt(random, 256),
        nextInt(random, 256),
        1 + nextInt(random, 254));
  }

  private static String device(SplittableRandom random) {
    return String.format(Locale.ROOT, "dev-%010x", nextLong(random, 1L << 40));
  }

  private static String userId(int user) {
    return String.format(Locale.ROOT, "user-%05d", user + 1);
  }

  @Override
  public LabelStream.Subject subject(Event event) {
    Login login = (Login) event;
    return new LabelStream.Subject(
        SOURCES.get(login.source),
        id(login),
        userId(login.user),
        login.timeMs,
        login.positive ? POSITIVE_LABEL : NEGATIVE_LABEL);
  }

  private static String id(Login login) {
    return String.format(Locale.ROOT, "login-%06d", login.idNumber);
  }

  @Override
  public byte[] json(Event event, boolean conflict) {
    Login login = (Login) event;
    LoginFields f = new LoginFields();
    f.id = id(login);
    f.source = SOURCES.get(login.source);
    f.time = RFC3339_MILLIS.format(Instant.ofEpochMilli(login.timeMs));
    f.userId = userId(login.user);
    f.ip = login.ip;
    f.success = conflict != login.success;
    f.country = login.country;
    f.device = login.device;
    f.label = !config.inlineLabels() ? null : login.positive ? POSITIVE_LABEL : NEGATIVE_LABEL;
    return f.toJson();
  }

  @Override
  public byte[] malformedLine(int k, long arrivalMs) {
    MalformedKind kind = MalformedKind.values()[k % MalformedKind.values().length];
    int user = users.next(malformedRandom);
    LoginFields f = new LoginFields();
    f.id = String.format(Locale.ROOT, "bad-%06d", k + 1);
    f.source = SOURCES.get(k % SOURCES.size());
    long eventMs = Math.max(startMs, arrivalMs - nextLong(malformedRandom, 2001));
    f.time = RFC3339_MILLIS.format(Instant.ofEpochMilli(eventMs));
    f.userId = userId(user);
    f.ip = homeAddresses[user][0];
    f.success = true;
    f.country = homeCountry[user];
    f.device = devices[user][0];
    byte[] shared = f.withSharedDefect(kind.name());
    if (shared != null) {
      return shared;
    }
    switch (kind) {
      case WRONG_TYPE:
        f.type = "auth.logout.v1";
        break;
      case MISSING_USER_ID:
        f.userId = null;
        break;
      case SUCCESS_AS_STRING:
        f.success = null;
        f.successText = "true";
        break;
      case IP_TOO_LONG:
        f.ip = "2001:0db8:0000:0000:0000:ff00:0042:8329/128:extra";
        break;
      default:
        throw new IllegalStateException("unknown malformed kind " + kind);
    }
    return f.toJson();
  }
}
