/* eslint-disable @typescript-eslint/no-unsafe-member-access -- tests read free-form A2A JSON replies through `any` (AnyJson) */
// Safe mode (IAC_CODE_A2A_SAFE_MODE) and IAC_CODE_A2A_TRUST_REQUEST_CWD on the
// A2A server with the real runtime: server paths become [PATH] on the streamed
// events, JSON-RPC, REST and gRPC answers and error texts (other paths and
// secrets untouched); the write tools are gone from normal turns; a request's
// workspace outside the allowed roots is accepted only when trusted.
import { expect } from "chai";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { stringify } from "yaml";
import { rpc, stateOf, userMessage, type AnyJson } from "../a2a/helpers.js";
import { a2aGrpcClient, metadata, unary } from "../a2a-bindings/fixtures/grpc-client.js";
import { resolveSettings } from "../../src/a2a/config/server-settings.js";
import { PathProjector } from "../../src/a2a/core/path-projection.js";
import { turnTools } from "../../src/runtime/tools/registry.js";
import {
  iacOf,
  removeDir,
  sendToEnd,
  startE2eServer,
  tempDir,
  texts,
  toolTrace,
  type E2eServer,
} from "./helpers.js";

const V1 = { "A2A-Version": "1.0" };

/** A script whose answers name the workspace (known only now), a path elsewhere and a password. */
function writeScript(dir: string, workspace: string): string {
  const file = path.join(dir, "safe-mode.yaml");
  writeFileSync(
    file,
    stringify({
      version: 1,
      rules: [
        {
          when: { userText: "[PATHS]" },
          reply: [
            {
              text: `Saved ${workspace}/vpc.yaml (file://${workspace}/vpc.yaml); see /usr/share/doc; password=hunter2`,
            },
          ],
        },
        {
          when: { userText: "[WRITE]", toolsNotCalled: ["write_file"] },
          reply: [{ toolCall: { name: "write_file", input: { path: "out.yaml", content: "a: 1\n" } } }],
        },
        { when: { userText: "[WRITE]" }, reply: [{ text: "done" }] },
      ],
      fallback: [{ text: "ok" }],
    }),
  );
  return file;
}

describe("safe mode: the path projector", () => {
  const projector = new PathProjector(["/srv/ws/", "/srv/ws/deep", "/tmp", "/"]);

  it("projects paths under a known root in text, file:// URIs included, whole segments only", () => {
    expect(projector.projectText("at /srv/ws/a.yaml and file:///tmp/x, not /tmpfoo/y or /usr/bin")).to.equal(
      "at [PATH] and [PATH], not /tmpfoo/y or /usr/bin",
    );
    // The filesystem root is never a known root: it would take every path.
    expect(projector.projectText("/etc/passwd")).to.equal("/etc/passwd");
  });

  it("projects keys (colliding ones numbered), leaves bytes alone and unchanged values as they were", () => {
    const bytes = new Uint8Array([47, 116, 109, 112]);
    const value = { "/srv/ws/a": 1, "/srv/ws/b": 2, nested: [{ p: "/tmp/z" }], bytes, plain: { n: 1 } };
    const projected = projector.project(value);
    expect(projected).to.deep.equal({
      "[PATH]": 1,
      "[PATH#2]": 2,
      nested: [{ p: "[PATH]" }],
      bytes,
      plain: { n: 1 },
    });
    expect(projected.plain).to.equal(value.plain);
    expect(value["/srv/ws/a"]).to.equal(1);
    const untouched = { a: ["x", { b: "/usr/y" }] };
    expect(projector.project(untouched)).to.equal(untouched);
  });
});

describe("safe mode: the restricted tool set", () => {
  it("keeps read-only file tools and cloud tools; no writes, no questions", () => {
    const names = turnTools(true, new Map(), { safeMode: true }).map((t) => t.name);
    expect(names).to.include.members([
      "read_file",
      "list_files",
      "glob",
      "grep",
      "ros_stack",
      "ros_validate_template",
      "skill",
    ]);
    expect(names).not.to.include.members(["write_file", "edit_file", "ask_user_question"]);
    expect(turnTools(true, new Map()).map((t) => t.name)).to.include("write_file");
  });

  it("both settings read their reference environment variables", () => {
    const settings = resolveSettings(
      {},
      {},
      { IAC_CODE_A2A_SAFE_MODE: "yes", IAC_CODE_A2A_TRUST_REQUEST_CWD: "1" },
    );
    expect(settings.safeMode).to.equal(true);
    expect(settings.trustRequestCwd).to.equal(true);
    const off = resolveSettings({}, {}, {});
    expect([off.safeMode, off.trustRequestCwd]).to.deep.equal([false, false]);
  });
});

describe("e2e: safe mode on the wire", function () {
  this.timeout(60_000);
  const servers: E2eServer[] = [];
  after(async () => {
    for (const s of servers) {
      await s.close();
      removeDir(s.dir);
    }
  });

  async function start(safeMode: boolean, file: Record<string, unknown> = {}): Promise<E2eServer> {
    const dir = tempDir();
    const script = writeScript(dir, path.join(dir, "workspace"));
    const s = await startE2eServer({ script, dir, safeMode, file });
    servers.push(s);
    return s;
  }

  it("projects the workspace in streamed events and in GetTask on JSON-RPC, REST and gRPC; nothing else", async () => {
    const s = await start(true);
    const events = await sendToEnd(s.url, "[PATHS] where is it?");
    const text = texts(events).join("");
    expect(text).to.include("Saved [PATH] ([PATH]); see /usr/share/doc; password=hunter2");
    expect(JSON.stringify(events)).not.to.include(s.workspace);
    const taskId = (events[0].result as AnyJson).task.id as string;

    const viaRpc = JSON.stringify((await rpc(s.url, "GetTask", { id: taskId }, V1)).body);
    expect(viaRpc).to.include("Saved [PATH]").and.not.include(s.workspace);
    const rest = await fetch(`${s.server.restUrl}/tasks/${taskId}`, { headers: V1 });
    expect(rest.status).to.equal(200);
    expect(await rest.text())
      .to.include("Saved [PATH]")
      .and.not.include(s.workspace);
    const client = a2aGrpcClient(s.server.grpcTarget);
    try {
      const task = await unary<Record<string, unknown>>((cb) =>
        client.GetTask({ id: taskId }, metadata(), cb),
      );
      expect(JSON.stringify(task)).to.include("Saved [PATH]").and.not.include(s.workspace);
    } finally {
      client.close();
    }
  });

  it("without safe mode the same answer keeps its paths", async () => {
    const s = await start(false);
    const text = texts(await sendToEnd(s.url, "[PATHS] where is it?")).join("");
    expect(text).to.include(`Saved ${s.workspace}/vpc.yaml (file://${s.workspace}/vpc.yaml)`);
  });

  it("a normal turn has no write tool: the call fails as unknown, nothing is asked or written", async () => {
    const s = await start(true);
    const events = await sendToEnd(s.url, "[WRITE] make a file");
    // A turn that ends waits for the next message (INPUT_REQUIRED) without any input request.
    expect(stateOf(events.at(-1)!)).to.equal("TASK_STATE_INPUT_REQUIRED");
    const call = toolTrace(events).find((t) => t.name === "write_file" && t.status === "failed");
    expect(call?.result).to.include("Unknown tool write_file").and.not.include("edit_file");
    expect(events.filter((e) => iacOf(e)?.input !== undefined)).to.deep.equal([]);
    expect(existsSync(path.join(s.workspace, "out.yaml"))).to.equal(false);
  });
});

describe("e2e: trust-request-cwd", function () {
  this.timeout(60_000);
  const servers: E2eServer[] = [];
  const outside = tempDir("iac-outside-");
  after(async () => {
    for (const s of servers) {
      await s.close();
      removeDir(s.dir);
    }
    removeDir(outside);
  });

  const inOutside = () =>
    userMessage("hello", { metadata: { iac_code: { cwd: path.join(outside, "project") } } });

  it("refuses a workspace outside the allowed roots unless the request's cwd is trusted", async () => {
    mkdirSync(path.join(outside, "project"), { recursive: true });
    const strict = await startE2eServer({ script: writeScript(outside, outside) });
    servers.push(strict);
    const refused = await rpc(strict.url, "SendMessage", { message: inOutside() }, V1);
    expect(JSON.stringify(refused.body)).to.include("TASK_STATE_FAILED");

    const trusting = await startE2eServer({
      script: writeScript(outside, outside),
      file: { "trust-request-cwd": true },
    });
    servers.push(trusting);
    const accepted = await rpc(trusting.url, "SendMessage", { message: inOutside() }, V1);
    expect((accepted.body.result as AnyJson).task.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
  });
});
