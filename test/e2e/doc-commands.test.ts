// Docs that run: every command block of README.md and docs/*.md
// (scripts/lib/doc-blocks.ts) is run here with bash, in document order, or is
// marked `<!-- not-run: why -->`. What the blocks get, as a user would have it
// after `npm start`: `iac-code serve` (the first block's server) running on a
// free port, in a stand-in for the source checkout (a directory with the
// checkout's bin/, so `node bin/iac-code.mjs` works); HOME and
// IAC_CODE_CONFIG_DIR in a temp dir; the documented ports (8000, 41242) swapped
// for free ones and /tmp/ for the test's temp dir. A line ending in `&` with a
// `--port N` is followed by a wait until N accepts connections. Each block
// must end with its documented exit status (0 unless `<!-- exit: N -->`) and
// print each `<!-- expect: … -->` fragment. Background servers a block starts
// are stopped with its process group at the end; nothing may appear in the
// checkout stand-in but what the blocks write there on purpose.
import { expect } from "chai";
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { commandBlocks, type DocBlock } from "../../scripts/lib/doc-blocks.js";
import { cleanEnv, removeDir, startCli, tempDir, type CliChild } from "./helpers.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const DOCS = ["README.md", ...readdirSync(path.join(ROOT, "docs")).map((f) => `docs/${f}`)].filter((f) =>
  f.endsWith(".md"),
);
/** What the blocks may leave in the checkout on purpose (the contract examples write there). */
const WRITTEN_ON_PURPOSE = ["bin", "iac-code-contracts", "request.json"];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The block as run: ports and /tmp/ swapped, a wait after each backgrounded server. */
function prepared(code: string, ports: Map<string, number>, tmp: string): string {
  let out = code.replace(/(?<![\w/])\/tmp\//g, `${tmp}/`);
  for (const [documented, free] of ports)
    out = out.replace(new RegExp(`\\b${documented}\\b`, "g"), String(free));
  return out
    .split("\n")
    .flatMap((line) => {
      const port = /&\s*(#.*)?$/.test(line) ? /--port (\d+)/.exec(line)?.[1] : undefined;
      if (!port) return [line];
      const wait = `for i in $(seq 600); do (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && break; sleep 0.1; done`;
      return [line, wait];
    })
    .join("\n");
}

interface Ran {
  code: number | null;
  output: string;
  pid: number;
}

/** Runs the script with bash -e in its own process group; output to a file (background jobs keep writing there). */
function runBlock(script: string, cwd: string, env: NodeJS.ProcessEnv, outFile: string): Promise<Ran> {
  const fd = openSync(outFile, "w");
  const child = spawn("bash", ["-e", "-c", script], { cwd, env, detached: true, stdio: ["ignore", fd, fd] });
  closeSync(fd);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.kill(-child.pid!, "SIGKILL");
      reject(new Error(`timed out after 60 s: ${readFileSync(outFile, "utf8").slice(-2000)}`));
    }, 60_000);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output: readFileSync(outFile, "utf8"), pid: child.pid! });
    });
  });
}

const where = (block: DocBlock) => `${block.file}:${block.line}`;

describe("docs that run: the command blocks of README.md and docs/*.md", function () {
  this.timeout(180_000);
  let dir: string;
  let checkout: string;
  let env: NodeJS.ProcessEnv;
  let serve: CliChild | undefined;
  const groups: number[] = [];
  const blocks = DOCS.flatMap((file) => commandBlocks(readFileSync(path.join(ROOT, file), "utf8"), file));

  before(() => {
    dir = tempDir("iac-docs-");
    checkout = path.join(dir, "checkout");
    mkdirSync(checkout);
    symlinkSync(path.join(ROOT, "bin"), path.join(checkout, "bin"));
    mkdirSync(path.join(dir, "home"));
    env = cleanEnv(path.join(dir, "home"), {
      IAC_CODE_CONFIG_DIR: path.join(dir, "config"),
      // The CLI from the sources, as the other tests run it (no build needed).
      IAC_CODE_FROM_SOURCE: "1",
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`,
    });
  });
  after(async () => {
    for (const pgid of groups) {
      try {
        process.kill(-pgid, "SIGTERM");
      } catch {
        // The group is gone already.
      }
    }
    await serve?.stop();
    await new Promise((r) => setTimeout(r, 1500));
    if (dir) removeDir(dir);
  });

  it("reads the markers: not-run above a fence, expect and exit below it; text blocks are not commands", () => {
    const doc = [
      "<!-- not-run: needs protoc -->",
      "",
      "```sh",
      "protoc --version",
      "```",
      "```text",
      "a listing",
      "```",
      "```",
      "echo hi",
      "```",
      "",
      "<!-- expect: hi -->",
      "<!-- exit: 3 on a pipe -->",
      "```console",
      "$ echo a \\",
      "  b",
      "a b",
      "```",
      "Prose.",
    ].join("\n");
    const found = commandBlocks(doc, "x.md");
    expect(found.map((b) => [b.line, b.language, b.code, b.notRun, b.expect, b.exit])).to.deep.equal([
      [3, "sh", "protoc --version", "needs protoc", [], 0],
      [9, "", "echo hi", undefined, ["hi"], 3],
      [15, "console", "echo a \\\n  b", undefined, [], 0],
    ]);
  });

  it("finds the blocks, and every block not run says why", () => {
    expect(blocks.filter((b) => b.notRun === undefined).length).to.be.greaterThan(5);
    for (const block of blocks)
      if (block.notRun !== undefined) expect(block.notRun, where(block)).to.not.equal("");
  });

  it("runs every other block: its exit status and the output the doc shows", async () => {
    const ports = new Map([
      ["8000", await freePort()],
      ["41242", await freePort()],
    ]);
    // The server of `npm start` (the first block, not run as written: it would install and block).
    serve = await startCli(["serve", "--port", String(ports.get("8000"))], env, checkout);
    const failures: string[] = [];
    let n = 0;
    for (const block of blocks.filter((b) => b.notRun === undefined)) {
      const script = prepared(block.code, ports, dir);
      const ran = await runBlock(script, checkout, env, path.join(dir, `block-${++n}.out`));
      groups.push(ran.pid);
      const problems = [
        ...(ran.code === block.exit ? [] : [`exit ${String(ran.code)}, expected ${block.exit}`]),
        ...block.expect
          .filter((fragment) => !ran.output.includes(fragment))
          .map((f) => `no ${JSON.stringify(f)}`),
      ];
      if (problems.length > 0)
        failures.push(
          `${where(block)}: ${problems.join("; ")}\n${script}\n--- output ---\n${ran.output.slice(-1500)}`,
        );
    }
    expect(failures.length, failures.join("\n\n")).to.equal(0);
    // The demo wrote its file into the workspace the README names, never into the checkout.
    expect(readdirSync(checkout).filter((f) => !WRITTEN_ON_PURPOSE.includes(f))).to.deep.equal([]);
  });
});
