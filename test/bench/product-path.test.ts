// The product benchmark's harness (scripts/bench): the CLI-started server on
// the trivial script streams exactly the events of the raw ceiling server,
// through the agent runtime (its sessions are in the state store); the TrivialRuntime
// preload swaps the runtime and nothing else; the CPU profile reader cuts a
// window and charges library and node work to the iac-code module that called it.
import { expect } from "chai";
import Database from "better-sqlite3";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startCliPeer } from "../../scripts/bench/cli-peer.js";
import { analyseProfile, formatReport, moduleOf, type CpuProfile } from "../../scripts/bench/cpu-profile.js";
import { startPeer, type Peer } from "../../scripts/bench/peer-process.js";
import { writeTrivialScript } from "../../scripts/bench/trivial-script.js";
import { parseSseText } from "../../src/server/sse.js";

/** One SendStreamingMessage; each event as "<kind> <state>[ text]" (ids and timestamps left out). */
async function streamShape(url: string, prompt: string): Promise<string[]> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", "a2a-version": "1.0" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendStreamingMessage",
      params: { message: { messageId: `m-${Math.random()}`, role: "ROLE_USER", parts: [{ text: prompt }] } },
    }),
  });
  return parseSseText(await response.text()).map((frame) => {
    const result = (JSON.parse(frame.data) as { result: Record<string, Record<string, unknown>> }).result;
    const [kind, event] = Object.entries(result)[0];
    const status = event.status as {
      state: string;
      message?: { parts: Array<{ text?: string }> };
    };
    const text = status.message?.parts.map((p) => p.text).join("");
    return `${kind} ${status.state}${text === undefined ? "" : ` ${text}`}`;
  });
}

/** The agent runtime's sessions in the server's state store; the config dir holds none. */
const sessionsIn = (dir: string) => {
  expect(existsSync(path.join(dir, "config", "sessions"))).to.equal(false);
  const file = path.join(dir, "a2a", "state.db");
  if (!existsSync(file)) return 0;
  const db = new Database(file, { readonly: true });
  try {
    const row = db
      .prepare("SELECT count(*) AS n FROM runtime_docs WHERE part = '' AND name = 'session'")
      .get() as { n: number };
    return row.n;
  } finally {
    db.close();
  }
};

describe("bench harness: the product path", function () {
  this.timeout(90_000);
  let dir: string;
  let script: string;
  const peers: Peer[] = [];
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "bench-product-"));
    script = writeTrivialScript(path.join(dir, "trivial-script.json"), [3]);
  });
  after(async () => {
    await Promise.all(peers.map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  it("the CLI-started server answers 'stream 3' through the agent runtime with the raw server's events", async () => {
    const [product, raw] = await Promise.all([
      startCliPeer({ dir: path.join(dir, "agent"), script }),
      startPeer(["raw"]),
    ]);
    peers.push(product, raw);
    const expected = [
      "task TASK_STATE_SUBMITTED",
      "statusUpdate TASK_STATE_WORKING",
      "statusUpdate TASK_STATE_WORKING chunk-0 ",
      "statusUpdate TASK_STATE_WORKING chunk-1 ",
      "statusUpdate TASK_STATE_WORKING chunk-2 ",
      "statusUpdate TASK_STATE_WORKING",
      "statusUpdate TASK_STATE_WORKING chunk-0 chunk-1 chunk-2 ",
      "statusUpdate TASK_STATE_INPUT_REQUIRED",
    ];
    expect(await streamShape(raw.jsonRpc, "stream 3")).to.deep.equal(expected);
    expect(await streamShape(product.jsonRpc, "stream 3")).to.deep.equal(expected);
    // Anything else is one chunk, as on every peer.
    expect(await streamShape(product.jsonRpc, "hello")).to.include(
      "statusUpdate TASK_STATE_WORKING chunk-0 ",
    );
    // The agent runtime kept its sessions in the server's own state store (committed with the task;
    // read once the server has stopped: it holds the database exclusively while it runs).
    await product.stop();
    expect(sessionsIn(path.join(dir, "agent"))).to.equal(2);
  });

  it("the TrivialRuntime preload swaps the runtime of the same CLI start and nothing else", async () => {
    const trivial = await startCliPeer({ dir: path.join(dir, "trivial"), script, runtime: "trivial" });
    peers.push(trivial);
    expect(await streamShape(trivial.jsonRpc, "stream 3")).to.have.length(8);
    expect((await streamShape(trivial.jsonRpc, "stream 3"))[6]).to.equal(
      "statusUpdate TASK_STATE_WORKING chunk-0 chunk-1 chunk-2 ",
    );
    // Same CLI: the persistence dir the flag named; no agent runtime: no sessions.
    expect(existsSync(path.join(dir, "trivial", "a2a", "state.db"))).to.equal(true);
    await trivial.stop();
    expect(sessionsIn(path.join(dir, "trivial"))).to.equal(0);
  });
});

describe("bench harness: the CPU profile reader", () => {
  const root = path.resolve(import.meta.dirname, "../..");
  const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 });
  // (root) → handler (src/a2a/core/service.ts) → save (dist/src/runtime/session/store.js) → writeFileSync (node:fs);
  // (root) → (garbage collector); (root) → (idle).
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame("(root)", ""), children: [2, 5, 6] },
      { id: 2, callFrame: frame("handle", `file://${root}/src/a2a/core/service.ts`), children: [3] },
      { id: 3, callFrame: frame("save", `file://${root}/dist/src/runtime/session/store.js`), children: [4] },
      { id: 4, callFrame: frame("writeFileSync", "node:fs") },
      { id: 5, callFrame: frame("(garbage collector)", "") },
      { id: 6, callFrame: frame("(idle)", "") },
    ],
    startTime: 1_000,
    endTime: 9_000,
    // Samples at 2000, 3000, 4000, 5000, 6000, 7000 µs.
    samples: [4, 4, 2, 5, 6, 4],
    timeDeltas: [1_000, 1_000, 1_000, 1_000, 1_000, 1_000],
  };

  it("names modules: iac-code files as src/ (dist mapped back), packages, node, V8", () => {
    expect(moduleOf(frame("f", `file://${root}/dist/src/a2a/server.js`))).to.equal("src/a2a/server.ts");
    expect(moduleOf(frame("f", `file://${root}/node_modules/@koa/router/lib/router.js`))).to.equal(
      "npm:@koa/router",
    );
    expect(moduleOf(frame("f", `file://${root}/node_modules/pino/pino.js`))).to.equal("npm:pino");
    expect(moduleOf(frame("(program)", ""))).to.equal("(program)");
  });

  it("charges node work to the deepest iac-code frame, counts inclusively, skips idle, cuts a window", () => {
    const all = analyseProfile(profile);
    expect(all).to.deep.include({ windowSamples: 6, busySamples: 5 });
    expect(all.byFunction[0]).to.deep.equal({ name: "writeFileSync  node:fs:1", samples: 3 });
    expect(all.byOwnModule).to.deep.include({ name: "src/runtime/session/store.ts", samples: 3 });
    expect(all.byOwnModule).to.deep.include({ name: "src/a2a/core/service.ts", samples: 1 });
    expect(all.byOwnModule).to.deep.include({ name: "(no iac-code frame) (garbage collector)", samples: 1 });
    expect(all.inclusiveFunction).to.deep.include({ name: "handle  src/a2a/core/service.ts:1", samples: 4 });
    expect(all.inclusiveFunction).to.deep.include({
      name: "save  dist/src/runtime/session/store.js:1",
      samples: 3,
    });
    expect(all.inclusiveModule).to.deep.include({ name: "src/a2a/core/service.ts", samples: 4 });
    expect(all.inclusiveDirectory).to.deep.include({ name: "src/runtime/session/", samples: 3 });
    const window = analyseProfile(profile, { fromUs: 3_500, toUs: 5_500 });
    expect(window).to.deep.include({ windowSamples: 2, busySamples: 2 });
    expect(window.byModule.map((s) => s.name)).to.deep.equal([
      "src/a2a/core/service.ts",
      "(garbage collector)",
    ]);
  });

  it("turns samples into CPU per request on the main thread's measured time", () => {
    const text = formatReport(analyseProfile(profile), {
      count: 10,
      unit: "us/request",
      mainThreadUs: 5_000,
    });
    // 5 busy samples share 5000 us over 10 requests: 100 us/request per sample.
    expect(text).to.match(/^6 samples, 5 busy \(not idle\); main thread CPU 500 us\/request/);
    expect(text).to.match(/ 3 +60\.0% +300\.0 us\/request {2}writeFileSync {2}node:fs:1/);
  });
});
