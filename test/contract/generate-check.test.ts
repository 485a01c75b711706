// The drift check must catch a hand edit in generated/ and name the file.
import { spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";

const ROOT = path.resolve(import.meta.dirname, "../..");

function generate(...args: string[]) {
  const result = spawnSync(process.execPath, ["--import=tsx", "scripts/generate.ts", ...args], {
    cwd: ROOT,
    encoding: "utf8",
  });
  return { status: result.status, output: result.stdout + result.stderr };
}

describe("npm run generate -- --check", function () {
  this.timeout(120_000);
  let target: string;

  before(() => {
    mkdirSync(path.join(ROOT, ".tmp"), { recursive: true });
    target = path.join(mkdtempSync(path.join(ROOT, ".tmp", "drift-test-")), "generated");
  });
  after(() => rmSync(path.dirname(target), { recursive: true, force: true }));

  it("passes on a freshly generated tree, then fails naming a hand-edited file", () => {
    const written = generate("--target", target);
    expect(written.status, written.output).to.equal(0);

    const clean = generate("--check", "--target", target);
    expect(clean.status, clean.output).to.equal(0);
    expect(clean.output).to.contain("matches the sources");

    appendFileSync(path.join(target, "types.ts"), "// hand edit\n");
    const drift = generate("--check", "--target", target);
    expect(drift.status).to.equal(1);
    expect(drift.output).to.contain("types.ts");
    expect(drift.output).to.contain("stale");
  });

  it("reports files that the sources no longer produce", () => {
    appendFileSync(path.join(target, "leftover.ts"), "export {};\n");
    const drift = generate("--check", "--target", target);
    expect(drift.status).to.equal(1);
    expect(drift.output).to.contain("leftover.ts");
  });
});
