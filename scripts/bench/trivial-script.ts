// The trivial agent (trivial-runtime.ts) as a script of the scripted provider
// (src/runtime/providers/scripted.md), for the product benchmark: the prompt
// "stream N" answers with N text chunks ("chunk-0 ", "chunk-1 ", …), anything
// else with one. The same texts as TrivialRuntime, the SDK executor and the raw
// server, so every peer streams the same events; the model side is the only
// thing scripted, the agent loop, sessions and persistence run for real.
import { writeFileSync } from "node:fs";
import { chunksOf } from "./trivial-runtime.js";

/** The script, with one rule per chunk count the benchmark asks for (JSON: the format reads YAML or JSON). */
export function trivialScript(chunkCounts: number[]): object {
  const counts = [...new Set(chunkCounts)].filter((n) => n > 0).sort((a, b) => a - b);
  return {
    version: 1,
    model: "bench-trivial",
    rules: counts.map((n) => ({
      name: `stream ${n}`,
      when: { userTextPattern: `^stream ${n}$` },
      reply: [{ text: chunksOf(`stream ${n}`) }],
    })),
    fallback: [{ text: chunksOf("") }],
  };
}

export function writeTrivialScript(file: string, chunkCounts: number[]): string {
  writeFileSync(file, `${JSON.stringify(trivialScript(chunkCounts), null, 2)}\n`);
  return file;
}
