// stdio:<command line>: spawns the command (no shell; quotes and backslashes
// group words) and speaks JSON-RPC lines on its stdin and stdout, calls
// matched by id; e.g. `stdio:iac-code a2a --transport stdio`. Its stderr is
// kept (the last few KiB) to explain an early exit. close() ends its stdin,
// which stops the server; a server that does not exit is terminated.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import type { JsonObject } from "@bufbuild/protobuf";
import { TransportError } from "./binding.js";
import { readReplyLine } from "../../transports/frames.js";
import { FramedChannel, jsonLines } from "./framed-channel.js";

const STDERR_KEPT = 4096;
const EXIT_WAIT_MS = 5000;

/** Splits a command line into words: whitespace separates, quotes group, a backslash escapes. */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === "\\" && quote === '"' && i + 1 < line.length) word += line[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= "";
    } else if (c === "\\" && i + 1 < line.length) {
      word = (word ?? "") + line[++i];
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? "") + c;
    }
  }
  if (quote) throw new TransportError(`Unclosed ${quote} in the stdio: command line.`);
  if (word !== undefined) words.push(word);
  return words;
}

export class StdioChannel extends FramedChannel {
  private readonly argv: string[];
  private child: ChildProcessWithoutNullStreams | undefined;
  private stderr = "";
  private exited: Promise<void> | undefined;

  constructor(url: string) {
    super(url);
    this.argv = splitCommandLine(url.replace(/^stdio:/i, ""));
    if (this.argv.length === 0)
      throw new TransportError("stdio: needs a command line, e.g. stdio:iac-code a2a --transport stdio");
  }

  private exitReason(code: number | null, signal: NodeJS.Signals | null): TransportError {
    const how = signal ? `signal ${signal}` : `code ${code}`;
    const tail = this.stderr.trim().split("\n").slice(-5).join("\n");
    return new TransportError(
      `The stdio server (${this.argv[0]}) exited with ${how}${tail ? `:\n${tail}` : "."}`,
    );
  }

  protected connect(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.argv[0], this.argv.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
      this.child = child;
      this.exited = new Promise((done) => child.once("close", () => done()));
      child.once("spawn", () => resolve());
      child.once("error", (error: NodeJS.ErrnoException) => {
        const failure = new TransportError(`Cannot start ${this.argv[0]}: ${error.code ?? error.message}`);
        reject(failure);
        this.lost(failure);
      });
      child.stdin.on("error", () => undefined);
      child.stderr.on("data", (chunk: Buffer) => {
        this.stderr = (this.stderr + chunk.toString("utf8")).slice(-STDERR_KEPT);
      });
      child.stdout.on(
        "data",
        jsonLines((value) => {
          const frame = readReplyLine(value);
          if (frame) this.deliver(frame.key, frame.payload, frame.final);
        }),
      );
      child.once("exit", (code, signal) => this.lost(this.exitReason(code, signal)));
    });
  }

  protected transmit(_key: string, body: JsonObject): Promise<void> {
    this.child?.stdin.write(`${JSON.stringify(body)}\n`);
    return Promise.resolve();
  }

  async close(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.stdin.end();
    const term = setTimeout(() => child.kill("SIGTERM"), EXIT_WAIT_MS);
    const kill = setTimeout(() => child.kill("SIGKILL"), 2 * EXIT_WAIT_MS);
    await this.exited;
    clearTimeout(term);
    clearTimeout(kill);
  }
}
