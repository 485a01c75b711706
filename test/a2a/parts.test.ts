/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return -- tests read free-form JSON-RPC replies through `any` */
import { expect } from "chai";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { createLogger } from "../../src/server/logger.js";
import { cleanup, startTestServer, userMessage, type TestServer } from "./helpers.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests peek into free-form JSON
type Json = Record<string, any>;
const MiB = 1024 * 1024;

describe("A2A parts ingestion and workspaces", () => {
  let t: TestServer;
  let outsideDir: string;
  before(async () => {
    t = await startTestServer();
    // Inside the allowed roots (system temp dir) but outside the workspace.
    outsideDir = path.join(t.dir, "outside");
    mkdirSync(outsideDir, { recursive: true });
    writeFileSync(path.join(outsideDir, "secret.txt"), "do not read");
  });
  after(async () => {
    await t.close();
    cleanup(t.dir);
  });

  const send = (parts: Json[], metadata?: Json) =>
    t.rpc("SendMessage", { message: userMessage("", { parts, ...(metadata ? { metadata } : {}) }) });
  const expectOk = async (parts: Json[]) => {
    const reply = await send(parts);
    expect(reply.body.error, JSON.stringify(reply.body.error)).to.equal(undefined);
    return ((reply.body.result as Json).task as Json).status.state as string;
  };
  const expectRejected = async (parts: Json[], message: string) => {
    const reply = await send(parts);
    expect(reply.body.error, message).to.deep.include({ code: -32602, message });
  };
  const b64 = (n: number, fill = 0x41) => Buffer.alloc(n, fill).toString("base64");

  it("joins text, JSON data (compact, sorted keys) and raw text into the prompt", async () => {
    await expectOk([
      { text: "# Title", mediaType: "text/markdown" },
      { data: { template: "value", a: [1, 2] }, mediaType: "application/json" },
      { raw: Buffer.from("key: value").toString("base64"), mediaType: "application/yaml" },
    ]);
    expect(t.runtime.prompts.at(-1)).to.equal('# Title\n{"a":[1,2],"template":"value"}\nkey: value');
  });

  it("reads a text file:// URL inside the workspace", async () => {
    writeFileSync(path.join(t.workspace, "main.tf"), 'resource "x" {}');
    await expectOk([{ url: pathToFileURL(path.join(t.workspace, "main.tf")).href, mediaType: "text/plain" }]);
    expect(t.runtime.prompts.at(-1)).to.equal('resource "x" {}');
  });

  it("turns multimodal raw/data/file parts into a prompt manifest", async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const sha = createHash("sha256").update(png).digest("hex");
    await expectOk([{ raw: png.toString("base64"), mediaType: "image/png", filename: "shot.png" }]);
    expect(t.runtime.prompts.at(-1)).to.equal(
      [
        "A2A multimodal attachment:",
        "- filename=shot.png",
        "- mediaType=image/png",
        "- byteSize=7",
        `- sha256=${sha}`,
        "- source=inline",
      ].join("\n"),
    );
    await expectOk([
      { data: { base64: png.toString("base64"), filename: "../evil.wav" }, mediaType: "audio/wav" },
    ]);
    expect(t.runtime.prompts.at(-1)).to.include("- filename=attachment").and.include("- source=data");
    writeFileSync(path.join(t.workspace, "blob.bin"), png);
    const url = pathToFileURL(path.join(t.workspace, "blob.bin")).href;
    await expectOk([{ url, mediaType: "application/octet-stream" }]);
    expect(t.runtime.prompts.at(-1)).to.include("- filename=blob.bin").and.include(`- source=${url}`);
  });

  it("accepts each size limit exactly and refuses one byte more", async () => {
    await expectOk([{ data: { a: "x".repeat(MiB - 8) }, mediaType: "application/json" }]);
    await expectRejected(
      [{ data: { a: "x".repeat(MiB - 7) }, mediaType: "application/json" }],
      "A2A data part content is too large.",
    );
    await expectOk([{ raw: b64(MiB), mediaType: "text/plain" }]);
    await expectRejected(
      [{ raw: b64(MiB + 1), mediaType: "text/plain" }],
      "A2A raw part content is too large.",
    );
    await expectOk([{ raw: b64(5 * MiB), mediaType: "image/png" }]);
    await expectRejected(
      [{ raw: b64(5 * MiB + 1), mediaType: "image/png" }],
      "A2A binary raw part content is too large.",
    );
    await expectOk([{ data: { bytes: b64(5 * MiB) }, mediaType: "image/jpeg" }]);
    await expectRejected(
      [{ data: { bytes: b64(5 * MiB + 1) }, mediaType: "image/jpeg" }],
      "A2A binary data part content is too large.",
    );
    writeFileSync(path.join(t.workspace, "at.txt"), Buffer.alloc(MiB, 0x61));
    writeFileSync(path.join(t.workspace, "over.txt"), Buffer.alloc(MiB + 1, 0x61));
    await expectOk([{ url: pathToFileURL(path.join(t.workspace, "at.txt")).href }]);
    await expectRejected(
      [{ url: pathToFileURL(path.join(t.workspace, "over.txt")).href }],
      "A2A file URL part content is too large.",
    );
    writeFileSync(path.join(t.workspace, "at.bin"), Buffer.alloc(25 * MiB, 1));
    writeFileSync(path.join(t.workspace, "over.bin"), Buffer.alloc(25 * MiB + 1, 1));
    await expectOk([
      { url: pathToFileURL(path.join(t.workspace, "at.bin")).href, mediaType: "application/octet-stream" },
    ]);
    await expectRejected(
      [
        {
          url: pathToFileURL(path.join(t.workspace, "over.bin")).href,
          mediaType: "application/octet-stream",
        },
      ],
      "A2A binary file URL part content is too large.",
    );
  });

  it("refuses malformed parts with the seed's messages", async () => {
    await expectRejected(
      [{ text: "x", mediaType: "application/octet-stream" }],
      "A2A part has unsupported media type.",
    );
    await expectRejected([{ text: "x", mediaType: "video/mp4" }], "A2A part has unsupported media type.");
    await expectRejected(
      [{ data: { a: 1 }, mediaType: "text/plain" }],
      "A2A data parts must use application/json media type.",
    );
    await expectRejected(
      [{ raw: Buffer.from([0xff, 0xfe, 0xfd]).toString("base64"), mediaType: "text/plain" }],
      "A2A raw parts must contain valid UTF-8.",
    );
    await expectRejected([{ raw: "AAAA", mediaType: "video/mp4" }], "A2A part has unsupported media type.");
    await expectRejected(
      [{ data: [1, 2], mediaType: "image/png" }],
      "A2A binary data parts must contain an object.",
    );
    await expectRejected(
      [{ data: { name: "x" }, mediaType: "image/png" }],
      "A2A binary data parts must include base64 bytes.",
    );
    await expectRejected(
      [{ data: { base64: "not base64!" }, mediaType: "image/png" }],
      "A2A binary data part bytes must be valid base64.",
    );
    await expectRejected(
      [{ mediaType: "text/plain" }],
      "A2A server supports text, JSON data, raw text, or workspace file URL parts only.",
    );
    writeFileSync(path.join(t.workspace, "bad.txt"), Buffer.from([0xc3, 0x28]));
    await expectRejected(
      [{ url: pathToFileURL(path.join(t.workspace, "bad.txt")).href }],
      "A2A file URL parts must contain valid UTF-8.",
    );
  });

  it("refuses remote URLs, foreign hosts, traversal, symlink escapes and missing files without echoing paths", async () => {
    for (const url of [
      "https://example.com/x.txt",
      "http://127.0.0.1/x",
      "file://localhost/etc/hosts",
      "ftp://x/y",
    ]) {
      await expectRejected(
        [{ url, mediaType: "text/plain" }],
        "A2A file URL parts must use local file:// URLs.",
      );
    }
    const traversal = `${pathToFileURL(t.workspace).href}/../outside/secret.txt`;
    await expectRejected([{ url: traversal }], "A2A file URL part is outside the allowed workspace.");
    await expectRejected(
      [{ url: pathToFileURL(path.join(outsideDir, "secret.txt")).href }],
      "A2A file URL part is outside the allowed workspace.",
    );
    await expectRejected(
      [{ url: "file:///etc/hostname" }],
      "A2A file URL part is outside the allowed workspace.",
    );
    symlinkSync(path.join(outsideDir, "secret.txt"), path.join(t.workspace, "link.txt"));
    const reply = await send([{ url: pathToFileURL(path.join(t.workspace, "link.txt")).href }]);
    expect(reply.body.error).to.deep.include({
      code: -32602,
      message: "A2A file URL part is outside the allowed workspace.",
    });
    expect(reply.raw).to.not.include(outsideDir);
    await expectRejected(
      [{ url: pathToFileURL(path.join(t.workspace, "missing.txt")).href }],
      "A2A file URL part must reference an existing file.",
    );
    mkdirSync(path.join(t.workspace, "adir"), { recursive: true });
    await expectRejected(
      [{ url: pathToFileURL(path.join(t.workspace, "adir")).href }],
      "A2A file URL part must reference an existing file.",
    );
    expect(t.runtime.prompts.join("\n")).to.not.include("do not read");
  });

  describe("workspace metadata (metadata.iac_code.cwd)", () => {
    const failedText = async (metadata: Json, contextId?: string) => {
      const reply = await t.rpc("SendMessage", {
        message: userMessage("hi", { metadata, ...(contextId ? { contextId } : {}) }),
      });
      const task = (reply.body.result as Json).task as Json;
      return task.status.state === "TASK_STATE_FAILED"
        ? (task.status.message.parts[0].text as string)
        : task.status.state;
    };

    it("accepts an absolute existing directory inside an allowed root", async () => {
      const project = path.join(t.dir, "project");
      mkdirSync(project, { recursive: true });
      writeFileSync(path.join(project, "a.txt"), "from project");
      const reply = await t.rpc("SendMessage", {
        message: userMessage("", {
          parts: [{ url: pathToFileURL(path.join(project, "a.txt")).href }],
          metadata: { iac_code: { cwd: project } },
        }),
      });
      expect(((reply.body.result as Json).task as Json).status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
      expect(t.runtime.prompts.at(-1)).to.equal("from project");
    });

    it("fails the task for relative, missing, non-directory, non-string or out-of-root workspaces, saying why", async () => {
      const field = "metadata.iac_code.cwd";
      expect(await failedText({ iac_code: { cwd: "relative/dir" } })).to.equal(
        `${field} must be an absolute path.`,
      );
      expect(await failedText({ iac_code: { cwd: path.join(t.dir, "nope") } })).to.equal(
        `${field} does not exist: create the directory first.`,
      );
      expect(existsSync(path.join(t.dir, "nope"))).to.equal(false);
      expect(await failedText({ iac_code: { cwd: path.join(outsideDir, "secret.txt") } })).to.equal(
        `${field} is not a directory.`,
      );
      expect(await failedText({ iac_code: { cwd: 42 } })).to.equal(`${field} must be an absolute path.`);
      expect(await failedText({ iac_code: { cwd: "/etc" } })).to.equal(
        `${field} is outside the allowed workspace roots (the server's --allowed-cwds setting).`,
      );
      expect(await failedText({ iac_code: { cwd: "/etc", preferredLanguage: "de" } })).to.equal(
        `${field} liegt außerhalb der erlaubten Arbeitsbereich-Wurzeln (Einstellung --allowed-cwds des Servers).`,
      );
    });

    it("logs each refusal in English with the task, context and message ids", async () => {
      const lines: Json[] = [];
      const sink = new Writable({
        write(chunk: Buffer, _enc, done) {
          for (const line of chunk.toString().split("\n")) if (line) lines.push(JSON.parse(line) as Json);
          done();
        },
      });
      const logged = await startTestServer({ logger: createLogger({ destination: sink }) });
      try {
        const reply = await logged.rpc("SendMessage", {
          message: userMessage("hi", {
            messageId: "msg-refused-1",
            metadata: { iac_code: { cwd: "/etc", preferredLanguage: "ja" } },
          }),
        });
        const task = (reply.body.result as Json).task as { id: string; contextId: string };
        const line = lines.find((l) => l.msg === "message refused")!;
        expect(line).to.deep.include({
          taskId: task.id,
          contextId: task.contextId,
          messageId: "msg-refused-1",
          reason:
            "metadata.iac_code.cwd is outside the allowed workspace roots (the server's --allowed-cwds setting).",
          level: 30,
        });
      } finally {
        await logged.close();
        cleanup(logged.dir);
      }
    });

    it("refuses a bad workspace of a pipeline request as invalid params before any task exists", async () => {
      const reply = await t.rpc("SendMessage", {
        message: userMessage("hi", { metadata: { iac_code: { cwd: "relative", runMode: "pipeline" } } }),
      });
      expect(reply.body.error).to.deep.include({
        code: -32602,
        message: "metadata.iac_code.cwd must be an absolute path.",
      });
    });

    it("rejects a symlinked workspace that escapes the allowed roots", async () => {
      const jail = await startTestServer({ env: { IACCODE_A2A_ALLOWED_CWDS: t.workspace } });
      try {
        const escape = path.join(t.workspace, "escape");
        symlinkSync(outsideDir, escape);
        const reply = await jail.rpc("SendMessage", {
          message: userMessage("hi", { metadata: { iac_code: { cwd: escape } } }),
        });
        const task = (reply.body.result as Json).task as Json;
        expect(task.status.message.parts[0].text).to.equal(
          "metadata.iac_code.cwd is outside the allowed workspace roots (the server's --allowed-cwds setting).",
        );
        const inside = await jail.rpc("SendMessage", {
          message: userMessage("hi", { metadata: { iac_code: { cwd: t.workspace } } }),
        });
        expect(((inside.body.result as Json).task as Json).status.state).to.equal(
          "TASK_STATE_INPUT_REQUIRED",
        );
      } finally {
        await jail.close();
        cleanup(jail.dir);
      }
    });

    it("rejects the same context with another workspace", async () => {
      const a = path.join(t.dir, "ws-a");
      const b = path.join(t.dir, "ws-b");
      mkdirSync(a, { recursive: true });
      mkdirSync(b, { recursive: true });
      expect(await failedText({ iac_code: { cwd: a } }, "ctx-ws")).to.equal("TASK_STATE_INPUT_REQUIRED");
      expect(await failedText({ iac_code: { cwd: b } }, "ctx-ws")).to.equal(
        "A2A context belongs to a different workspace.",
      );
      // Without cwd, a follow-up keeps the context's workspace.
      expect(await failedText({}, "ctx-ws")).to.equal("TASK_STATE_INPUT_REQUIRED");
    });
  });
});
