// Reading a V8 CPU profile (.cpuprofile, written by node --cpu-prof) for the
// product benchmark: the busy samples of a window, split these ways
//   - by function, self time (the frame on top of the stack);
//   - by module, self time (iac-code files as src/…, packages as npm:<name>,
//     node's own as node:…, V8's as (garbage collector), (program), …);
//   - by iac-code module, "own": each sample goes to the deepest iac-code frame
//     on its stack, so the node, library and native work a module calls counts
//     as that module's (fs calls as the session store's, JSON as the codec's);
//   - by iac-code function, module and directory, inclusive: each sample counts
//     once for every one on its stack (what it and everything under it cost).
// Runs on its own too: npx tsx scripts/bench/cpu-profile.ts <file.cpuprofile> [top] [skip-ms]
// (skip-ms: leave out the profile's first milliseconds, e.g. a server's start-up).
import { readFileSync } from "node:fs";
import path from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  /** Microseconds on the monotonic clock (process.hrtime's, shared by processes on Linux). */
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Share {
  name: string;
  /** Samples (the profiler samples the main thread about every millisecond it runs). */
  samples: number;
}

type Table =
  "byFunction" | "byModule" | "byOwnModule" | "inclusiveFunction" | "inclusiveModule" | "inclusiveDirectory";

export interface ProfileReport extends Record<Table, Share[]> {
  /** Samples in the window, and those that were not idle (the main thread at work). */
  windowSamples: number;
  busySamples: number;
}

const ROOT = path.resolve(import.meta.dirname, "../..");
const IDLE = new Set(["(idle)"]);

/** The module a frame belongs to: src/… for iac-code (dist/src/x.js shown as src/x.ts), npm:<pkg>, node:…, or V8's name. */
export function moduleOf(frame: ProfileNode["callFrame"]): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  if (url.startsWith("node:")) return url;
  const file = url.startsWith("file://") ? decodeURIComponent(new URL(url).pathname) : url;
  const packages = file.lastIndexOf("/node_modules/");
  if (packages >= 0) {
    const parts = file.slice(packages + "/node_modules/".length).split("/");
    return `npm:${parts[0].startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]}`;
  }
  const relative = path.relative(ROOT, file).replace(/^dist\//, "");
  if (relative.startsWith("src/") || relative.startsWith("generated/"))
    return relative.replace(/\.js$/, ".ts");
  return relative.startsWith("..") ? file : relative;
}

/** A function as "name  file:line" (the file that ran: dist/….js lines are the compiled file's). */
function functionOf(frame: ProfileNode["callFrame"]): string {
  const name = frame.functionName || "(anonymous)";
  if (!frame.url) return `${name}  ${moduleOf(frame)}`;
  const file = frame.url.startsWith("file://") ? path.relative(ROOT, new URL(frame.url).pathname) : frame.url;
  const shown = file.includes("node_modules/") ? moduleOf(frame) : file;
  return `${name}  ${shown}:${frame.lineNumber + 1}`;
}

const isOurs = (module: string) => module.startsWith("src/") || module.startsWith("generated/");

function top(map: Map<string, number>, n: number): Share[] {
  return [...map]
    .map(([name, samples]) => ({ name, samples }))
    .sort((a, b) => b.samples - a.samples)
    .slice(0, n);
}

const add = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

/**
 * The report of the samples taken between fromUs and toUs (profile clock; default: all).
 * Samples are counted, not weighed by the wall time between them: on a busy machine that time
 * includes the main thread waiting for a core, which says nothing about the code.
 */
export function analyseProfile(
  profile: CpuProfile,
  window: { fromUs?: number; toUs?: number } = {},
  n = 15,
): ProfileReport {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  const maps = {
    byFunction: new Map<string, number>(),
    byModule: new Map<string, number>(),
    byOwnModule: new Map<string, number>(),
    inclusiveFunction: new Map<string, number>(),
    inclusiveModule: new Map<string, number>(),
    inclusiveDirectory: new Map<string, number>(),
  } satisfies Record<Table, Map<string, number>>;
  let windowSamples = 0;
  let busySamples = 0;
  let at = profile.startTime;
  const from = window.fromUs ?? -Infinity;
  const to = window.toUs ?? Infinity;
  for (let i = 0; i < profile.samples.length; i += 1) {
    at += profile.timeDeltas[i];
    if (at < from || at > to) continue;
    windowSamples += 1;
    const leaf = byId.get(profile.samples[i])!;
    if (IDLE.has(leaf.callFrame.functionName)) continue;
    busySamples += 1;
    const leafModule = moduleOf(leaf.callFrame);
    add(maps.byFunction, functionOf(leaf.callFrame));
    add(maps.byModule, leafModule);
    let own: string | undefined;
    const functions = new Set<string>();
    const modules = new Set<string>();
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)!.callFrame;
      const module = moduleOf(frame);
      if (!isOurs(module)) continue;
      own ??= module;
      modules.add(module);
      functions.add(functionOf(frame));
    }
    add(maps.byOwnModule, own ?? `(no iac-code frame) ${leafModule}`);
    for (const f of functions) add(maps.inclusiveFunction, f);
    for (const module of modules) add(maps.inclusiveModule, module);
    for (const dir of new Set([...modules].map((m) => path.dirname(m))))
      add(maps.inclusiveDirectory, `${dir}/`);
  }
  return {
    windowSamples,
    busySamples,
    byFunction: top(maps.byFunction, n),
    byModule: top(maps.byModule, n),
    byOwnModule: top(maps.byOwnModule, n),
    inclusiveFunction: top(maps.inclusiveFunction, n),
    inclusiveModule: top(maps.inclusiveModule, n),
    inclusiveDirectory: top(maps.inclusiveDirectory, n),
  };
}

export const TABLES: Array<[Table, string]> = [
  ["byFunction", "by function, self time"],
  ["byModule", "by module, self time"],
  ["byOwnModule", "by iac-code module, own (the deepest iac-code frame: what it calls included)"],
  ["inclusiveFunction", "by iac-code function, inclusive (synchronous parts: an await ends the stack)"],
  ["inclusiveModule", "by iac-code module, inclusive"],
  ["inclusiveDirectory", "by iac-code directory, inclusive"],
];

/**
 * The report as text. With `per`, each share is also turned into CPU per unit: its part of the
 * main thread's CPU time measured over the window (mainThreadUs), divided by count.
 */
export function formatReport(
  report: ProfileReport,
  per?: { count: number; unit: string; mainThreadUs: number },
): string {
  const usPerSample = per ? per.mainThreadUs / Math.max(1, report.busySamples) / per.count : 0;
  const lines = [
    `${report.windowSamples} samples, ${report.busySamples} busy (not idle)` +
      (per ? `; main thread CPU ${(per.mainThreadUs / per.count).toFixed(0)} ${per.unit}` : ""),
  ];
  for (const [table, title] of TABLES) {
    lines.push(`  ${title}:`);
    for (const s of report[table]) {
      const each = per ? `${(s.samples * usPerSample).toFixed(1).padStart(7)} ${per.unit}  ` : "";
      lines.push(
        `    ${String(s.samples).padStart(6)} ${((100 * s.samples) / report.busySamples).toFixed(1).padStart(5)}%  ${each}${s.name}`,
      );
    }
  }
  return lines.join("\n");
}

if (import.meta.filename === process.argv[1] || import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2];
  if (!file) throw new Error("usage: cpu-profile.ts <file.cpuprofile> [top] [skip-ms]");
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const fromUs = profile.startTime + Number(process.argv[4] ?? 0) * 1000;
  console.log(formatReport(analyseProfile(profile, { fromUs }, Number(process.argv[3] ?? 15))));
}
