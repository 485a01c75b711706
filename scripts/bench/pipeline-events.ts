// Benchmark: streamed text per second through a pipeline step (every delta
// numbered, journaled to events.jsonl and folded into the snapshot before it
// is published) against its peer measured in the same run, the same text
// through a normal turn (no journal). The difference is the cost of pipeline
// durability per event. The scripted provider streams CHUNKS chunks in the
// first step of the selling pipeline, which then ends early. Usage:
//   npx tsx scripts/bench/pipeline-events.ts [turns=10] [chunks=2000]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import pino from "pino";
import YAML from "yaml";
import { createAgentRuntime } from "../../src/runtime/index.js";
import type { AgentSession, TurnOverrides } from "../../src/runtime/seam.js";

const TURNS = Number(process.argv[2] ?? 10);
const CHUNKS = Number(process.argv[3] ?? 2000);

const chunks = Array.from({ length: CHUNKS }, (_, i) => `chunk ${i} `);
const script = {
  version: 1,
  defaults: { usage: { inputTokens: 10, outputTokens: 10 } },
  rules: [
    {
      when: { step: "intent_parsing" },
      reply: [
        { text: chunks },
        {
          toolCall: {
            name: "complete_step",
            input: {
              conclusion: {
                is_infra_intent: false,
                summary: "bench",
                cloud: "aliyun",
                confidence: 1,
                clarity: "clear",
              },
            },
          },
        },
      ],
    },
    { reply: [{ text: chunks }] },
  ],
};

async function measure(
  session: AgentSession,
  overrides: TurnOverrides,
): Promise<{ events: number; ms: number }> {
  let events = 0;
  const start = performance.now();
  for (let i = 0; i < TURNS; i++) {
    for await (const event of session.runTurn(
      { text: "bench", images: [], overrides },
      new AbortController().signal,
    )) {
      events += event.type === "pipeline" ? event.envelopes.length : 1;
    }
  }
  return { events, ms: performance.now() - start };
}

const dir = mkdtempSync(path.join(os.tmpdir(), "iac-bench-pipeline-"));
try {
  mkdirSync(path.join(dir, "ws"));
  writeFileSync(path.join(dir, "script.yaml"), YAML.stringify(script));
  const runtime = await createAgentRuntime({
    configDir: path.join(dir, "config"),
    scriptFile: path.join(dir, "script.yaml"),
    env: { HOME: dir },
    logger: pino({ level: "silent" }),
  });
  const pipelineSession = await runtime.openSession({
    contextId: "bench-pipeline",
    cwd: path.join(dir, "ws"),
  });
  const normalSession = await runtime.openSession({ contextId: "bench-normal", cwd: path.join(dir, "ws") });
  await measure(normalSession, {}); // warm-up
  const rounds: Array<{ pipeline: number; normal: number }> = [];
  for (let round = 0; round < 3; round++) {
    const p = await measure(pipelineSession, { runMode: "pipeline" });
    const n = await measure(normalSession, {});
    rounds.push({ pipeline: (p.events / p.ms) * 1000, normal: (n.events / n.ms) * 1000 });
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const pipeline = median(rounds.map((r) => r.pipeline));
  const normal = median(rounds.map((r) => r.normal));
  console.log(`turns ${TURNS} x ${CHUNKS} text chunks, medians of 3 alternating rounds`);
  console.log(`pipeline step (journaled envelopes): ${pipeline.toFixed(0)} events/s`);
  console.log(`normal turn (runtime events):        ${normal.toFixed(0)} events/s`);
  console.log(`ratio pipeline / normal: ${(pipeline / normal).toFixed(2)}x`);
  await runtime.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
