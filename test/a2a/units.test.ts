import { expect } from "chai";
import { Writable } from "node:stream";
import { sanitizeClientText } from "../../src/a2a/core/sanitize.js";
import { boundJson } from "../../src/a2a/core/turn/truncate.js";
import { checkVersion, parseExtensions } from "../../src/a2a/core/request/service-params.js";
import { Authenticator } from "../../src/a2a/core/request/auth.js";
import { sanitizeArtifactFilename } from "../../src/a2a/stores/artifact-store.js";
import { decodeProtoJson, pb } from "../../src/contract/index.js";
import { nonFinitePath } from "../../src/a2a/core/request/finite.js";
import { credentialNamesOf, storableMessage } from "../../src/a2a/core/request/request-secrets.js";
import { EventHub } from "../../src/a2a/core/turn/event-hub.js";
import { createLogger } from "../../src/server/logger.js";

describe("A2A building blocks", () => {
  it("sanitises client-facing error text: paths, tokens, keys", () => {
    const text = sanitizeClientText(
      "failed at /home/alice/project/main.tf: Authorization: Bearer abcdef123456 api_key=sk-live-123456789 LTAI5tAbCdEfGh12 C:\\Users\\bob\\x file:///srv/data/a.txt",
    );
    expect(text).to.not.match(/alice|abcdef123456|sk-live|LTAI5t|bob|\/srv\/data/);
    expect(text).to.include("[PATH]").and.include("[REDACTED]");
    expect(sanitizeClientText("x".repeat(5000))).to.have.length(1000);
    expect(sanitizeClientText("plain message 3/4 done")).to.equal("plain message 3/4 done");
  });

  it("redacts secrets in pino logs", async () => {
    let out = "";
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        out += chunk.toString();
        done();
      },
    });
    const logger = createLogger({ destination: sink });
    logger.info(
      {
        config: { token: "tok-1", apiKey: "key-1", basicPassword: "pw-1" },
        req: { headers: { authorization: "Bearer tok-2" } },
      },
      "x",
    );
    logger.flush();
    await new Promise((resolve) => setImmediate(resolve));
    expect(out).to.include("[REDACTED]");
    expect(out).to.not.match(/tok-1|key-1|pw-1|tok-2/);
  });

  it("bounds tool data: 4000 chars per string, depth 32", () => {
    let deep: unknown = "leaf";
    for (let i = 0; i < 40; i += 1) deep = { d: deep };
    const bounded = JSON.stringify(boundJson({ s: "y".repeat(4001), deep, n: Number.NaN, big: 10n }));
    expect(bounded).to.include('"[truncated-depth]"');
    expect(bounded)
      .to.include(`"${"y".repeat(4000)}"`)
      .and.not.include("y".repeat(4001));
    expect(bounded).to.include('"n":"NaN"').and.include('"big":"10"');
  });

  it("checks A2A-Version and splits A2A-Extensions", () => {
    expect(() => checkVersion("1.0")).to.not.throw();
    expect(() => checkVersion("1.0.7")).to.not.throw();
    expect(() => checkVersion("1.1")).to.throw(/'1.1' is not supported/);
    expect(() => checkVersion(undefined)).to.throw(/'0.3' is not supported/);
    expect(parseExtensions(["a, b", " c ", ""])).to.deep.equal(["a", "b", "c"]);
  });

  it("authenticates only with configured, non-empty schemes", () => {
    const none = new Authenticator({ apiKeyHeader: "X-API-Key" });
    expect(none.enabled).to.equal(false);
    expect(none.authenticate(() => undefined)).to.deep.equal({ owner: "", authenticated: false });
    const halfBasic = new Authenticator({ basicUsername: "u", apiKeyHeader: "X-API-Key" });
    expect(halfBasic.enabled).to.equal(false);
    const basic = new Authenticator({ basicUsername: "u", basicPassword: "p:q", apiKeyHeader: "X-API-Key" });
    const header = (value: string) => (name: string) => (name === "authorization" ? value : undefined);
    expect(basic.authenticate(header(`Basic ${Buffer.from("u:p:q").toString("base64")}`))).to.deep.equal({
      owner: "basic:u",
      authenticated: true,
    });
    expect(basic.authenticate(header(`Basic ${Buffer.from("u:").toString("base64")}`))).to.equal(undefined);
  });

  it("sanitises artifact file names", () => {
    expect(sanitizeArtifactFilename("report.txt")).to.equal("report.txt");
    expect(sanitizeArtifactFilename("C:\\tmp\\out.yaml")).to.equal("out.yaml");
    expect(sanitizeArtifactFilename('a<b>:"c|?*.txt. ')).to.equal("a_b___c___.txt");
    expect(sanitizeArtifactFilename("CON.txt")).to.equal("_CON.txt");
    for (const bad of ["../x", "a/b", "..", ".", ""])
      expect(() => sanitizeArtifactFilename(bad), bad).to.throw("Unsafe artifact filename");
  });

  it("names the field of a non-finite number, in the JSON form a client wrote", () => {
    const request = decodeProtoJson(
      pb.SendMessageRequestSchema,
      JSON.parse(
        '{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"},{"data":{"a":[1,{"b":1e400}]}}]}}',
      ),
    );
    expect(nonFinitePath(request)).to.equal("message.parts[1].data.a[1].b");
    const meta = decodeProtoJson(
      pb.SendMessageRequestSchema,
      JSON.parse(
        '{"message":{"messageId":"m","role":"ROLE_USER","parts":[],"metadata":{"iac_code":{"n":-1e999}}}}',
      ),
    );
    expect(nonFinitePath(meta)).to.equal("message.metadata.iac_code.n");
    expect(nonFinitePath({ ok: [1, 2.5, -0], s: "Infinity" })).to.equal(undefined);
  });

  it("keeps no secret in the message a task stores, at any depth, and names the credentials given", () => {
    const message = decodeProtoJson(pb.MessageSchema, {
      messageId: "m",
      role: "ROLE_USER",
      parts: [{ text: "hi", metadata: { apiKey: "sk-PART" } }],
      metadata: {
        iac_code: {
          cwd: "/tmp",
          iac_code_model: "qwen",
          iac_code_api_key: "sk-1",
          alibaba_cloud_access_key_id: "LTAI1",
          alibaba_cloud_access_key_secret: "s3cret",
          alibaba_cloud_security_token: "sts",
          alibaba_cloud_region_id: "cn-beijing",
          thinking: { enabled: true, maxTokens: 3 },
        },
        other: { nested: [{ password: "p", authToken: "t", kept: 1 }] },
      },
    });
    const stored = storableMessage(message);
    expect(stored.metadata).to.deep.equal({
      iac_code: {
        cwd: "/tmp",
        iac_code_model: "qwen",
        alibaba_cloud_region_id: "cn-beijing",
        thinking: { enabled: true, maxTokens: 3 },
      },
      other: { nested: [{ kept: 1 }] },
    });
    expect(stored.parts[0].metadata).to.deep.equal({});
    expect(message.metadata?.iac_code).to.have.property("iac_code_api_key", "sk-1");
    expect(credentialNamesOf(message)).to.deep.equal([
      "iac_code_api_key",
      "alibaba_cloud_access_key_id",
      "alibaba_cloud_access_key_secret",
      "alibaba_cloud_security_token",
    ]);
  });

  it("fans events out to every subscriber; an aborted subscriber stops alone", async () => {
    const hub = new EventHub<number>();
    const abort = new AbortController();
    const a = hub.subscribe();
    const b = hub.subscribe(abort.signal);
    hub.publish(1);
    abort.abort();
    hub.publish(2);
    hub.close();
    const seenA: number[] = [];
    for await (const n of a) seenA.push(n);
    const seenB: number[] = [];
    for await (const n of b) seenB.push(n);
    expect(seenA).to.deep.equal([1, 2]);
    expect(seenB).to.deep.equal([]);
  });
});
