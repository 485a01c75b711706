// Benchmark: events/s through the agent loop (AgentSession.runTurn with the
// scripted provider: persistence, usage, id mapping included) against its peer
// measured in the same run, the raw scripted provider stream without the loop.
// The difference is the loop's per-event overhead. A second scenario runs tool
// rounds (three parallel read-only calls each) through the loop. Prints
// figures only; bounded loops. Usage:
//   npx tsx scripts/bench/runtime-events.ts [turns=20] [chunks=2000] [rounds=20]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import pino from "pino";
import YAML from "yaml";
import { createAgentRuntime } from "../../src/runtime/index.js";
import type { Message } from "../../src/runtime/messages.js";
import { parseScript } from "../../src/runtime/providers/script-format.js";
import { ScriptedProvider } from "../../src/runtime/providers/scripted.js";

const TURNS = Number(process.argv[2] ?? 20);
const CHUNKS = Number(process.argv[3] ?? 2000);
const ROUNDS = Number(process.argv[4] ?? 20);

function buildScript(): string {
  const rules: unknown[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    rules.push({
      when: { userText: "[TOOLS]", round },
      reply: [
        { toolCall: { name: "list_files", input: {} } },
        { toolCall: { name: "glob", input: { pattern: "*.txt" } } },
        { toolCall: { name: "read_file", input: { path: "a.txt" } } },
      ],
    });
  }
  rules.push({ when: { userText: "[TOOLS]" }, reply: [{ text: "done" }] });
  rules.push({
    when: { userText: "[TEXT]" },
    reply: [{ text: Array.from({ length: CHUNKS }, (_, i) => `chunk ${i} `) }],
  });
  return YAML.stringify({ version: 1, defaults: { usage: { inputTokens: 10, outputTokens: 10 } }, rules });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main(): Promise<void> {
  const root = mkdtempSync(path.join(os.tmpdir(), "iac-bench-runtime-"));
  const cwd = path.join(root, "ws");
  const scriptFile = path.join(root, "script.yaml");
  const text = buildScript();
  writeFileSync(scriptFile, text);
  mkdirSync(cwd);
  writeFileSync(path.join(cwd, "a.txt"), "alpha\n");
  const runtime = await createAgentRuntime({
    configDir: path.join(root, "cfg"),
    env: {},
    scriptFile,
    autoApprovePermissions: true,
    logger: pino({ level: "silent" }),
  });
  const provider = new ScriptedProvider(parseScript(text, "bench"));
  const prompt: Message = {
    id: "u",
    role: "user",
    content: [{ type: "text", text: "[TEXT]" }],
    createdAt: "t",
  };

  try {
    const raw: number[] = [];
    const loop: number[] = [];
    let rawEvents = 0;
    let loopEvents = 0;
    for (let i = 0; i < TURNS + 2; i++) {
      // Peer: the provider stream alone.
      let start = performance.now();
      let n = 0;
      for await (const _event of provider.stream({
        system: "s",
        messages: [prompt],
        tools: [],
        kind: "stream",
        signal: new AbortController().signal,
      })) {
        n++;
      }
      const rawMs = performance.now() - start;
      // The loop: a fresh session per turn so the conversation does not grow.
      const session = await runtime.openSession({ contextId: `text-${i}`, cwd });
      start = performance.now();
      let m = 0;
      for await (const _event of session.runTurn(
        { text: "[TEXT]", images: [], overrides: {} },
        new AbortController().signal,
      )) {
        m++;
      }
      const loopMs = performance.now() - start;
      await session.close();
      if (i < 2) continue; // warm-up
      raw.push((n / rawMs) * 1000);
      loop.push((m / loopMs) * 1000);
      rawEvents = n;
      loopEvents = m;
    }

    const toolRates: number[] = [];
    const roundMs: number[] = [];
    let toolEvents = 0;
    for (let i = 0; i < Math.max(3, Math.ceil(TURNS / 4)); i++) {
      const session = await runtime.openSession({ contextId: `tools-${i}`, cwd });
      const start = performance.now();
      let m = 0;
      for await (const _event of session.runTurn(
        { text: "[TOOLS]", images: [], overrides: {} },
        new AbortController().signal,
      )) {
        m++;
      }
      const ms = performance.now() - start;
      await session.close();
      if (i === 0) continue;
      toolRates.push((m / ms) * 1000);
      roundMs.push(ms / ROUNDS);
      toolEvents = m;
    }

    const rawRate = median(raw);
    const loopRate = median(loop);
    const overheadUs = (1 / loopRate - 1 / rawRate) * 1e6;
    const lines = [
      `runtime events benchmark (node ${process.version}, ${os.cpus().length} CPUs), medians of ${raw.length} turns`,
      `  text turn: ${CHUNKS} chunks -> ${rawEvents} provider events, ${loopEvents} runtime events`,
      `  raw scripted provider stream (peer): ${rawRate.toFixed(0)} events/s`,
      `  through the agent loop:              ${loopRate.toFixed(0)} events/s`,
      `  ratio loop/raw: ${(loopRate / rawRate).toFixed(3)}   loop overhead: ${overheadUs.toFixed(2)} us/event`,
      `  tool turn: ${ROUNDS} rounds x 3 parallel read-only tools -> ${toolEvents} events`,
      `  through the agent loop: ${median(toolRates).toFixed(0)} events/s, ${median(roundMs).toFixed(2)} ms per tool round`,
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  } finally {
    await runtime.close();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
