// Runs `a2a-client` in this process (the same command object the CLI
// registers, with captured output) or as the real `iac-code` process, and
// starts our A2A server with the real runtime on the client test script.
import { spawn } from "node:child_process";
import { expect } from "chai";
import path from "node:path";
import { Readable } from "node:stream";
import { runA2aClient } from "../../src/cli/a2a-client/program.js";
import { BIN, cleanEnv, startE2eServer, type E2eServer } from "../e2e/helpers.js";

export const CLIENT_SCRIPT = path.resolve(import.meta.dirname, "fixtures", "client-script.yaml");

export interface ClientRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** `a2a-client <args>` in-process: not a terminal, empty stdin. */
export async function runClient(args: string[], options: RunOptions = {}): Promise<ClientRun> {
  let stdout = "";
  let stderr = "";
  const code = await runA2aClient(args, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: Readable.from([]),
    env: options.env ?? {},
    cwd: () => options.cwd ?? process.cwd(),
  });
  return { code, stdout, stderr };
}

/** The JSON documents of a run's stdout, one per line. */
export function jsonLines(text: string): Array<Record<string, unknown>> {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** `iac-code a2a-client <args>` as a child process with stdin piped from `input`. */
export function runCliProcess(
  args: string[],
  options: RunOptions & { input?: string } = {},
): Promise<ClientRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, "a2a-client", ...args], {
      env: options.env ?? cleanEnv(process.env.HOME ?? "/tmp"),
      cwd: options.cwd,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(options.input ?? "");
  });
}

/** Our A2A server (in this process) with the real runtime replaying the client test script. */
export function startOurServer(file: Record<string, unknown> = {}): Promise<E2eServer> {
  return startE2eServer({ script: CLIENT_SCRIPT, file });
}

/** A run that succeeded quietly. */
export function ok(run: ClientRun): ClientRun {
  expect(run.stderr, run.stderr).to.equal("");
  expect(run.code, run.stdout).to.equal(0);
  return run;
}

/** Polls task-list until the server lists a task in TASK_STATE_WORKING; returns its id. */
export async function workingTask(connection: string[]): Promise<string> {
  for (let i = 0; i < 200; i += 1) {
    const list = ok(await runClient(["task-list", ...connection, "--status", "working", "--output", "json"]));
    const tasks = (JSON.parse(list.stdout) as { tasks: Array<{ id: string }> }).tasks;
    if (tasks.length > 0) return tasks[0].id;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("no working task appeared");
}
