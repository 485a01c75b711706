// The house plan, kept: src/ has no import cycle, src/server (the bottom layer)
// imports nothing from the rooms above it, and no hand-written module grows past
// the size a reader can hold. The per-folder arrows are eslint's
// no-restricted-imports (eslint.config.js); this test reads the whole graph.
import { expect } from "chai";
import { importCycles, readGraph } from "./import-graph.js";

const MAX_LINES = 450;

describe("house plan (the import graph of src/)", () => {
  const graph = readGraph();

  it("reads the graph it checks (every room, relative imports resolved)", () => {
    const rooms = new Set([...graph.keys()].map((p) => p.split("/")[0]));
    for (const room of ["a2a", "agui", "runtime", "server", "cli", "contract"])
      expect(rooms).to.include(room);
    const importers = graph.get("agui/run/run.ts")?.imports ?? [];
    expect(importers).to.include("agui/run/run-state.ts");
  });

  it("has no import cycle", () => {
    expect(importCycles(graph)).to.deep.equal([]);
  });

  it("keeps src/server the bottom layer: nothing from a2a, agui, runtime or cli", () => {
    const upward = [...graph.values()].flatMap((m) =>
      m.path.startsWith("server/")
        ? m.imports.filter((i) => /^(a2a|agui|runtime|cli)\//.test(i)).map((i) => `${m.path} -> ${i}`)
        : [],
    );
    expect(upward).to.deep.equal([]);
  });

  it(`has no module over ${MAX_LINES} lines`, () => {
    const big = [...graph.values()].filter((m) => m.lines > MAX_LINES).map((m) => `${m.path} (${m.lines})`);
    expect(big).to.deep.equal([]);
  });
});
