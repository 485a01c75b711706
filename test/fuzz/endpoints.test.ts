// Property-based fuzzing (fast-check) of every endpoint and binding: AG-UI
// POST / and the cancel extension, A2A JSON-RPC, the REST routes and gRPC
// (raw protobuf bytes through @grpc/grpc-js). Whatever arrives, the answer is
// never a 5xx (gRPC: never INTERNAL/UNKNOWN/DATA_LOSS), comes within a time
// limit, carries no server secret and no absolute server path, and the
// servers keep answering. Bounded for CI and seeded: IAC_CODE_FUZZ_SEED
// replays a run (the seed is printed), IAC_CODE_FUZZ_SCALE multiplies the case
// counts (scripts/fuzz-long.ts runs it longer with fresh seeds).
import { expect } from "chai";
import fc from "fast-check";
import * as grpc from "@grpc/grpc-js";
import { PACKAGE_ROOT } from "../../src/package-root.js";
import { runInput, startHarness, type Harness } from "../agui/harness.js";

const SEED = Number(process.env.IAC_CODE_FUZZ_SEED ?? 20_260_917);
const SCALE = Number(process.env.IAC_CODE_FUZZ_SCALE ?? 1);
const runs = (n: number) => Math.max(1, Math.round(n * SCALE));
/** The A2A bearer token: a server secret that no answer may contain. */
const SECRET = "tok-FUZZ-SECRET-7f3a9c";
const ANSWER_LIMIT_MS = 15_000;

/** Strings a hostile client likes: lone surrogates, NULs, long, non-ASCII, path-like. */
const nastyString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom("\ud800", "\udfff", "a\u0000b", "../../etc/passwd", "con", "%00", "😀", " ", ""),
  fc.string({ minLength: 200, maxLength: 2000, unit: "grapheme-ascii" }),
);
const anyJson = fc.jsonValue({ maxDepth: 5, stringUnit: "binary" });
const deepJson = fc.integer({ min: 1, max: 400 }).map((d) => "[".repeat(d) + "]".repeat(d));
/** A JSON value, sometimes replaced by a nasty string or a deep nest (as raw JSON text). */
const hostileValue = fc.oneof(
  { weight: 4, arbitrary: anyJson.map((v) => JSON.stringify(v)) },
  { weight: 2, arbitrary: nastyString.map((s) => JSON.stringify(s)) },
  { weight: 1, arbitrary: deepJson },
);

/** An object of `template`'s keys where each value is kept (as JSON text) or replaced by a hostile one; keys may drop out. */
function mutated(template: Record<string, unknown>): fc.Arbitrary<string> {
  const entries = Object.entries(template).map(([key, value]) =>
    fc
      .oneof(
        { weight: 3, arbitrary: fc.constant(JSON.stringify(value)) },
        { weight: 2, arbitrary: hostileValue },
        { weight: 1, arbitrary: fc.constant(undefined) },
      )
      .map((text) => (text === undefined ? undefined : `${JSON.stringify(key)}:${text}`)),
  );
  return fc.tuple(...entries).map((parts) => `{${parts.filter((p) => p !== undefined).join(",")}}`);
}

/** Any body: a mutated valid one, any JSON, random text or bytes. */
function body(template: Record<string, unknown>): fc.Arbitrary<string | Uint8Array> {
  return fc.oneof(
    { weight: 6, arbitrary: mutated(template) },
    { weight: 2, arbitrary: hostileValue },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 300 }) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }) },
  );
}

/** A path segment as a hostile client writes it: lone surrogates go out as their (invalid) UTF-8 bytes. */
function pathSegment(text: string): string {
  const out = text.replace(/\p{Cs}/gu, (unit) => {
    const c = unit.charCodeAt(0);
    return `%${(0xe0 | (c >> 12)).toString(16)}%${(0x80 | ((c >> 6) & 0x3f)).toString(16)}%${(0x80 | (c & 0x3f)).toString(16)}`;
  });
  return out.replace(/[^%]+/g, (chunk) => encodeURIComponent(chunk)) || "x";
}

interface Answer {
  status: number;
  text: string;
}

describe("fuzz: every endpoint answers hostile input without 5xx, hang or leak", function () {
  this.timeout(600_000);
  let h: Harness;
  let forbidden: string[];
  before(async () => {
    console.log(`    fuzz seed ${SEED} (replay: IAC_CODE_FUZZ_SEED=${SEED}), scale ${SCALE}`);
    // Push on: the config methods are fuzzed past the capability check.
    h = await startHarness({ a2aToken: SECRET, a2aFile: { "push-notifications": true } });
    // Secrets and server-side paths a client never gave us.
    forbidden = [SECRET, h.stateDir, `${h.dir}/a2a`, `${PACKAGE_ROOT}/src`, `${PACKAGE_ROOT}/node_modules`];
  });
  after(async () => {
    await h.close();
  });

  async function send(url: string, init: RequestInit): Promise<Answer> {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(ANSWER_LIMIT_MS) });
    return { status: res.status, text: await res.text() };
  }

  function check(answer: Answer, what: string): void {
    expect(answer.status, `${what} -> ${answer.status} ${answer.text.slice(0, 300)}`).to.be.below(500);
    for (const secret of forbidden) expect(answer.text, `${what} leaks ${secret}`).to.not.include(secret);
  }

  async function stillServing(): Promise<void> {
    expect((await fetch(`${h.url}health`)).status).to.equal(200);
    const a2a = await fetch(`${h.a2a.url}health`);
    expect(a2a.status).to.equal(200);
  }

  const jsonHeaders = fc.constantFrom<Record<string, string>>(
    { "Content-Type": "application/json" },
    { "Content-Type": "application/json; charset=utf-8", "Accept-Language": "zh-CN" },
    { "Content-Type": "text/plain" },
    {},
  );

  it("AG-UI POST /", async () => {
    const template = runInput(h, { threadId: "fuzz-thread", runId: "fuzz-run", text: "hello" });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(body(template), jsonHeaders, async (payload, headers) => {
        const answer = await send(h.url, { method: "POST", headers, body: payload });
        check(answer, `POST / ${String(n++)}`);
      }),
      { seed: SEED, numRuns: runs(800) },
    );
    await stillServing();
  });

  it("AG-UI cancel extension", async () => {
    const template = { threadId: "fuzz-thread", rosInvocationId: "invocation-1" };
    await fc.assert(
      fc.asyncProperty(nastyString, body(template), jsonHeaders, async (executionId, payload, headers) => {
        const answer = await send(
          `${h.url}extensions/iac-code/v1/executions/${pathSegment(executionId)}/cancel`,
          { method: "POST", headers, body: payload },
        );
        check(answer, `cancel ${JSON.stringify(executionId)}`);
      }),
      { seed: SEED, numRuns: runs(300) },
    );
    await stillServing();
  });

  const auth = { Authorization: `Bearer ${SECRET}`, "A2A-Version": "1.0" };
  const METHODS = [
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "ListTasks",
    "CancelTask",
    "SubscribeToTask",
    "GetExtendedAgentCard",
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
  ];

  it("A2A JSON-RPC", async () => {
    const params = {
      message: {
        messageId: "m1",
        role: "ROLE_USER",
        parts: [{ text: "hello" }],
        metadata: { iac_code: { cwd: h.workspace } },
      },
      id: "task-1",
      historyLength: 3,
      pageSize: 10,
    };
    const envelope = fc.record({
      jsonrpc: fc.oneof(fc.constant("2.0"), anyJson),
      id: fc.oneof(fc.integer(), fc.string(), fc.constant(null), anyJson),
      method: fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...METHODS) },
        { weight: 1, arbitrary: nastyString },
      ),
    });
    await fc.assert(
      fc.asyncProperty(envelope, mutated(params), fc.boolean(), async (env, paramsText, raw) => {
        const text = raw
          ? paramsText
          : `{"jsonrpc":${JSON.stringify(env.jsonrpc)},"id":${JSON.stringify(env.id)},"method":${JSON.stringify(env.method)},"params":${paramsText}}`;
        const answer = await send(h.a2a.url, {
          method: "POST",
          headers: { "Content-Type": "application/json", ...auth },
          body: text,
        });
        check(answer, `JSON-RPC ${env.method}`);
        if (answer.status === 200 && !answer.text.startsWith("data:") && !answer.text.startsWith(":")) {
          const reply = JSON.parse(answer.text) as { error?: { code: number } };
          expect(reply.error?.code ?? 0, answer.text.slice(0, 300)).to.not.equal(-32603);
        }
      }),
      { seed: SEED, numRuns: runs(800) },
    );
    await stillServing();
  });

  it("A2A REST routes", async () => {
    const base = h.a2a.url.replace(/\/$/, "");
    const routes: Array<[string, (id: string) => string]> = [
      ["POST", () => "/message:send"],
      ["POST", () => "/message:stream"],
      ["GET", (id) => `/tasks/${id}`],
      ["GET", () => "/tasks"],
      ["POST", (id) => `/tasks/${id}:cancel`],
      ["GET", (id) => `/tasks/${id}:subscribe`],
      ["POST", (id) => `/tasks/${id}:subscribe`],
      ["GET", () => "/extendedAgentCard"],
      ["POST", (id) => `/tasks/${id}/pushNotificationConfigs`],
      ["GET", (id) => `/tasks/${id}/pushNotificationConfigs/${id}`],
      ["DELETE", (id) => `/tasks/${id}/pushNotificationConfigs/${id}`],
      ["GET", (id) => `/${id}/tasks`],
    ];
    const segment = fc.oneof(
      nastyString.map(pathSegment),
      fc.constantFrom("%", "%E0%A4%A", "%ZZ", "..", "%2e%2e", "a%2Fb", "%C0%AF"),
    );
    const query = fc
      .array(
        fc.tuple(
          fc.constantFrom("pageSize", "historyLength", "status", "contextId", "x", "A2A-Version"),
          nastyString,
        ),
        {
          maxLength: 4,
        },
      )
      .map((pairs) => new URLSearchParams(pairs).toString());
    const template = {
      message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hi" }] },
      metadata: {},
    };
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        segment,
        query,
        body(template),
        async ([method, path], id, q, payload) => {
          const url = `${base}${path(id)}${q ? `?${q}` : ""}`;
          const answer = await send(url, {
            method,
            headers: { "Content-Type": "application/json", ...auth },
            ...(method === "GET" ? {} : { body: payload }),
          });
          check(answer, `${method} ${url}`);
        },
      ),
      { seed: SEED, numRuns: runs(600) },
    );
    await stillServing();
  });

  it("A2A gRPC (raw protobuf bytes)", async () => {
    const client = new grpc.Client(h.a2a.grpcTarget, grpc.credentials.createInsecure());
    const metadata = new grpc.Metadata();
    metadata.set("authorization", `Bearer ${SECRET}`);
    metadata.set("a2a-version", "1.0");
    const unaryMethods = ["SendMessage", "GetTask", "ListTasks", "CancelTask", "GetExtendedAgentCard"];
    const streamMethods = ["SendStreamingMessage", "SubscribeToTask"];
    const bad = new Set([grpc.status.INTERNAL, grpc.status.UNKNOWN, grpc.status.DATA_LOSS]);
    const identity = (b: Buffer) => b;
    const call = (method: string, bytes: Uint8Array): Promise<{ code: number; details: string }> =>
      new Promise((resolve) => {
        const path = `/lf.a2a.v1.A2AService/${method}`;
        const deadline = Date.now() + ANSWER_LIMIT_MS;
        if (streamMethods.includes(method)) {
          const stream = client.makeServerStreamRequest(
            path,
            identity,
            identity,
            Buffer.from(bytes),
            metadata,
            {
              deadline,
            },
          );
          stream.on("data", () => stream.cancel());
          stream.on("error", (e: grpc.ServiceError) => resolve({ code: e.code, details: e.details }));
          stream.on("end", () => resolve({ code: 0, details: "" }));
        } else {
          client.makeUnaryRequest(path, identity, identity, Buffer.from(bytes), metadata, { deadline }, (e) =>
            resolve(e ? { code: e.code, details: e.details } : { code: 0, details: "" }),
          );
        }
      });
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...unaryMethods, ...streamMethods),
          fc.uint8Array({ maxLength: 400 }),
          async (method, bytes) => {
            const result = await call(method, bytes);
            expect(bad.has(result.code), `${method} -> ${result.code} ${result.details}`).to.equal(false);
            expect(result.code, "no deadline hit").to.not.equal(grpc.status.DEADLINE_EXCEEDED);
            for (const secret of forbidden) expect(result.details).to.not.include(secret);
          },
        ),
        { seed: SEED, numRuns: runs(400) },
      );
    } finally {
      client.close();
    }
    await stillServing();
  });
});
