// The parts of push delivery that need no server: the keyring, the callback
// URL policy (with a resolver seam instead of DNS), the retry policy, the
// Authorization header and the push-* settings.
import { expect } from "chai";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { authorizationHeader } from "../../src/a2a/push/deliver.js";
import { Keyring, KEYRING_FILE, KeyringError } from "../../src/a2a/push/keyring.js";
import { backoffMs, errorSummary, isTransientStatus, publicUrl } from "../../src/a2a/push/retry.js";
import {
  CallbackUrlError,
  checkCallbackUrl,
  PrivateHostAllowlist,
  resolveCallback,
  type Resolver,
} from "../../src/a2a/push/url-policy.js";
import type { A2AServerConfig } from "../../src/contract/index.js";
import { Command } from "commander";
import { registerA2aCommand } from "../../src/cli/a2a-command.js";
import { ConfigError, resolveSettings } from "../../src/a2a/config/server-settings.js";
import { A2A_SETTINGS } from "../../src/a2a/config/settings-table.js";
import { cliValues } from "../../src/server/settings.js";
import { cleanup, makeTempDir } from "../a2a/helpers.js";

const none = new PrivateHostAllowlist([]);

function refusal(url: string, allow = none): string {
  try {
    checkCallbackUrl(url, allow);
  } catch (error) {
    expect(error).to.be.instanceOf(CallbackUrlError);
    return (error as Error).message;
  }
  return "accepted";
}

describe("a2a-push: the keyring", () => {
  let dir: string;
  beforeEach(() => (dir = makeTempDir("iac-keyring-")));
  afterEach(() => cleanup(dir));

  it("creates push_keys.json (0600) on first use; sealed values open again, also after a reload", () => {
    const keyring = Keyring.load(dir, {});
    const file = path.join(dir, KEYRING_FILE);
    expect(statSync(file).mode & 0o777).to.equal(0o600);
    const sealed = keyring.seal("tok-secret-1");
    expect(sealed).to.not.include("tok-secret-1");
    expect(keyring.open(sealed)).to.equal("tok-secret-1");
    expect(Keyring.load(dir, {}).open(sealed)).to.equal("tok-secret-1");
    // AES-GCM: a changed ciphertext does not open.
    const envelope = JSON.parse(sealed) as { keyId: string; ciphertext: string };
    const bytes = Buffer.from(envelope.ciphertext, "base64");
    bytes[bytes.length - 1] ^= 1;
    expect(() =>
      keyring.open(JSON.stringify({ ...envelope, ciphertext: bytes.toString("base64") })),
    ).to.throw(KeyringError, "A2A push secret ciphertext could not be decrypted");
  });

  it("rotation adds an active key and keeps the old ones: what they sealed stays readable", () => {
    const keyring = Keyring.load(dir, {});
    const first = keyring.activeKeyId;
    const old = keyring.seal("before rotation");
    const second = keyring.rotate();
    expect(second).to.not.equal(first);
    const fresh = keyring.seal("after rotation");
    expect((JSON.parse(fresh) as { keyId: string }).keyId).to.equal(second);
    const reloaded = Keyring.load(dir, {});
    expect(reloaded.activeKeyId).to.equal(second);
    expect(reloaded.open(old)).to.equal("before rotation");
    expect(reloaded.open(fresh)).to.equal("after rotation");
    const json = JSON.parse(readFileSync(path.join(dir, KEYRING_FILE), "utf8")) as { keys: unknown[] };
    expect(json.keys).to.have.length(2);
  });

  it("IAC_CODE_A2A_PUSH_KEYRING is shared by two instances, never written, and not rotatable", () => {
    const key = Buffer.alloc(32, 7).toString("base64");
    const env = {
      IAC_CODE_A2A_PUSH_KEYRING: JSON.stringify({ activeKeyId: "k1", keys: [{ id: "k1", key }] }),
    };
    const a = Keyring.load(dir, env);
    const b = Keyring.load(makeTempDir("iac-keyring-b-"), env);
    expect(b.open(a.seal("shared"))).to.equal("shared");
    expect(() => statSync(path.join(dir, KEYRING_FILE))).to.throw();
    expect(() => a.rotate()).to.throw(
      KeyringError,
      "A2A push secret keyring is environment-managed and cannot be rotated locally",
    );
    expect(() => Keyring.load(dir, {}).open(a.seal("x"))).to.throw(
      KeyringError,
      "A2A push secret encryption key is not available: k1",
    );
  });

  it("refuses a malformed keyring or one without its active key, with the reference's texts", () => {
    const key = Buffer.alloc(32, 1).toString("base64");
    for (const [text, message] of [
      ["not json", "A2A push secret keyring is malformed"],
      [
        JSON.stringify({ activeKeyId: "a", keys: [{ id: "a", key: "c2hvcnQ=" }] }),
        "A2A push secret keyring is malformed",
      ],
      [
        JSON.stringify({ activeKeyId: "b", keys: [{ id: "a", key }] }),
        "A2A push secret keyring does not contain its active key",
      ],
    ]) {
      expect(() => Keyring.load(dir, { IAC_CODE_A2A_PUSH_KEYRING: text })).to.throw(KeyringError, message);
      writeFileSync(path.join(dir, KEYRING_FILE), text);
      expect(() => Keyring.load(dir, {})).to.throw(KeyringError, message);
    }
  });
});

describe("a2a-push: the callback URL policy", () => {
  const PRIVATE = "A2A push callback URL must not target private or local hosts";
  const NOT_HTTP = "A2A push callback URL must be http or https";

  it("refuses non-http schemes, localhost names and literals that are not public, IPv4-mapped IPv6 too", () => {
    for (const url of ["ftp://hooks.example.com/a", "file:///etc/passwd", "javascript:alert(1)", "not a url"])
      expect(refusal(url), url).to.equal(NOT_HTTP);
    for (const url of [
      "http://localhost:9999/a2a",
      "http://LOCALHOST./a2a",
      "https://api.localhost/a2a",
      "http://127.0.0.1:9999/a2a",
      "http://10.1.2.3/",
      "http://172.16.0.1/",
      "http://192.168.1.1/",
      "http://100.64.0.1/",
      "http://169.254.169.254/latest/meta-data",
      "http://224.0.0.1/",
      "http://240.0.0.1/",
      "http://0.0.0.0/",
      "http://2130706433/", // 127.0.0.1 written as one number
      "http://[::1]/",
      "http://[::]/",
      "http://[fe80::1]/",
      "http://[fc00::1]/",
      "http://[ff02::1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://[::ffff:7f00:1]/",
      "http://[0:0:0:0:0:ffff:a00:1]/",
    ])
      expect(refusal(url), url).to.equal(PRIVATE);
    for (const url of [
      "https://hooks.example.com/a2a",
      "http://93.184.215.14/x",
      "http://[2606:4700::1111]/",
    ])
      expect(refusal(url), url).to.equal("accepted");
  });

  it("push-allow-private-hosts admits the listed hostnames, addresses and CIDR ranges, nothing else", () => {
    const allow = new PrivateHostAllowlist(["127.0.0.1", "10.0.0.0/8", "receiver.localhost", "::1"]);
    for (const url of [
      "http://127.0.0.1:8080/hook",
      "http://10.20.30.40/",
      "http://receiver.localhost/",
      "http://[::1]:9/",
      "http://[::ffff:127.0.0.1]/",
    ])
      expect(refusal(url, allow), url).to.equal("accepted");
    for (const url of ["http://127.0.0.2/", "http://localhost/", "http://192.168.0.1/"])
      expect(refusal(url, allow), url).to.equal(PRIVATE);
    expect(refusal("ftp://127.0.0.1/", allow)).to.equal(NOT_HTTP);
    for (const bad of ["10.0.0.0/33", "not a host!", "1.2.3.4/8/9", "::1/129"])
      expect(() => new PrivateHostAllowlist([bad]), bad).to.throw(
        /is not a hostname, an IP address or a CIDR range/,
      );
  });

  it("at delivery every resolved address must be public; the first one is pinned", async () => {
    const dns: Record<string, string[]> = {
      "public.example": ["93.184.215.14", "2606:4700::1111"],
      "mixed.example": ["93.184.215.14", "10.0.0.5"],
      "rebind.example": ["127.0.0.1"],
      "empty.example": [],
    };
    const resolver: Resolver = (host) =>
      Promise.resolve(
        (dns[host] ?? []).map((address) => ({ address, family: address.includes(":") ? 6 : 4 })),
      );
    const resolveUrl = (url: string, allow = none) =>
      resolveCallback(checkCallbackUrl(url, allow), allow, resolver);
    expect(await resolveUrl("https://public.example/hook")).to.equal("93.184.215.14");
    for (const [url, message] of [
      ["https://mixed.example/hook", "A2A push callback URL must not resolve to private or local hosts"],
      ["https://rebind.example/hook", "A2A push callback URL must not resolve to private or local hosts"],
      ["https://empty.example/hook", "A2A push callback URL host did not resolve to any addresses"],
    ]) {
      let error: unknown;
      await resolveUrl(url).catch((e: unknown) => (error = e));
      expect(error, url).to.be.instanceOf(CallbackUrlError);
      expect((error as Error).message).to.equal(message);
    }
    // Allowlisted by name (all its addresses) or by range (that address).
    expect(await resolveUrl("http://rebind.example/", new PrivateHostAllowlist(["rebind.example"]))).to.equal(
      "127.0.0.1",
    );
    expect(await resolveUrl("http://mixed.example/", new PrivateHostAllowlist(["10.0.0.0/24"]))).to.equal(
      "93.184.215.14",
    );
    // Literals are not looked up.
    expect(await resolveUrl("http://[2606:4700::1111]:8443/")).to.equal("2606:4700::1111");
  });
});

describe("a2a-push: retry policy, error summaries and headers", () => {
  it("backs off min(60, 2^(attempt-1)) s with +/- 20 % jitter", () => {
    const middle = () => 0.5;
    expect([1, 2, 3, 5, 7, 20].map((a) => backoffMs(a, middle))).to.deep.equal([
      1000, 2000, 4000, 16000, 60000, 60000,
    ]);
    expect(backoffMs(1, () => 0)).to.equal(800);
    expect(backoffMs(1, () => 1)).to.equal(1200);
  });

  it("treats 408, 409, 425, 429 and 5xx gateway errors as transient, other statuses as permanent", () => {
    expect([408, 409, 425, 429, 500, 502, 503, 504].every(isTransientStatus)).to.equal(true);
    expect([400, 401, 403, 404, 410, 413, 422, 501, 505].some(isTransientStatus)).to.equal(false);
  });

  it("reduces URLs to scheme, host, port and path in summaries", () => {
    expect(publicUrl("https://user:pw@hooks.example.com:8443/a2a/x?token=abc#f")).to.equal(
      "https://hooks.example.com:8443/a2a/x",
    );
    expect(errorSummary("ConnectionError", "failed for http://u:p@h.example/p?k=v")).to.equal(
      "ConnectionError: failed for http://h.example/p",
    );
    expect(errorSummary("E", "x".repeat(5000))).to.have.length(1000);
  });

  it("computes Authorization per scheme: Bearer, Basic from user:pass, others as given", () => {
    expect(authorizationHeader("bearer", "cb-token")).to.equal("Bearer cb-token");
    expect(authorizationHeader("Basic", "alice:pw")).to.equal(
      `Basic ${Buffer.from("alice:pw").toString("base64")}`,
    );
    expect(authorizationHeader("ApiKey", "k-1")).to.equal("ApiKey k-1");
    expect(authorizationHeader("bearer", "")).to.equal(undefined);
    expect(authorizationHeader("", "x")).to.equal(undefined);
  });
});

describe("a2a-push: the push-* settings", () => {
  it("reads each from the flag, the file and IACCODE_A2A_*, in that order", () => {
    const env = {
      IACCODE_A2A_PUSH_NOTIFICATIONS: "true",
      IACCODE_A2A_PUSH_QUEUE: "redis-streams",
      IACCODE_A2A_PUSH_REDIS_URL: "redis://env:6379/0",
      IACCODE_A2A_PUSH_STREAM: "env-stream",
      IACCODE_A2A_PUSH_LEASE_TIMEOUT_MS: "1234",
      IACCODE_A2A_PUSH_ALLOW_PRIVATE_HOSTS: "127.0.0.1, 10.0.0.0/8",
      IACCODE_A2A_PUSH_CONSUMER_NAME: "env-worker",
    };
    const fromEnv = resolveSettings({}, {}, env).push;
    expect(fromEnv).to.deep.include({
      enabled: true,
      queue: "redis-streams",
      redisUrl: "redis://env:6379/0",
      stream: "env-stream",
      retryKey: "iac-code:a2a:push:retry",
      deadStream: "iac-code:a2a:push:dead",
      consumerGroup: "iac-code-push",
      consumerName: "env-worker",
      leaseTimeoutMs: 1234,
    });
    expect(fromEnv.allowPrivateHosts).to.deep.equal(["127.0.0.1", "10.0.0.0/8"]);
    const fromFile = resolveSettings(
      { "push-stream": "file-stream", "push-allow-private-hosts": ["::1"], "push-lease-timeout-ms": 99 },
      {},
      env,
    ).push;
    expect(fromFile).to.deep.include({
      stream: "file-stream",
      leaseTimeoutMs: 99,
      consumerName: "env-worker",
    });
    expect(fromFile.allowPrivateHosts).to.deep.equal(["::1"]);
    const fromFlags = resolveSettings(
      { "push-stream": "file-stream", "push-notifications": true },
      { "push-stream": "flag-stream", "push-queue": "local-file", "push-notifications": false },
      env,
    ).push;
    expect(fromFlags).to.deep.include({ stream: "flag-stream", queue: "local-file", enabled: false });
    expect(resolveSettings({}, {}, {}).push).to.deep.include({
      enabled: false,
      queue: "local-file",
      leaseTimeoutMs: 300000,
    });
  });

  it("every push setting is a flag of `iac-code a2a`, handed over by config key", () => {
    const program = new Command();
    registerA2aCommand(program);
    const a2a = program.commands.find((c) => c.name() === "a2a")!;
    const flags = a2a.options.map((o) => o.long);
    for (const setting of A2A_SETTINGS.settings.filter((s) => s.key.startsWith("push-")))
      expect(flags).to.include(`--${setting.key}`);
    a2a.parseOptions([
      "--push-notifications",
      "--push-allow-private-hosts",
      "127.0.0.1,::1",
      "--push-lease-timeout-ms",
      "5",
    ]);
    const values = cliValues(A2A_SETTINGS, a2a.opts());
    expect(values).to.deep.include({
      "push-notifications": true,
      "push-allow-private-hosts": ["127.0.0.1,::1"],
      "push-lease-timeout-ms": "5",
    });
    expect(resolveSettings({}, values, {}).push).to.deep.include({
      enabled: true,
      allowPrivateHosts: ["127.0.0.1", "::1"],
      leaseTimeoutMs: 5,
    });
  });

  it("refuses bad values with one clear message", () => {
    for (const [file, env, message] of [
      [
        { "push-notifications": true, "push-queue": "redis-streams" },
        {},
        "push-redis-url is required for push-queue: redis-streams.",
      ],
      [
        {},
        { IACCODE_A2A_PUSH_QUEUE: "kafka" },
        "Invalid IACCODE_A2A_PUSH_QUEUE 'kafka': expected one of local-file, redis-streams.",
      ],
      [
        {},
        { IACCODE_A2A_PUSH_REDIS_URL: "http://x" },
        "Invalid IACCODE_A2A_PUSH_REDIS_URL 'http://x': must match pattern",
      ],
      [
        {},
        { IACCODE_A2A_PUSH_LEASE_TIMEOUT_MS: "soon" },
        "Invalid IACCODE_A2A_PUSH_LEASE_TIMEOUT_MS 'soon': expected an integer.",
      ],
      [
        {},
        { IACCODE_A2A_PUSH_NOTIFICATIONS: "maybe" },
        "Invalid IACCODE_A2A_PUSH_NOTIFICATIONS 'maybe': expected true or false.",
      ],
      [
        { "push-allow-private-hosts": ["10.0.0.0/40"] },
        {},
        "Invalid push-allow-private-hosts: '10.0.0.0/40' is not",
      ],
    ] as Array<[A2AServerConfig, NodeJS.ProcessEnv, string]>) {
      expect(() => resolveSettings(file, {}, env)).to.throw(ConfigError, message);
    }
  });
});
