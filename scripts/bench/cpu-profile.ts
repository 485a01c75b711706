// Reading a V8 CPU profile (.cpuprofile, written by node --cpu-prof) for the
// product benchmark: the busy time of a window, split four ways
//   - by function, self time (the frame on top of the stack);
//   - by module, self time (iac-code files as src/…, packages as npm:<name>,
//     node's own as node:…, V8's as (garbage collector), (program), …);
//   - by iac-code module, "own": each sample goes to the deepest iac-code frame
//     on its stack, so the node, library and native work a module calls counts
//     as that module's (fs calls as the session store's, JSON as the codec's);
//   - by iac-code module and directory, inclusive: each sample counts once for
//     every module on its stack (what a module and everything under it cost).
// Runs on its own too: npx tsx scripts/bench/cpu-profile.ts <file.cpuprofile> [top]
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
  ms: number;
}

export interface ProfileReport {
  /** Sampled time in the window (ms), and the part of it that was not idle. */
  windowMs: number;
  busyMs: number;
  byFunction: Share[];
  byModule: Share[];
  byOwnModule: Share[];
  inclusiveModule: Share[];
  inclusiveDirectory: Share[];
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

const isOurs = (module: string) => module.startsWith("src/") || module.startsWith("generated/");

function top(map: Map<string, number>, n: number): Share[] {
  return [...map]
    .map(([name, us]) => ({ name, ms: us / 1000 }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, n);
}

const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);

/** The report of the samples taken between fromUs and toUs (profile clock; default: all). */
export function analyseProfile(
  profile: CpuProfile,
  window: { fromUs?: number; toUs?: number } = {},
  n = 15,
): ProfileReport {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  const byFunction = new Map<string, number>();
  const byModule = new Map<string, number>();
  const byOwnModule = new Map<string, number>();
  const inclusiveModule = new Map<string, number>();
  const inclusiveDirectory = new Map<string, number>();
  let windowUs = 0;
  let busyUs = 0;
  let at = profile.startTime;
  const from = window.fromUs ?? -Infinity;
  const to = window.toUs ?? Infinity;
  for (let i = 0; i < profile.samples.length; i += 1) {
    at += profile.timeDeltas[i];
    if (at < from || at > to) continue;
    // A sample stands for the time until the next one.
    const us = profile.timeDeltas[i + 1] ?? 0;
    windowUs += us;
    const leaf = byId.get(profile.samples[i])!;
    if (IDLE.has(leaf.callFrame.functionName)) continue;
    busyUs += us;
    const leafModule = moduleOf(leaf.callFrame);
    const line = leaf.callFrame.url ? `:${leaf.callFrame.lineNumber + 1}` : "";
    add(byFunction, `${leaf.callFrame.functionName || "(anonymous)"}  ${leafModule}${line}`, us);
    add(byModule, leafModule, us);
    let own: string | undefined;
    const modules = new Set<string>();
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const module = moduleOf(byId.get(id)!.callFrame);
      if (!isOurs(module)) continue;
      own ??= module;
      modules.add(module);
    }
    add(byOwnModule, own ?? `(no iac-code frame) ${leafModule}`, us);
    for (const module of modules) add(inclusiveModule, module, us);
    for (const dir of new Set([...modules].map((m) => path.dirname(m))))
      add(inclusiveDirectory, `${dir}/`, us);
  }
  return {
    windowMs: windowUs / 1000,
    busyMs: busyUs / 1000,
    byFunction: top(byFunction, n),
    byModule: top(byModule, n),
    byOwnModule: top(byOwnModule, n),
    inclusiveModule: top(inclusiveModule, n),
    inclusiveDirectory: top(inclusiveDirectory, n),
  };
}

/** The report as text; `per` divides the times (e.g. per request: "us/request" with the request count). */
export function formatReport(report: ProfileReport, per?: { count: number; unit: string }): string {
  const lines = [
    `sampled ${report.windowMs.toFixed(0)} ms, busy (not idle) ${report.busyMs.toFixed(0)} ms` +
      (per ? ` = ${((report.busyMs * 1000) / per.count).toFixed(0)} ${per.unit}` : ""),
  ];
  const table = (title: string, shares: Share[]) => {
    lines.push(`  ${title}`);
    for (const s of shares) {
      const each = per ? `${((s.ms * 1000) / per.count).toFixed(1).padStart(7)} ${per.unit}  ` : "";
      lines.push(
        `    ${s.ms.toFixed(0).padStart(6)} ms ${((100 * s.ms) / report.busyMs).toFixed(1).padStart(5)}%  ${each}${s.name}`,
      );
    }
  };
  table("by function, self time:", report.byFunction);
  table("by module, self time:", report.byModule);
  table("by iac-code module, own (deepest iac-code frame; what it calls included):", report.byOwnModule);
  table("by iac-code module, inclusive:", report.inclusiveModule);
  table("by iac-code directory, inclusive:", report.inclusiveDirectory);
  return lines.join("\n");
}

if (import.meta.filename === process.argv[1] || import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2];
  if (!file) throw new Error("usage: cpu-profile.ts <file.cpuprofile> [top]");
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  console.log(formatReport(analyseProfile(profile, {}, Number(process.argv[3] ?? 15))));
}
