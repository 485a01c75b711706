// RSS over time of both servers under mixed load: the shipped CLI (dist/) runs
// `iac-code a2a` (scripted model streaming text) and `iac-code agui` in front of
// it; loops of AG-UI runs, A2A JSON-RPC SendMessage / SendStreamingMessage /
// GetTask / ListTasks and REST ListTasks hit them for a bounded time. Every
// second the RSS of each process is sampled from /proc; the table, the
// first/peak/last figures and the growth over the second half (flat = small)
// are printed. Loopback only, bounded in time.
//
//   npm run build && npx tsx scripts/bench/rss-under-load.ts [--seconds 30] [--concurrency 8] [--node-options "--max-old-space-size=96"]
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "bin", "iac-code.mjs");
const argValue = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const SECONDS = Number(argValue("seconds") ?? 30);
const CONCURRENCY = Number(argValue("concurrency") ?? 8);
const NODE_OPTIONS = argValue("node-options");
const TOKEN = "rss-bench-token";

const dir = mkdtempSync(path.join(os.tmpdir(), "rss-bench-"));
const workspace = path.join(dir, "workspace");
const script = path.join(dir, "script.yaml");
writeFileSync(
  script,
  [
    "version: 1",
    "model: rss-bench",
    "defaults: { chunkSize: 16 }",
    "rules:",
    "  - when: {}",
    `    reply: [{ text: ${JSON.stringify("a streamed answer of some length, split in chunks. ".repeat(8))} }]`,
    "",
  ].join("\n"),
);

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

function start(args: string[], env: NodeJS.ProcessEnv): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env, ...(NODE_OPTIONS ? { NODE_OPTIONS } : {}) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (match) resolve({ proc, url: match[1] });
    };
    proc.stdout.on("data", onData);
    proc.stderr.on("data", onData);
    proc.once("exit", (code) => reject(new Error(`${args[0]} exited ${code}: ${out}`)));
  });
}

const counts: Record<string, number> = {};
const failures: Record<string, number> = {};
async function loop(name: string, until: number, call: (i: number) => Promise<Response>): Promise<void> {
  for (let i = 0; Date.now() < until; i++) {
    try {
      const res = await call(i);
      await res.text();
      if (res.ok) counts[name] = (counts[name] ?? 0) + 1;
      else failures[name] = (failures[name] ?? 0) + 1;
    } catch {
      failures[name] = (failures[name] ?? 0) + 1;
    }
  }
}

async function main(): Promise<void> {
  const { mkdirSync } = await import("node:fs");
  mkdirSync(workspace, { recursive: true });
  const env = {
    IAC_CODE_CONFIG_DIR: path.join(dir, "cfg"),
    IACCODE_A2A_HTTP_TOKEN: TOKEN,
    IACCODE_A2A_ALLOWED_CWDS: dir,
    IAC_CODE_AGUI_ALLOWED_CWDS: dir,
  };
  delete process.env.IAC_CODE_FROM_SOURCE;
  const config = path.join(dir, "a2a-server.yml");
  writeFileSync(
    config,
    `port: 0\nprovider: scripted\nscript: ${script}\npersistence-dir: ${path.join(dir, "a2a")}\n`,
  );
  const a2a = await start(["a2a", "--config", config], env);
  const agui = await start(["agui", "--port", "0", "--a2a-url", a2a.url], {
    ...env,
    IAC_CODE_AGUI_A2A_TOKEN: TOKEN,
  });
  const rpcHeaders = {
    "Content-Type": "application/json",
    "A2A-Version": "1.0",
    Authorization: `Bearer ${TOKEN}`,
  };
  const message = (i: number) => ({
    messageId: `m-${i}-${Math.random()}`,
    role: "ROLE_USER",
    parts: [{ text: `hello ${i}` }],
    metadata: { iac_code: { cwd: workspace } },
  });
  const rpc = (method: string, params: unknown) =>
    fetch(a2a.url, {
      method: "POST",
      headers: rpcHeaders,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
  let lastTask = "";
  const until = Date.now() + SECONDS * 1000;
  const samples: Array<{ t: number; a2a: number; agui: number }> = [];
  const t0 = Date.now();
  const sampler = setInterval(() => {
    samples.push({
      t: Math.round((Date.now() - t0) / 1000),
      a2a: rssMiB(a2a.proc.pid!),
      agui: rssMiB(agui.proc.pid!),
    });
  }, 1000);
  samples.push({ t: 0, a2a: rssMiB(a2a.proc.pid!), agui: rssMiB(agui.proc.pid!) });
  const loops: Array<Promise<void>> = [];
  for (let c = 0; c < CONCURRENCY; c++) {
    loops.push(
      loop("agui run", until, (i) =>
        fetch(agui.url, {
          method: "POST",
          headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
          body: JSON.stringify({
            threadId: `thread-${c}-${i}`,
            runId: "run-1",
            state: {},
            tools: [],
            context: [],
            messages: [{ id: "u1", role: "user", content: "hello" }],
            forwardedProps: {
              iacCode: { schemaVersion: 1, rosInvocationId: `inv-${c}-${i}`, cwd: workspace },
            },
          }),
        }),
      ),
      loop("a2a SendMessage", until, async (i) => {
        const res = await rpc("SendMessage", { message: message(i) });
        const body = (await res.clone().json()) as { result?: { task?: { id: string } } };
        if (body.result?.task?.id) lastTask = body.result.task.id;
        return res;
      }),
      loop("a2a SendStreamingMessage", until, (i) => rpc("SendStreamingMessage", { message: message(i) })),
    );
  }
  // Reads on one connection each: ListTasks scans every stored task, so more would measure that alone.
  loops.push(
    loop("a2a GetTask + ListTasks", until, (i) =>
      i % 2 === 0 && lastTask ? rpc("GetTask", { id: lastTask }) : rpc("ListTasks", { pageSize: 50 }),
    ),
    loop("rest ListTasks", until, () => fetch(`${a2a.url}tasks?pageSize=20`, { headers: rpcHeaders })),
  );
  await Promise.all(loops);
  clearInterval(sampler);
  samples.push({
    t: Math.round((Date.now() - t0) / 1000),
    a2a: rssMiB(a2a.proc.pid!),
    agui: rssMiB(agui.proc.pid!),
  });
  for (const p of [agui.proc, a2a.proc]) p.kill("SIGTERM");
  await Promise.all([agui.proc, a2a.proc].map((p) => new Promise((r) => p.once("exit", r))));
  rmSync(dir, { recursive: true, force: true });

  console.log(
    `RSS (MiB) under ${SECONDS} s of mixed load, ${CONCURRENCY} connections per write loop${NODE_OPTIONS ? `, NODE_OPTIONS=${NODE_OPTIONS}` : ""}`,
  );
  console.log("  t(s)   a2a    agui");
  for (const s of samples)
    console.log(
      `  ${String(s.t).padStart(4)} ${s.a2a.toFixed(0).padStart(6)} ${s.agui.toFixed(0).padStart(7)}`,
    );
  const half = samples.slice(Math.floor(samples.length / 2));
  for (const which of ["a2a", "agui"] as const) {
    const values = samples.map((s) => s[which]);
    const growth = half.at(-1)![which] - half[0][which];
    console.log(
      `${which}: start ${values[0].toFixed(0)}, peak ${Math.max(...values).toFixed(0)}, end ${values.at(-1)!.toFixed(0)} MiB; second half ${growth >= 0 ? "+" : ""}${growth.toFixed(0)} MiB (${((growth / half[0][which]) * 100).toFixed(0)} %)`,
    );
  }
  console.log("requests:", JSON.stringify(counts), "failed:", JSON.stringify(failures));
}

await main();
