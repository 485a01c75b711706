// Prints the measures of the house plan: import cycles in src/, arrows from src/server up
// into the rooms above it, hand-written files over the size limit, and the line count.
// Usage: npx tsx scripts/house-plan.ts
import { importCycles, readGraph } from "../test/architecture/import-graph.js";

const MAX_LINES = 450;
const graph = readGraph();
const modules = [...graph.values()];
const cycles = importCycles(graph);
const upward = modules.flatMap((m) =>
  m.path.startsWith("server/")
    ? m.imports.filter((i) => /^(a2a|agui|runtime|cli)\//.test(i)).map((i) => `${m.path} -> ${i}`)
    : [],
);
const big = modules.filter((m) => m.lines > MAX_LINES).sort((a, b) => b.lines - a.lines);

console.log(`src: ${modules.length} files, ${modules.reduce((n, m) => n + m.lines, 0)} lines`);
console.log(`import cycles: ${cycles.length}`);
for (const c of cycles) console.log(`  ${c.join("  ")}`);
console.log(`imports from src/server up into a2a/agui/runtime/cli: ${upward.length}`);
for (const u of upward) console.log(`  ${u}`);
console.log(`files over ${MAX_LINES} lines: ${big.length}`);
for (const m of big) console.log(`  ${m.lines}  ${m.path}`);
