// Admission over raw HTTP: every pre-stream error of the seed's table with its
// status and localised message, the body limits at and over their boundaries
// (enforced while the body streams), images, bindings, health.
import { expect } from "chai";
import { request as httpRequest } from "node:http";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseAguiHealth, parseErrorEnvelope } from "../../src/contract/index.js";
import { userParts, IMAGE_LIMIT, REQUEST_LIMIT } from "../../src/agui/run/inputs.js";
import { post, runInput, startHarness, type Harness } from "./harness.js";
import { expectValidStream } from "./helpers.js";

const b64 = (bytes: number) => Buffer.alloc(bytes, 7).toString("base64");

function imageInput(h: Harness, threadId: string, bytes: number) {
  const body = runInput(h, { threadId, runId: "r1" });
  body.messages = [
    {
      id: "u1",
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "image", source: { type: "data", value: b64(bytes), mimeType: "image/png" } },
      ],
    },
  ];
  return body;
}

/** A body of exactly `size` bytes (padding in state). */
function sizedBody(h: Harness, size: number): string {
  const body = runInput(h, { threadId: `thread-size-${size}`, runId: "r1", text: "hi" });
  body.state = { pad: "" };
  const base = Buffer.byteLength(JSON.stringify(body));
  (body.state as { pad: string }).pad = "x".repeat(size - base);
  const text = JSON.stringify(body);
  expect(Buffer.byteLength(text)).to.equal(size);
  return text;
}

describe("agui admission over HTTP", function () {
  let h: Harness;
  before(async () => {
    h = await startHarness({ settings: { authToken: "client-token" } });
  });
  after(async () => {
    await h.close();
  });
  const auth = { Authorization: "Bearer client-token" };

  it("GET /health needs no token and matches the contract", async () => {
    const res = await fetch(`${h.url}health`);
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status).to.equal(200);
    expect(body).to.include({ status: "healthy", protocol: "ag-ui", executionKernel: "a2a-1.0" });
    expect(body.runtime).to.deep.include({ demo: false, provider: "scripted" });
    expect(parseAguiHealth(body).ok, JSON.stringify(parseAguiHealth(body))).to.equal(true);
  });

  it("401 UNAUTHORIZED, localised by Accept-Language (q-values) and preferredLanguage", async () => {
    const missing = await post(h.url, runInput(h, { threadId: "t", runId: "r", text: "x" }));
    expect(missing.status).to.equal(401);
    expect(missing.json).to.deep.equal({
      error: { code: "UNAUTHORIZED", message: "A valid bearer token is required." },
    });
    expect(parseErrorEnvelope(missing.json).ok).to.equal(true);
    const ja = await post(h.url, runInput(h, { threadId: "t", runId: "r", text: "x" }), {
      Authorization: "Bearer wrong",
      "Accept-Language": "zh;q=0, en;q=0.2, ja;q=1",
    });
    expect(ja.status).to.equal(401);
    expect(ja.json?.error.message).not.to.equal("A valid bearer token is required.");
    expect(ja.json?.error.message).to.match(/[\u3040-\u30ff\u4e00-\u9fff]/);
    const fr = await post(
      h.url,
      runInput(h, { threadId: "t", runId: "r", text: "x", iac: { preferredLanguage: "fr-FR" } }),
      { "Accept-Language": "ja" },
    );
    expect(fr.json?.error.code).to.equal("UNAUTHORIZED");
    expect(fr.json?.error.message).to.match(/jeton|porteur|Bearer/i);
    const lower = await post(h.url, runInput(h, { threadId: "t-auth", runId: "r", text: "x" }), {
      Authorization: "bearer client-token",
    });
    expect(lower.status).to.equal(200);
  });

  it("415, 400 INVALID_JSON, non-object, envelope, forwarded props, tools, remote media", async () => {
    const res415 = await fetch(h.url, {
      method: "POST",
      headers: { ...auth, "Content-Type": "text/plain" },
      body: "{}",
    });
    expect(res415.status).to.equal(415);
    expect(((await res415.json()) as { error: { code: string } }).error.code).to.equal(
      "UNSUPPORTED_MEDIA_TYPE",
    );
    const cases: Array<[unknown, number, string, string]> = [
      ["{not json", 400, "INVALID_JSON", "The request body is not valid JSON."],
      ["[1,2]", 400, "INVALID_INPUT", "RunAgentInput must be a JSON object."],
      [
        { ...runInput(h, { threadId: "t", runId: "r", text: "x" }), threadId: "" },
        400,
        "INVALID_INPUT",
        "threadId must not be empty.",
      ],
      [
        { ...runInput(h, { threadId: "t", runId: "r", text: "x", iac: { unknownField: 1 } }) },
        400,
        "INVALID_INPUT",
        "forwardedProps.iacCode.unknownField is not a known field.",
      ],
      [
        {
          ...runInput(h, { threadId: "t", runId: "r", text: "x" }),
          tools: [{ name: "t", description: "d" }],
        },
        400,
        "INVALID_INPUT",
        "tools must be an empty list: client-defined tools are not supported.",
      ],
      [
        { ...runInput(h, { threadId: "t", runId: "r", text: "x", iac: { cwd: "/etc/outside-roots" } }) },
        400,
        "INVALID_INPUT",
        "forwardedProps.iacCode.cwd is outside the allowed workspace roots (the server's --allowed-cwds setting).",
      ],
      [
        {
          ...runInput(h, { threadId: "t", runId: "r" }),
          messages: [
            {
              id: "u",
              role: "user",
              content: [{ type: "image", source: { type: "url", value: "https://example.com/a.png" } }],
            },
          ],
        },
        400,
        "INVALID_INPUT",
        "Remote media URLs are not supported.",
      ],
      [
        {
          ...runInput(h, { threadId: "t", runId: "r" }),
          messages: [
            {
              id: "u",
              role: "user",
              content: [{ type: "audio", source: { type: "data", value: "AAAA", mimeType: "audio/wav" } }],
            },
          ],
        },
        400,
        "INVALID_INPUT",
        "Only text and inline data images are supported.",
      ],
    ];
    for (const [body, status, code, message] of cases) {
      const res = await post(h.url, body, auth);
      expect(res.status, JSON.stringify(body).slice(0, 80)).to.equal(status);
      expect(res.json?.error, JSON.stringify(body).slice(0, 80)).to.deep.equal({ code, message });
    }
    const zh = await post(h.url, "{not json", { ...auth, "Accept-Language": "en;q=0.2, zh-CN;q=1" });
    expect(zh.json?.error.message).to.match(/[\u4e00-\u9fff]/);
  });

  it("12 MiB request limit: exactly at the limit is admitted, one byte over is 413", async () => {
    const at = await post(h.url, sizedBody(h, REQUEST_LIMIT), auth);
    expect(at.status).to.equal(200);
    await expectValidStream(at.events);
    const over = await post(h.url, sizedBody(h, REQUEST_LIMIT + 1), auth);
    expect(over.status).to.equal(413);
    expect(over.json?.error).to.deep.equal({
      code: "REQUEST_TOO_LARGE",
      message: "The AG-UI request body is too large.",
    });
  });

  it("the limit is enforced while the body streams (chunked, no Content-Length)", async () => {
    const url = new URL(h.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: "/",
          method: "POST",
          headers: { ...auth, "Content-Type": "application/json" },
        },
        (res) => {
          resolve(res.statusCode ?? 0);
          res.resume();
          req.destroy();
        },
      );
      req.on("error", (err) =>
        err.message.includes("socket hang up") ||
        (err as NodeJS.ErrnoException).code === "ECONNRESET" ||
        (err as NodeJS.ErrnoException).code === "EPIPE"
          ? undefined
          : reject(err),
      );
      const chunk = Buffer.alloc(1024 * 1024, 32);
      let sent = 0;
      // Never ends: 13 chunks of 1 MiB then waits; the 413 must come without the end of the body.
      const pump = () => {
        while (sent < 13) {
          sent++;
          if (!req.write(chunk)) return void req.once("drain", pump);
        }
      };
      pump();
    });
    expect(status).to.equal(413);
  });

  it("8 MiB per image: at the limit admitted, one byte over refused; 10 MiB in total", async () => {
    const at = await post(h.url, imageInput(h, "thread-img-at", IMAGE_LIMIT), auth);
    expect(at.status).to.equal(200);
    const over = await post(h.url, imageInput(h, "thread-img-over", IMAGE_LIMIT + 1), auth);
    expect(over.status).to.equal(400);
    expect(over.json?.error).to.deep.equal({
      code: "INVALID_INPUT",
      message: "An image exceeds the maximum size.",
    });
    // 10 MiB of images cannot fit a 12 MiB JSON body as base64, so the total is checked on the parts directly.
    const img = (bytes: number) => ({
      type: "image",
      source: { type: "data", value: b64(bytes), mimeType: "image/png" },
    });
    expect(userParts({ content: [img(IMAGE_LIMIT), img(2 * 1024 * 1024)] })).to.have.length(2);
    expect(() => userParts({ content: [img(IMAGE_LIMIT), img(2 * 1024 * 1024 + 1)] })).to.throw(
      "The total image content exceeds the maximum size.",
    );
    expect(() =>
      userParts({
        content: [{ type: "image", source: { type: "data", value: "abc", mimeType: "image/png" } }],
      }),
    ).to.throw("The image data is not valid base64.");
    expect(() =>
      userParts({
        content: [{ type: "image", source: { type: "data", value: "AAAA", mimeType: "image/tiff" } }],
      }),
    ).to.throw("The image media type is not supported.");
    expect(
      userParts({
        content: [{ type: "image", source: { type: "data", value: "AAAA", mimeType: "image/png" } }],
      })[0],
    ).to.deep.include({ filename: "agui-image-1" });
    expect(
      userParts({
        content: [
          {
            type: "image",
            source: { type: "data", value: "AAAA", mimeType: "image/png" },
            metadata: { filename: "before.png" },
          },
        ],
      })[0],
    ).to.deep.include({ filename: "before.png" });
    expect(
      userParts({
        content: [
          {
            type: "image",
            source: { type: "data", value: "AAAA", mimeType: "image/png" },
            metadata: { filename: "../before.png" },
          },
        ],
      })[0],
    ).to.deep.include({ filename: "agui-image-1" });
  });

  it("DUPLICATE_RUN_ID, RUN_ID_CONFLICT, THREAD_BINDING_CONFLICT (cwd and userId), STATE_UNAVAILABLE", async () => {
    const body = runInput(h, {
      threadId: "thread-ids",
      runId: "r1",
      text: "hello",
      iac: { userId: "alice" },
    });
    const first = await post(h.url, body, auth);
    expect(first.status).to.equal(200);
    const dup = await post(h.url, body, auth);
    expect([dup.status, dup.json?.error.code, dup.json?.error.message]).to.deep.equal([
      409,
      "DUPLICATE_RUN_ID",
      "The AG-UI run id has already been used.",
    ]);
    const conflict = await post(
      h.url,
      runInput(h, { threadId: "thread-ids", runId: "r1", text: "other", iac: { userId: "alice" } }),
      auth,
    );
    expect([conflict.status, conflict.json?.error.code]).to.deep.equal([409, "RUN_ID_CONFLICT"]);
    const other = path.join(h.workspace, "other");
    mkdirSync(other, { recursive: true });
    const cwd = await post(
      h.url,
      runInput(h, { threadId: "thread-ids", runId: "r2", text: "x", iac: { userId: "alice", cwd: other } }),
      auth,
    );
    expect([cwd.status, cwd.json?.error.code, cwd.json?.error.message]).to.deep.equal([
      409,
      "THREAD_BINDING_CONFLICT",
      "The AG-UI thread is already bound to another workspace or caller.",
    ]);
    const user = await post(
      h.url,
      runInput(h, { threadId: "thread-ids", runId: "r3", text: "x", iac: { userId: "bob" } }),
      auth,
    );
    expect([user.status, user.json?.error.code]).to.deep.equal([409, "THREAD_BINDING_CONFLICT"]);
    writeFileSync(h.store.fileFor("thread-corrupt"), "{broken");
    const corrupt = await post(
      h.url,
      runInput(h, { threadId: "thread-corrupt", runId: "r1", text: "x" }),
      auth,
    );
    expect([corrupt.status, corrupt.json?.error.code]).to.deep.equal([503, "STATE_UNAVAILABLE"]);
    const fine = await post(h.url, runInput(h, { threadId: "thread-fine", runId: "r1", text: "x" }), auth);
    expect(fine.status).to.equal(200);
  });

  it("a new run without a user message is RUN_ERROR INVALID_INPUT inside the stream", async () => {
    const res = await post(h.url, runInput(h, { threadId: "thread-nomsg", runId: "r1" }), auth);
    expect(res.status).to.equal(200);
    expect(res.headers.get("cache-control")).to.equal("no-cache");
    expect(res.headers.get("x-accel-buffering")).to.equal("no");
    expect(res.events.at(-1)).to.include({
      type: "RUN_ERROR",
      code: "INVALID_INPUT",
      message: "A new run requires a user message.",
    });
    await expectValidStream(res.events);
  });
});
