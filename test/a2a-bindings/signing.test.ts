// Card signing and verification: RFC 8785 vectors, an independent jose check,
// tamper detection, key selection from client configuration only, local and
// remote JWKS with their bounds.
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { base64url, exportJWK, FlattenedSign, flattenedVerify, generateKeyPair } from "jose";
import { canonicalizeAgentCard, verifyAgentCardSignature } from "@a2a-js/sdk";
import {
  canonicalCardPayload,
  canonicalizeJson,
  CardVerificationError,
  fetchAgentCard,
  RemoteJwksCache,
  signAgentCard,
  verifyAgentCard,
  type CardVerificationReason,
} from "../../src/a2a/signing/index.js";
import { sampleCard } from "./fixtures/card.js";
import { makeLoopbackCert, type LoopbackCert } from "./fixtures/tls.js";

const SECRET = "s3cret-for-tests";
const secretBytes = new TextEncoder().encode(SECRET);

async function expectFailure(
  promise: Promise<unknown>,
  reason: CardVerificationReason,
): Promise<CardVerificationError> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(CardVerificationError);
    expect((error as CardVerificationError).reason).to.equal(reason);
    return error as CardVerificationError;
  }
  throw new Error(`expected verification to fail with ${reason}`);
}

/** Flips one byte of the card's UTF-8 JSON and parses it back. */
function flipOneByte(card: object, needle: string): Record<string, unknown> {
  const bytes = Buffer.from(JSON.stringify(card), "utf8");
  const at = bytes.indexOf(Buffer.from(needle, "utf8"));
  expect(at).to.be.greaterThan(-1);
  bytes[at] = bytes[at] + 1;
  return JSON.parse(bytes.toString("utf8")) as Record<string, unknown>;
}

function closeServer(server: HttpServer | HttpsServer, sockets: Set<Socket>): Promise<void> {
  for (const socket of sockets) socket.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}

describe("a2a-bindings: RFC 8785 canonical JSON", () => {
  it("serialises the RFC's literals, numbers and string escapes", () => {
    const input = JSON.parse(
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],' +
        '"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}',
    ) as unknown;
    expect(canonicalizeJson(input)).to.equal(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it("orders keys by UTF-16 code units", () => {
    const input = {
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis",
    };
    expect(canonicalizeJson(input).startsWith('{"\\r":')).to.equal(true);
    const keysInText = [...canonicalizeJson(input).matchAll(/"([^"]*)":"[^"]*"/g)].map((m) => m[1]);
    expect(keysInText).to.deep.equal(["\\r", "1", "\u0080", "\u00f6", "\u20ac", "\ud83d\ude00", "\ufb33"]);
  });

  it("rejects values JSON cannot carry canonically", () => {
    expect(() => canonicalizeJson({ n: Number.NaN })).to.throw(TypeError, /finite/);
    expect(() => canonicalizeJson({ n: Infinity })).to.throw(TypeError, /finite/);
    expect(() => canonicalizeJson("\ud800x")).to.throw(TypeError, /well-formed/);
    expect(() => canonicalizeJson({ f: () => 1 })).to.throw(TypeError, /function/);
  });

  it("gives the same card payload as the @a2a-js/sdk canonicaliser", () => {
    const card = { ...sampleCard(), signatures: [{ protected: "x", signature: "y" }], unknownField: 1 };
    expect(canonicalCardPayload(card)).to.equal(canonicalizeAgentCard(card as never));
  });
});

describe("a2a-bindings: agent card signing", () => {
  it("emits one HS256 signature with a kid in the protected header", async () => {
    const signed = await signAgentCard(sampleCard(), { secret: SECRET });
    expect(signed.signatures).to.have.length(1);
    const header = JSON.parse(
      new TextDecoder().decode(base64url.decode(signed.signatures[0].protected)),
    ) as object;
    expect(header).to.deep.equal({ alg: "HS256", kid: "default", typ: "JOSE" });
    const custom = await signAgentCard(sampleCard(), { secret: SECRET, kid: "k-2026" });
    const customHeader = JSON.parse(
      new TextDecoder().decode(base64url.decode(custom.signatures[0].protected)),
    ) as {
      kid: string;
    };
    expect(customHeader.kid).to.equal("k-2026");
  });

  it("refuses an empty secret", async () => {
    try {
      await signAgentCard(sampleCard(), { secret: "" });
      expect.fail("signing with an empty secret must fail");
    } catch (error) {
      expect(String(error)).to.match(/non-empty secret/);
    }
  });

  it("verifies with an independent jose check and with the SDK verifier", async () => {
    const signed = await signAgentCard(sampleCard(), { secret: SECRET });
    // Independent path: the SDK's own canonicaliser + raw jose flattened verification.
    const payload = base64url.encode(canonicalizeAgentCard(signed as never));
    const result = await flattenedVerify(
      { protected: signed.signatures[0].protected, payload, signature: signed.signatures[0].signature },
      secretBytes,
      { algorithms: ["HS256"] },
    );
    expect(result.protectedHeader?.kid).to.equal("default");
    let askedKid = "";
    await verifyAgentCardSignature((kid) => {
      askedKid = kid;
      return Promise.resolve({ kty: "oct", k: base64url.encode(secretBytes) });
    })(signed as never);
    expect(askedKid).to.equal("default");
  });

  it("fails the independent check and ours after one byte of the card changes", async () => {
    const signed = await signAgentCard(sampleCard(), { secret: SECRET });
    for (const needle of ["iac-code", "Terraform", "1024", "GRPC"]) {
      const tampered = flipOneByte(signed, needle);
      const payload = base64url.encode(canonicalizeAgentCard(tampered as never));
      let rejected = false;
      try {
        await flattenedVerify(
          { protected: signed.signatures[0].protected, payload, signature: signed.signatures[0].signature },
          secretBytes,
        );
      } catch {
        rejected = true;
      }
      expect(rejected, `jose accepted a card changed at ${needle}`).to.equal(true);
      await expectFailure(verifyAgentCard(tampered, { secrets: { default: SECRET } }), "signature-mismatch");
    }
    // The signature itself changed by one byte.
    const badSig = structuredClone(signed);
    const sig = badSig.signatures[0].signature;
    badSig.signatures[0].signature = (sig[0] === "A" ? "B" : "A") + sig.slice(1);
    await expectFailure(verifyAgentCard(badSig, { secrets: { default: SECRET } }), "signature-mismatch");
  });

  it("does not depend on key order or on defaults another emitter prints", async () => {
    const signed = await signAgentCard(sampleCard(), { secret: SECRET });
    const reordered = Object.fromEntries(Object.entries(signed).reverse());
    // Another emitter may print empty maps and lists; JSON round trip as on the wire.
    const withDefaults = JSON.parse(
      JSON.stringify({ ...reordered, securitySchemes: {}, securityRequirements: [], iconUrl: "" }),
    ) as unknown;
    const ok = await verifyAgentCard(withDefaults, { secrets: { default: SECRET } });
    expect(ok).to.deep.equal({ status: "valid", kid: "default", alg: "HS256" });
  });
});

describe("a2a-bindings: agent card verification (client side)", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "iac-code-jwks-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("accepts an unsigned card unless a signature is required", async () => {
    expect(await verifyAgentCard(sampleCard(), { secrets: { default: SECRET } })).to.deep.equal({
      status: "unsigned",
    });
    await expectFailure(verifyAgentCard(sampleCard(), { requireSignature: true }), "missing-signature");
    await expectFailure(
      verifyAgentCard({ ...sampleCard(), signatures: [] }, { requireSignature: true }),
      "missing-signature",
    );
  });

  it("selects the configured secret by kid and reports unknown kids", async () => {
    const signed = await signAgentCard(sampleCard(), { secret: SECRET, kid: "b" });
    const ok = await verifyAgentCard(signed, { secrets: { a: "other", b: SECRET }, requireSignature: true });
    expect(ok).to.deep.equal({ status: "valid", kid: "b", alg: "HS256" });
    const error = await expectFailure(verifyAgentCard(signed, { secrets: { a: SECRET } }), "unknown-key");
    expect(error.message).to.equal("A2A Agent Card verification failed: unknown-key: kid=b");
    await expectFailure(verifyAgentCard(signed, { secrets: { b: "wrong" } }), "signature-mismatch");
  });

  it("uses a single configured secret when no keyed source exists, and fails without any key", async () => {
    const signed = await signAgentCard(sampleCard(), { secret: SECRET });
    expect((await verifyAgentCard(signed, { secret: SECRET })).status).to.equal("valid");
    await expectFailure(verifyAgentCard(signed, { secret: "nope" }), "signature-mismatch");
    await expectFailure(verifyAgentCard(signed, { requireSignature: true }), "missing-key");
  });

  it("never takes a key from the card: a self-signed card with jku does not verify", async () => {
    const attackerSecret = new TextEncoder().encode("attacker");
    const card = sampleCard();
    const jws = await new FlattenedSign(new TextEncoder().encode(canonicalCardPayload(card)))
      .setProtectedHeader({
        alg: "HS256",
        kid: "evil",
        typ: "JOSE",
        jku: "https://attacker.invalid/jwks.json",
      })
      .sign(attackerSecret);
    const forged = { ...card, signatures: [{ protected: jws.protected, signature: jws.signature }] };
    await expectFailure(verifyAgentCard(forged, { requireSignature: true }), "missing-key");
    await expectFailure(verifyAgentCard(forged, { secrets: { default: SECRET } }), "unknown-key");
    await expectFailure(verifyAgentCard(forged, { secret: SECRET }), "signature-mismatch");
  });

  it("rejects malformed signatures and unsupported algorithms", async () => {
    const card = sampleCard();
    const opts = { secrets: { default: SECRET } };
    await expectFailure(verifyAgentCard({ ...card, signatures: ["x"] }, opts), "malformed-signature");
    await expectFailure(
      verifyAgentCard({ ...card, signatures: [{ protected: 1, signature: "x" }] }, opts),
      "malformed-signature",
    );
    await expectFailure(
      verifyAgentCard({ ...card, signatures: [{ protected: "!!!", signature: "x" }] }, opts),
      "malformed-signature",
    );
    const arrayHeader = base64url.encode("[1]");
    await expectFailure(
      verifyAgentCard({ ...card, signatures: [{ protected: arrayHeader, signature: "x" }] }, opts),
      "malformed-signature",
    );
    const none = base64url.encode(JSON.stringify({ alg: "none", kid: "default" }));
    const error = await expectFailure(
      verifyAgentCard({ ...card, signatures: [{ protected: none, signature: "" }] }, opts),
      "unsupported-algorithm",
    );
    expect(error.detail).to.equal("alg=none");
    const noAlg = base64url.encode(JSON.stringify({ kid: "default" }));
    const missing = await expectFailure(
      verifyAgentCard({ ...card, signatures: [{ protected: noAlg, signature: "" }] }, opts),
      "unsupported-algorithm",
    );
    expect(missing.detail).to.equal("alg=<missing>");
  });

  it("reports a card that is not an A2A card as malformed", async () => {
    const signed = await signAgentCard(sampleCard(), { secret: SECRET });
    await expectFailure(
      verifyAgentCard({ ...signed, capabilities: "yes" }, { secret: SECRET }),
      "malformed-card",
    );
  });

  it("accepts the card when any of several signatures verifies", async () => {
    const a = await signAgentCard(sampleCard(), { secret: "old-secret", kid: "old" });
    const b = await signAgentCard(sampleCard(), { secret: SECRET, kid: "new" });
    const both = { ...a, signatures: [...a.signatures, ...b.signatures] };
    expect(await verifyAgentCard(both, { secrets: { new: SECRET } })).to.deep.equal({
      status: "valid",
      kid: "new",
      alg: "HS256",
    });
  });

  it("loads octet keys from a local JWKS file and ignores keys that cannot apply", async () => {
    const signed = await signAgentCard(sampleCard(), { secret: SECRET, kid: "file-key" });
    const file = join(dir, "keys.json");
    writeFileSync(
      file,
      JSON.stringify({
        keys: [
          { kty: "oct", kid: "file-key", alg: "HS512", k: base64url.encode("wrong-alg") },
          { kty: "oct", kid: "file-key", k: base64url.encode(secretBytes) },
          { kty: "oct", k: base64url.encode("no-kid") },
          "not-a-key",
        ],
      }),
    );
    expect((await verifyAgentCard(signed, { jwksFile: file, requireSignature: true })).status).to.equal(
      "valid",
    );
    const noKid = await signAgentCard(sampleCard(), { secret: SECRET });
    const unsignedKid = {
      ...noKid,
      signatures: [
        {
          protected: base64url.encode(JSON.stringify({ alg: "HS256", typ: "JOSE" })),
          signature: (
            await new FlattenedSign(new TextEncoder().encode(canonicalCardPayload(noKid)))
              .setProtectedHeader({ alg: "HS256", typ: "JOSE" })
              .sign(secretBytes)
          ).signature,
        },
      ],
    };
    expect((await verifyAgentCard(unsignedKid, { jwksFile: file })).status).to.equal("valid");
    await expectFailure(
      verifyAgentCard(unsignedKid, { jwksFile: file, secrets: { other: "x" } }),
      "ambiguous-key",
    );
  });

  it("rejects unreadable, oversized and malformed JWKS files with a clear error", async () => {
    const signed = await signAgentCard(sampleCard(), { secret: SECRET });
    const missing = join(dir, "absent.json");
    await rejectsWith(verifyAgentCard(signed, { jwksFile: missing }), /cannot be read/);
    const bad = join(dir, "bad.json");
    writeFileSync(bad, "{not json");
    await rejectsWith(verifyAgentCard(signed, { jwksFile: bad }), /not valid JSON/);
    const noKeys = join(dir, "nokeys.json");
    writeFileSync(noKeys, JSON.stringify({ key: [] }));
    await rejectsWith(verifyAgentCard(signed, { jwksFile: noKeys }), /no "keys" array/);
    const big = join(dir, "big.json");
    writeFileSync(big, JSON.stringify({ keys: [], pad: "x".repeat(1024 * 1024) }));
    await rejectsWith(verifyAgentCard(signed, { jwksFile: big }), /larger than 1 MiB/);
  });

  it("verifies RS256 signatures with an RSA public key from a JWKS", async () => {
    const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
    const card = sampleCard();
    const jws = await new FlattenedSign(new TextEncoder().encode(canonicalCardPayload(card)))
      .setProtectedHeader({ alg: "RS256", kid: "rsa-1", typ: "JOSE" })
      .sign(privateKey);
    const signed = { ...card, signatures: [{ protected: jws.protected, signature: jws.signature }] };
    const jwk = { ...(await exportJWK(publicKey)), kid: "rsa-1" };
    expect((await verifyAgentCard(signed, { jwks: { keys: [jwk] } })).status).to.equal("valid");
    // An octet key with the same kid must not be used for RS256.
    await expectFailure(
      verifyAgentCard(signed, { jwks: { keys: [{ kty: "oct", kid: "rsa-1", k: "AAAA" }] } }),
      "missing-key",
    );
  });
});

async function rejectsWith(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  try {
    await promise;
  } catch (error) {
    expect(String(error)).to.match(pattern);
    return;
  }
  throw new Error(`expected rejection matching ${String(pattern)}`);
}

describe("a2a-bindings: remote JWKS (https, cached, bounded)", () => {
  let tls: LoopbackCert;
  let server: HttpsServer;
  const sockets = new Set<Socket>();
  let base = "";
  let keySet: { keys: object[] } = { keys: [] };

  before(async () => {
    tls = makeLoopbackCert();
    server = createHttpsServer({ cert: tls.cert, key: tls.key }, (req, res) => {
      if (req.url === "/jwks.json") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(keySet));
      } else if (req.url === "/big.json") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ keys: [], pad: "x".repeat(100_000) }));
      } else if (req.url === "/big-chunked.json") {
        res.writeHead(200, { "content-type": "application/json" });
        for (let i = 0; i < 100; i += 1) res.write("x".repeat(1000));
        res.end();
      } else if (req.url === "/slow.json") {
        res.writeHead(200, { "content-type": "application/json" });
        res.write("{"); // never finishes
      } else if (req.url === "/redirect.json") {
        res.writeHead(302, { location: "https://attacker.invalid/jwks.json" });
        res.end();
      } else if (req.url === "/text.json") {
        res.writeHead(200);
        res.end("not json");
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    server.on("connection", (socket: Socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    await closeServer(server, sockets);
    tls.dispose();
  });

  const oct = (kid: string, secret: string) => ({ kty: "oct", kid, k: base64url.encode(secret) });

  it("fetches once, serves later verifications from the cache, refetches on an unknown kid", async () => {
    keySet = { keys: [oct("r1", SECRET)] };
    let now = 1_000_000;
    const cache = new RemoteJwksCache({ ca: tls.cert, minRefetchIntervalMs: 10 }, () => now);
    const url = `${base}/jwks.json`;
    const one = await signAgentCard(sampleCard(), { secret: SECRET, kid: "r1" });
    expect((await verifyAgentCard(one, { jwksUrl: url, jwksCache: cache })).status).to.equal("valid");
    expect((await verifyAgentCard(one, { jwksUrl: url, jwksCache: cache })).status).to.equal("valid");
    expect(cache.fetchCount).to.equal(1);
    // The server rotates to a new key; the first card with kid r2 triggers one forced refetch.
    keySet = { keys: [oct("r2", "rotated")] };
    now += 20;
    const two = await signAgentCard(sampleCard(), { secret: "rotated", kid: "r2" });
    expect((await verifyAgentCard(two, { jwksUrl: url, jwksCache: cache })).status).to.equal("valid");
    expect(cache.fetchCount).to.equal(2);
    // Within the refetch interval an unknown kid does not hit the network again.
    const three = await signAgentCard(sampleCard(), { secret: "x", kid: "r3" });
    await expectFailure(verifyAgentCard(three, { jwksUrl: url, jwksCache: cache }), "unknown-key");
    expect(cache.fetchCount).to.equal(2);
    // After the TTL the set is fetched again.
    now += 3_600_001;
    await expectFailure(verifyAgentCard(three, { jwksUrl: url, jwksCache: cache }), "unknown-key");
    expect(cache.fetchCount).to.equal(3);
  });

  it("shares one fetch between concurrent verifications", async () => {
    keySet = { keys: [oct("c1", SECRET)] };
    const cache = new RemoteJwksCache({ ca: tls.cert });
    const card = await signAgentCard(sampleCard(), { secret: SECRET, kid: "c1" });
    const results = await Promise.all(
      [1, 2, 3].map(() => verifyAgentCard(card, { jwksUrl: `${base}/jwks.json`, jwksCache: cache })),
    );
    expect(results.map((r) => r.status)).to.deep.equal(["valid", "valid", "valid"]);
    expect(cache.fetchCount).to.equal(1);
  });

  it("refuses non-https URLs, oversized bodies, slow servers, redirects, errors and bad JSON", async () => {
    const card = await signAgentCard(sampleCard(), { secret: SECRET, kid: "k" });
    const cache = new RemoteJwksCache({ ca: tls.cert, maxBytes: 10_000, timeoutMs: 300 });
    const cases: Array<[string, RegExp]> = [
      [`http://127.0.0.1:1/jwks.json`, /must use https/],
      [`not a url`, /not a valid URL/],
      [`${base}/big.json`, /larger than 10000 bytes/],
      [`${base}/big-chunked.json`, /larger than 10000 bytes/],
      [`${base}/slow.json`, /timed out after 300 ms/],
      [`${base}/redirect.json`, /HTTP 302/],
      [`${base}/missing.json`, /HTTP 404/],
      [`${base}/text.json`, /not valid JSON/],
    ];
    for (const [url, pattern] of cases) {
      const error = await expectFailure(
        verifyAgentCard(card, { jwksUrl: url, jwksCache: cache }),
        "key-fetch-failed",
      );
      expect(error.message, url).to.match(pattern);
    }
  });

  it("refuses a server whose certificate is not trusted", async () => {
    const card = await signAgentCard(sampleCard(), { secret: SECRET, kid: "k" });
    const cache = new RemoteJwksCache();
    const error = await expectFailure(
      verifyAgentCard(card, { jwksUrl: `${base}/jwks.json`, jwksCache: cache }),
      "key-fetch-failed",
    );
    expect(error.message).to.match(/certificate/i);
  });
});

describe("a2a-bindings: fetchAgentCard (client discovery)", () => {
  let server: HttpServer;
  const sockets = new Set<Socket>();
  let base = "";
  let served: unknown = {};
  let status = 200;

  before(async () => {
    server = createHttpServer((req, res) => {
      if (req.url !== "/.well-known/agent-card.json") {
        res.writeHead(404);
        res.end();
        return;
      }
      res.writeHead(status, { "content-type": "application/json" });
      res.end(typeof served === "string" ? served : JSON.stringify(served));
    });
    server.on("connection", (socket: Socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => closeServer(server, sockets));

  it("returns the card unchecked when no verification is configured, verified otherwise", async () => {
    served = await signAgentCard(sampleCard(), { secret: SECRET });
    status = 200;
    expect((await fetchAgentCard(base)).verification).to.deep.equal({ status: "not-checked" });
    const checked = await fetchAgentCard(base, { verification: { secret: SECRET, requireSignature: true } });
    expect(checked.verification).to.deep.equal({ status: "valid", kid: "default", alg: "HS256" });
    expect(checked.card.name).to.equal("iac-code");
  });

  it("rejects a tampered card, a non-2xx answer and a body that is not a card object", async () => {
    served = flipOneByte(await signAgentCard(sampleCard(), { secret: SECRET }), "Generate");
    await expectFailure(fetchAgentCard(base, { verification: { secret: SECRET } }), "signature-mismatch");
    status = 503;
    await rejectsWith(fetchAgentCard(base), /HTTP 503/);
    status = 200;
    served = "[1,2]";
    await rejectsWith(fetchAgentCard(base), /not a JSON object/);
    served = "<html>";
    await rejectsWith(fetchAgentCard(base), /not valid JSON/);
  });
});
