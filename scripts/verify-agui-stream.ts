// Verifies captured AG-UI SSE streams with the strict thread verifier
// (scripts/lib/agui-stream-verifier.ts): `npx tsx scripts/verify-agui-stream.ts run1.sse run2.sse …`
// (or `-` for standard input). Give the runs of a thread in the order they
// ran: several files, or one file with the responses one after the other (e.g.
// each `curl -N … >> thread.sse`). Prints one line per violation and exits 1 if
// there is any, else prints a summary and exits 0.
import { readFileSync } from "node:fs";
import { parseSse, splitRuns, ThreadStreamVerifier } from "./lib/agui-stream-verifier.js";

function main(args: string[]): number {
  if (args.length === 0 || args.includes("--help") || args.includes("-h")) {
    process.stdout.write(
      "usage: tsx scripts/verify-agui-stream.ts <capture.sse|-> …\n" +
        "Checks the runs of each thread, in order: RUN_STARTED first, nothing after RUN_FINISHED/RUN_ERROR,\n" +
        "START before CONTENT/ARGS/END/RESULT, each tool call started once and ended, message ids unique\n" +
        "per thread across runs, steps balanced, pipeline events (iac-code.pipeline.v1) shown once.\n",
    );
    return args.length === 0 ? 2 : 0;
  }
  const threads = new Map<string, ThreadStreamVerifier>();
  let runs = 0;
  let events = 0;
  let problems = 0;
  for (const file of args) {
    const text = readFileSync(file === "-" ? 0 : file, "utf8");
    let parsed;
    try {
      parsed = parseSse(text);
    } catch (error) {
      process.stdout.write(`${file}: not an SSE stream of JSON events (${(error as Error).message})\n`);
      problems++;
      continue;
    }
    for (const run of splitRuns(parsed)) {
      const key = run.threadId ?? "";
      let verifier = threads.get(key);
      if (!verifier) threads.set(key, (verifier = new ThreadStreamVerifier(run.threadId)));
      runs++;
      events += run.events.length;
      for (const v of verifier.run(run.events)) {
        problems++;
        const where = `${file}: thread ${run.threadId ?? "?"} run ${v.runId ?? "?"}`;
        process.stdout.write(`${where} event ${v.index < 0 ? "-" : v.index}: ${v.message}\n`);
      }
    }
  }
  if (problems) return 1;
  process.stdout.write(`ok: ${threads.size} thread(s), ${runs} run(s), ${events} event(s)\n`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
