// The import graph of src/, read from the sources: which hand-written module imports which.
// Only relative imports count (packages are outside the house); `import type` counts too,
// because a type-only arrow still says which room knows about which.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export const SRC = resolve(import.meta.dirname, "../../src");

export interface ModuleInfo {
  /** Path relative to src/, with forward slashes. */
  path: string;
  lines: number;
  imports: string[];
}

const IMPORT_RE =
  /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["'](\.{1,2}\/[^"']+)["']|import\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;

function listTs(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return listTs(full);
    return name.endsWith(".ts") ? [full] : [];
  });
}

export function readGraph(root = SRC): Map<string, ModuleInfo> {
  const graph = new Map<string, ModuleInfo>();
  for (const file of listTs(root)) {
    const text = readFileSync(file, "utf8");
    const imports: string[] = [];
    for (const m of text.matchAll(IMPORT_RE)) {
      const spec = m[1] ?? m[2];
      const target = resolve(dirname(file), spec.replace(/\.js$/, ".ts"));
      if (target.startsWith(root)) imports.push(relative(root, target).split("\\").join("/"));
    }
    const path = relative(root, file).split("\\").join("/");
    graph.set(path, { path, lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0), imports });
  }
  return graph;
}

/** The strongly connected components with more than one module (Tarjan), each sorted. */
export function importCycles(graph: Map<string, ModuleInfo>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.imports ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) cycles.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return cycles;
}
