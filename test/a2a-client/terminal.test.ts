// The real `iac-code a2a-client` process. On a terminal (a pseudo-terminal
// from util-linux `script`): streamed text, tool lines, the spinner with its
// elapsed time, and the interactive permission / question prompt that sends the
// answer and keeps going. On pipes: the input request as JSON with exit code 3,
// continued by `answer` from a shell script.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { EXIT } from "../../src/a2a/client/errors.js";
import { BIN, cleanEnv, removeDir, type E2eServer } from "../e2e/helpers.js";
import { startOurServer } from "./harness.js";

const quote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

interface Terminal {
  /** Everything the terminal showed so far. */
  screen(): string;
  /** Resolves once the screen shows `text` (after `from`, an offset into the screen). */
  waitFor(text: string | RegExp, from?: number): Promise<number>;
  type(keys: string): void;
  exit: Promise<number>;
}

/** Runs `iac-code a2a-client <args>` on a pseudo-terminal. */
function onTerminal(args: string[], env: NodeJS.ProcessEnv, cwd: string): Terminal {
  const command = [process.execPath, BIN, "a2a-client", ...args].map(quote).join(" ");
  const child = spawn("script", ["-qfec", command, "/dev/null"], { env: { ...env, TERM: "xterm" }, cwd });
  let screen = "";
  const waiters: Array<() => void> = [];
  child.stdout.on("data", (d: Buffer) => {
    screen += d.toString();
    waiters.splice(0).forEach((wake) => wake());
  });
  child.stderr.on("data", (d: Buffer) => (screen += d.toString()));
  const exit = new Promise<number>((resolve) => child.on("close", (code) => resolve(code ?? -1)));
  return {
    screen: () => screen,
    async waitFor(text, from = 0) {
      for (;;) {
        const rest = screen.slice(from);
        const at = typeof text === "string" ? rest.indexOf(text) : rest.search(text);
        if (at >= 0) return from + at;
        const more = new Promise<void>((resolve) => waiters.push(resolve));
        const ended = exit.then(() => {
          throw new Error(`the terminal closed before showing ${String(text)}:\n${screen}`);
        });
        await Promise.race([more, ended]);
      }
    },
    type: (keys) => child.stdin.write(keys),
    exit,
  };
}

describe("a2a-client on a terminal and on pipes (real process)", function () {
  this.timeout(90_000);
  let s: E2eServer;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    s = await startOurServer({ token: "tty-token" });
    env = cleanEnv(s.dir);
  });
  after(async () => {
    await s.close();
    removeDir(s.dir);
  });
  const base = () => ["--url", s.url, "--token", "tty-token", "--cwd", s.workspace];

  it("streams text, shows the spinner and the permission prompt; allow once writes and the turn goes on", async () => {
    const tty = onTerminal(["call", ...base(), "--stream", "-p", "[WRITE] allow it"], env, s.workspace);
    const prompt = await tty.waitFor("Answer [1-3]: ");
    const shown = tty.screen();
    expect(shown).to.include("Writing note.txt.");
    expect(shown).to.match(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] \S+ \d+\.\ds/);
    expect(shown).to.include("? Write note.txt. Allow once?");
    expect(shown).to.include("write_file · file_change · note.txt");
    expect(shown).to.match(/1\) Allow once\s+2\) Allow for this session\s+3\) Deny/);
    tty.type("1\r");
    await tty.waitFor("WROTE-IT", prompt);
    expect(await tty.exit).to.equal(EXIT.ok);
    expect(tty.screen().slice(prompt)).to.include("✓ write_file");
    // The final answer repeats the streamed text: it is shown once.
    expect(tty.screen().split("WROTE-IT")).to.have.length(2);
    expect(readFileSync(path.join(s.workspace, "note.txt"), "utf8")).to.equal("hello\n");
  });

  it("asks again after an answer that is not an option; deny over a unary call", async () => {
    const tty = onTerminal(["call", ...base(), "-p", "[WRITE] deny it"], env, s.workspace);
    const prompt = await tty.waitFor("Answer [1-3]: ");
    tty.type("maybe\r");
    const retry = await tty.waitFor("Please choose one of the options.", prompt);
    await tty.waitFor("Answer [1-3]: ", retry);
    tty.type("deny\r");
    await tty.waitFor("DENIED-IT", retry);
    expect(await tty.exit).to.equal(EXIT.ok);
  });

  it("answers a question with free text", async () => {
    const tty = onTerminal(["call", ...base(), "--stream", "-p", "[ASK] colour"], env, s.workspace);
    const prompt = await tty.waitFor("Answer [1-2]: ");
    expect(tty.screen()).to.include("? Which colour?").and.include("1) Red").and.include("2) Blue");
    tty.type("teal\r");
    await tty.waitFor("FREE-TEXT-TEAL", prompt);
    expect(await tty.exit).to.equal(EXIT.ok);
  });

  it("end of input at the prompt leaves the request open: JSON, the answer command, exit 3", async () => {
    const tty = onTerminal(["call", ...base(), "--stream", "-p", "[WRITE] later"], env, s.workspace);
    await tty.waitFor("Answer [1-3]: ");
    tty.type("\x04");
    expect(await tty.exit).to.equal(EXIT.inputRequired);
    expect(tty.screen()).to.match(
      /Continue with: iac-code a2a-client answer --url \S+ --task-id \S+ --input-id permission-[0-9a-f]+ --decision <allow_once\|allow_always\|deny>/,
    );
  });

  it("on pipes: call exits 3 with the request as JSON, and a shell script answers it", async () => {
    const script = `
      set -u
      out=$("$NODE" "$BIN" a2a-client call $CONN --cwd "$WS" -p '[WRITE] scripted' --stream)
      code=$?
      [ "$code" -eq 3 ] || { echo "call exited $code"; exit 1; }
      ids=$(printf '%s\\n' "$out" | tail -n 1 | "$NODE" -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);console.log(r.requestTaskId+" "+r.inputId)})')
      set -- $ids
      "$NODE" "$BIN" a2a-client answer $CONN --task-id "$1" --input-id "$2" --decision allow_once --stream
    `;
    const child = spawn("sh", ["-c", script], {
      env: {
        ...env,
        NODE: process.execPath,
        BIN,
        WS: s.workspace,
        CONN: `--url ${s.url} --token tty-token`,
      },
      cwd: s.workspace,
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? -1)));
    expect(code, out).to.equal(0);
    // Plain lines on a pipe: no prompt, no spinner, no terminal escapes.
    expect(out).to.not.include("Answer [");
    expect(out).to.not.include("\x1b[");
    expect(out).to.include("WROTE-IT: note.txt is in your workspace.");
    expect(existsSync(path.join(s.workspace, "note.txt"))).to.equal(true);
  });

  it("is registered in iac-code: --help lists the exit codes", async () => {
    const child = spawn(process.execPath, [BIN, "a2a-client", "--help"], { env });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? -1)));
    expect(code).to.equal(0);
    expect(out).to.include("Usage: iac-code a2a-client").and.include("Exit codes:");
  });
});
