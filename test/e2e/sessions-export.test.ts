// `iac-code sessions export <contextId>` on what a real turn wrote (the A2A
// server and the runtime sharing one state store, as `iac-code a2a` runs
// them): the session's identity, then its conversation, usage and permission
// audit in order, no secret; the config dir holds no per-session file; an
// unknown context exits 2, a persistence dir a running server holds exits 1
// naming it, and with store: redis a running server's session exports.
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { startRedis, type TestRedis } from "../fixtures/redis-server.js";
import {
  answer,
  cleanEnv,
  iacOf,
  removeDir,
  sendUntilInput,
  sourceCliArgs,
  startE2eServer,
  startSourceCli,
  tempDir,
  SCRIPTS,
  type CliChild,
  type E2eServer,
} from "./helpers.js";

interface ExportLine {
  type: string;
  part?: string;
  log?: string;
  doc?: string;
  seq?: number;
  sessionId?: string;
  contextId?: string;
  meta?: Record<string, unknown>;
  value?: unknown;
}

function exportCli(args: string[], env: NodeJS.ProcessEnv) {
  const r = spawnSync(process.execPath, sourceCliArgs(["sessions", "export", ...args]), {
    env,
    encoding: "utf8",
  });
  const lines = r.stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ExportLine);
  return { status: r.status, lines, stderr: r.stderr };
}

/** Every file under a directory, as paths relative to it. */
function filesUnder(dir: string): string[] {
  return (
    readdirSync(dir, { recursive: true, withFileTypes: true }) as Array<{
      isFile(): boolean;
      parentPath: string;
      name: string;
    }>
  )
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

describe("iac-code sessions export", function () {
  this.timeout(60_000);
  let s: E2eServer | undefined;
  let dirs: string[] = [];
  afterEach(async () => {
    await s?.close();
    s = undefined;
    for (const dir of dirs) removeDir(dir);
    dirs = [];
  });

  it("exports what a turn wrote, in order; the config dir has no per-session file", async () => {
    s = await startE2eServer({ script: "e2e-a2a.yaml" });
    dirs.push(s.dir);
    const waiting = await sendUntilInput(s.url, "[WRITE] vpc.yaml", {
      metadata: { iac_code: { cwd: s.workspace, iac_code_api_key: "sk-export-secret-123456" } },
    });
    const events = await answer(s.url, waiting, "allow_once");
    const sessionId = iacOf(events.at(-1)!)!.iacCodeSessionId as string;
    const { persistDir, configDir, workspace } = s;
    await s.close();
    s = undefined;
    // Nothing per session beside the state database (the config dir holds no sessions/ at all).
    expect(
      filesUnder(configDir).filter((f) => f.includes(sessionId) || f.startsWith("sessions")),
    ).to.deep.equal([]);

    const env = cleanEnv(path.dirname(persistDir));
    const out = exportCli([waiting.contextId, "--persistence-dir", persistDir], env);
    expect(out.status, out.stderr).to.equal(0);
    const [head, ...rest] = out.lines;
    expect(head).to.deep.include({ type: "session", sessionId, contextId: waiting.contextId });
    expect(head.meta).to.include({ sessionId, contextId: waiting.contextId, cwd: realpathSync(workspace) });
    const logs = rest.filter((l) => l.type === "row").map((l) => l.log);
    // The conversation first, then usage, then the audit; each log's rows numbered from 1.
    expect([...new Set(logs)]).to.deep.equal(["conversation", "usage", "permission-audit"]);
    const conversation = rest.filter((l) => l.log === "conversation");
    expect(conversation.map((l) => l.seq)).to.deep.equal(conversation.map((_, i) => i + 1));
    const text = JSON.stringify(conversation);
    expect(text).to.contain("[WRITE] vpc.yaml");
    expect(text).to.contain("MODEL-SAW-WRITE");
    const audit = rest
      .filter((l) => l.log === "permission-audit")
      .map((l) => l.value as Record<string, unknown>);
    expect(audit.map((a) => [a.decision, a.reason])).to.deep.equal([["allow_once", "user:allow_once"]]);
    expect(out.lines.map((l) => JSON.stringify(l)).join("\n")).to.not.contain("sk-export-secret");

    // To a file: the same lines.
    const file = path.join(path.dirname(persistDir), "session.jsonl");
    const toFile = exportCli([waiting.contextId, "--persistence-dir", persistDir, "-o", file], env);
    expect(toFile.status, toFile.stderr).to.equal(0);
    expect(readFileSync(file, "utf8").trim().split("\n")).to.have.length(out.lines.length);

    const unknown = exportCli(["no-such-context", "--persistence-dir", persistDir], env);
    expect(unknown.status).to.equal(2);
    expect(unknown.stderr).to.contain("Unknown context 'no-such-context'");
  });

  it("refuses a persistence dir a running server holds, naming it; store: redis exports a running server's session", async () => {
    const dir = tempDir("iac-export-");
    dirs.push(dir);
    const redis: TestRedis = await startRedis();
    let server: CliChild | undefined;
    try {
      const persistDir = path.join(dir, "persist");
      const config = path.join(dir, "a2a-server.yml");
      const base = ["port: 0", `allowed-cwds: [${JSON.stringify(dir)}]`, "provider: scripted"];
      writeFileSync(
        config,
        [
          ...base,
          `persistence-dir: ${JSON.stringify(persistDir)}`,
          `script: ${JSON.stringify(path.join(SCRIPTS, "e2e-a2a.yaml"))}`,
          "",
        ].join("\n"),
      );
      const env = cleanEnv(dir, { IAC_CODE_CONFIG_DIR: path.join(dir, "config") });
      server = await startSourceCli(["a2a", "--config", config], env);
      const busy = exportCli(["any", "--config", config], env);
      expect(busy.status).to.equal(1);
      expect(busy.stderr).to.contain(`The persistence directory ${persistDir} is in use`);
      await server.stop();

      const redisConfig = path.join(dir, "a2a-redis.yml");
      writeFileSync(
        redisConfig,
        [
          ...base,
          "store: redis",
          `redis-url: ${redis.url}`,
          `script: ${JSON.stringify(path.join(SCRIPTS, "e2e-a2a.yaml"))}`,
          "",
        ].join("\n"),
      );
      server = await startSourceCli(["a2a", "--config", redisConfig], env);
      const waiting = await sendUntilInput(server.url, "[WRITE] vpc.yaml", {
        metadata: { iac_code: { cwd: dir } },
      });
      const live = exportCli([waiting.contextId, "--config", redisConfig], env);
      expect(live.status, live.stderr).to.equal(0);
      expect(live.lines[0]).to.deep.include({ type: "session", contextId: waiting.contextId });
      // Waiting for the permission: the round is a document of the session.
      expect(live.lines.find((l) => l.doc === "pending-round")).to.exist;
    } finally {
      await server?.stop();
      await redis.close();
    }
  });
});
