// The A/B of the product benchmark: `iac-code a2a` started by its CLI exactly as
// a user starts it (bin/iac-code.mjs, same settings, logger, metrics, signals),
// with one difference: createAgentRuntime() hands back the benchmark's
// TrivialRuntime instead of the agent runtime. Preloaded with
// `node --import <this file, transpiled> bin/iac-code.mjs a2a …` (cli-peer.ts);
// it registers the resolve/load hooks of cli-trivial-runtime-hooks.ts, which
// serve the CLI a runtime module whose createAgentRuntime is this one. The CPU
// difference per turn between the two servers is the agent runtime's cost.
// src/ stays untouched: the hook matches the CLI's import of ../runtime/index.js.
import { register } from "node:module";
import { TrivialRuntime } from "./trivial-runtime.js";

/** Stands in for the runtime's createAgentRuntime (its options are ignored: there is no model). */
export function createAgentRuntime(): Promise<TrivialRuntime> {
  return Promise.resolve(new TrivialRuntime());
}

// Imported twice (as the preload and by the generated runtime module), evaluated once.
register("./cli-trivial-runtime-hooks.js", import.meta.url);
