// The HTTP+JSON (REST) binding over real HTTP: every route (also under a
// /{tenant} prefix), ProtoJSON bodies and queries, SSE with bare
// StreamResponses, response content types, and every rejection path with its
// google.rpc.Status body (checked against the contract schemas).
import http from "node:http";
import http2 from "node:http2";
import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { parseRestError, schemaIndex } from "../../src/contract/index.js";
import { startBindingsServer, type BindingsServer } from "./fixtures/server.js";

type Json = Record<string, unknown>;
const V1 = { "A2A-Version": "1.0" };

interface Reply {
  status: number;
  type: string;
  text: string;
  json: Json;
}

function validAs(name: keyof typeof schemaIndex, value: unknown): void {
  const validate = schemaIndex[name].validate as ((v: unknown) => boolean) & { errors?: unknown };
  expect(validate(value), `${name}: ${JSON.stringify(validate.errors)}`).to.equal(true);
}

function restError(reply: Reply, status: number, reason: string): void {
  expect(reply.status).to.equal(status);
  expect(reply.type).to.match(/^application\/json/);
  const parsed = parseRestError(reply.json);
  expect(parsed.ok, JSON.stringify(reply.json)).to.equal(true);
  const error = reply.json.error as { code: number; details: Array<{ reason: string; domain: string }> };
  expect(error.code).to.equal(status);
  expect(error.details[0].reason).to.equal(reason);
  expect(error.details[0].domain).to.equal("a2a-protocol.org");
}

function userMessage(text: string, extra: Json = {}): Json {
  return { message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }], ...extra } };
}

/** SSE `data:` payloads of a finished stream, checking the framing on the way. */
function sseEvents(text: string): Json[] {
  expect(text.endsWith("\n\n")).to.equal(true);
  return text
    .split("\n\n")
    .filter((frame) => frame.trim() !== "" && !frame.startsWith(":"))
    .map((frame) => {
      const lines = frame.split("\n");
      expect(lines, frame).to.have.length(1);
      expect(lines[0].startsWith("data: ")).to.equal(true);
      return JSON.parse(lines[0].slice(6)) as Json;
    });
}

describe("a2a-bindings: REST (HTTP+JSON) binding", () => {
  let s: BindingsServer;

  async function call(
    method: string,
    path: string,
    options: { body?: unknown; raw?: string; headers?: Record<string, string> } = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = { ...V1, ...options.headers };
    let body: string | undefined = options.raw;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["Content-Type"] ??= "application/json";
    }
    const response = await fetch(`${s.base}${path}`, { method, headers, body });
    const text = await response.text();
    let json: Json = {};
    try {
      json = JSON.parse(text) as Json;
    } catch {
      // SSE or plain text: the caller reads `text`.
    }
    return { status: response.status, type: response.headers.get("content-type") ?? "", text, json };
  }

  async function finishedTask(prefix = ""): Promise<{ id: string; contextId: string }> {
    const reply = await call("POST", `${prefix}/message:send`, { body: userMessage("hello") });
    expect(reply.status).to.equal(200);
    return reply.json.task as { id: string; contextId: string };
  }

  before(async () => {
    s = await startBindingsServer();
  });
  after(() => s.close());

  it("POST /message:send answers a SendMessageResponse as application/json", async () => {
    const reply = await call("POST", "/message:send", { body: userMessage("hello") });
    expect(reply.status).to.equal(200);
    expect(reply.type).to.match(/^application\/json/);
    validAs("a2a/protojson/SendMessageResponse", reply.json);
    expect((reply.json.task as { status: { state: string } }).status.state).to.equal(
      "TASK_STATE_INPUT_REQUIRED",
    );
  });

  it("answers application/a2a+json only when the client asks for it", async () => {
    const asked = await call("POST", "/message:send", {
      body: userMessage("hi"),
      headers: { Accept: "application/a2a+json, application/json" },
    });
    expect(asked.type).to.match(/^application\/a2a\+json/);
    const error = await call("GET", "/tasks/nope", { headers: { Accept: "application/a2a+json" } });
    expect(error.status).to.equal(404);
    expect(error.type).to.match(/^application\/a2a\+json/);
    const star = await call("GET", "/tasks/nope", { headers: { Accept: "*/*" } });
    expect(star.type).to.match(/^application\/json/);
  });

  it("accepts application/a2a+json request bodies, snake_case keys and unknown fields", async () => {
    const body = {
      message: {
        message_id: randomUUID(),
        role: "ROLE_USER",
        parts: [{ text: "snake" }],
        tckUnknownField: 1,
      },
      extraParam: true,
    };
    const reply = await call("POST", "/message:send", {
      body,
      headers: { "Content-Type": "application/a2a+json; charset=utf-8" },
    });
    expect(reply.status).to.equal(200);
    validAs("a2a/protojson/SendMessageResponse", reply.json);
  });

  it("serves every route under a /{tenant} prefix too", async () => {
    const task = await finishedTask("/acme");
    const got = await call("GET", `/acme/tasks/${task.id}`);
    expect(got.status).to.equal(200);
    expect(got.json.id).to.equal(task.id);
    const list = await call("GET", `/acme/tasks?contextId=${task.contextId}`);
    expect((list.json.tasks as Json[]).map((t) => t.id)).to.deep.equal([task.id]);
    // Routed (no 404): refused because no auth is configured.
    restError(await call("GET", "/acme/extendedAgentCard"), 400, "UNSUPPORTED_OPERATION");
    const cancel = await call("POST", `/acme/tasks/${task.id}:cancel`);
    restError(cancel, 400, "TASK_NOT_CANCELABLE");
    const stream = await call("POST", "/acme/message:stream", { body: userMessage("tenant stream") });
    expect(stream.type).to.match(/^text\/event-stream/);
  });

  it("POST /message:stream sends bare StreamResponses, one data line per event", async () => {
    const reply = await call("POST", "/message:stream", { body: userMessage("chunks 2") });
    expect(reply.status).to.equal(200);
    expect(reply.type).to.match(/^text\/event-stream/);
    const events = sseEvents(reply.text);
    expect(Object.keys(events[0])).to.deep.equal(["task"]);
    for (const event of events) {
      validAs("a2a/protojson/StreamResponse", event);
      expect(event.jsonrpc).to.equal(undefined);
    }
    const last = events[events.length - 1].statusUpdate as { status: { state: string } };
    expect(last.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
  });

  it("GET /tasks/{id} honours historyLength and rejects a bad one", async () => {
    const task = await finishedTask();
    const full = await call("GET", `/tasks/${task.id}`);
    validAs("a2a/protojson/Task", full.json);
    expect((full.json.history as Json[]).length).to.be.greaterThan(1);
    const none = await call("GET", `/tasks/${task.id}?historyLength=0`);
    expect(none.json.history).to.equal(undefined);
    const one = await call("GET", `/tasks/${task.id}?history_length=1`);
    expect(one.json.history).to.have.length(1);
    restError(await call("GET", `/tasks/${task.id}?historyLength=abc`), 400, "INVALID_PARAMS");
    restError(await call("GET", `/tasks/${task.id}?historyLength=1&historyLength=2`), 400, "INVALID_PARAMS");
  });

  it("GET /tasks/tasks is GetTask of the task named tasks, not a tenant's ListTasks", async () => {
    restError(await call("GET", "/tasks/tasks"), 404, "TASK_NOT_FOUND");
  });

  it("GET /tasks reads its query (camelCase or snake_case, enum names or numbers, booleans)", async () => {
    const first = await finishedTask();
    await call("POST", "/message:send", { body: userMessage("second", { contextId: first.contextId }) });
    const page = await call("GET", `/tasks?contextId=${first.contextId}&pageSize=1&includeArtifacts=false`);
    expect(page.status).to.equal(200);
    validAs("a2a/protojson/ListTasksResponse", page.json);
    expect(page.json.tasks).to.have.length(1);
    expect(page.json.totalSize).to.equal(2);
    expect(page.json.pageSize).to.equal(1);
    const next = page.json.nextPageToken as string;
    expect(next).to.not.equal("");
    const rest = await call(
      "GET",
      `/tasks?context_id=${first.contextId}&page_size=1&page_token=${encodeURIComponent(next)}`,
    );
    expect(rest.json.tasks).to.have.length(1);
    expect(rest.json.nextPageToken).to.equal("");
    const byName = await call("GET", `/tasks?contextId=${first.contextId}&status=TASK_STATE_INPUT_REQUIRED`);
    expect(byName.json.tasks).to.have.length(2);
    const byNumber = await call("GET", `/tasks?contextId=${first.contextId}&status=6`);
    expect(byNumber.json.tasks).to.have.length(2);
    const none = await call("GET", `/tasks?contextId=${first.contextId}&status=TASK_STATE_WORKING`);
    expect(none.json).to.deep.equal({ tasks: [], nextPageToken: "", pageSize: 50, totalSize: 0 });
    const after = await call(
      "GET",
      `/tasks?contextId=${first.contextId}&statusTimestampAfter=2999-01-01T00:00:00Z`,
    );
    expect(after.json.tasks).to.deep.equal([]);
    restError(await call("GET", "/tasks?includeArtifacts=maybe"), 400, "INVALID_PARAMS");
    restError(await call("GET", "/tasks?status=NOT_A_STATE"), 400, "INVALID_PARAMS");
    restError(await call("GET", "/tasks?statusTimestampAfter=yesterday"), 400, "INVALID_PARAMS");
  });

  it("POST /tasks/{id}:cancel accepts an empty body and maps the core's errors", async () => {
    const task = await finishedTask();
    restError(
      await call("POST", `/tasks/${task.id}:cancel`, { headers: { "Content-Type": "application/json" } }),
      400,
      "TASK_NOT_CANCELABLE",
    );
    restError(await call("POST", "/tasks/unknown-task:cancel"), 404, "TASK_NOT_FOUND");
    restError(await call("POST", "/tasks/bad id!:cancel"), 404, "TASK_NOT_FOUND");
  });

  it("cancels a running task with POST /tasks/{id}:cancel", async () => {
    const streaming = call("POST", "/message:stream", { body: userMessage("hold it") });
    await s.runtime.whenHeld(1);
    const working = await call("GET", "/tasks?status=TASK_STATE_WORKING");
    const [task] = working.json.tasks as Array<{ id: string }>;
    const canceled = await call("POST", `/tasks/${task.id}:cancel`, { body: { metadata: { why: "test" } } });
    expect(canceled.status).to.equal(200);
    expect((canceled.json.status as { state: string }).state).to.equal("TASK_STATE_CANCELED");
    const events = sseEvents((await streaming).text);
    const last = events[events.length - 1].statusUpdate as { status: { state: string } };
    expect(last.status.state).to.equal("TASK_STATE_CANCELED");
  });

  it("subscribes with GET and with POST; a finished task is a plain 404 (no SSE)", async () => {
    const task = await finishedTask();
    for (const method of ["GET", "POST"]) {
      const reply = await call(method, `/tasks/${task.id}:subscribe`);
      restError(reply, 404, "TASK_NOT_FOUND");
    }
    for (const method of ["GET", "POST"]) {
      const streaming = call("POST", "/message:stream", { body: userMessage("hold on") });
      await s.runtime.whenHeld(1);
      const working = await call("GET", "/tasks?status=TASK_STATE_WORKING");
      const [running] = working.json.tasks as Array<{ id: string }>;
      const firstEvent = await new Promise<{ text: string; rest: Promise<string> }>((resolve, reject) => {
        const url = new URL(`${s.base}/tasks/${running.id}:subscribe`);
        const request = http.request(url, { method, headers: V1 }, (response) => {
          expect(response.headers["content-type"]).to.match(/^text\/event-stream/);
          let text = "";
          let resolved = false;
          const rest = new Promise<string>((done) => response.on("end", () => done(text)));
          response.on("data", (chunk: Buffer) => {
            text += chunk.toString("utf8");
            if (!resolved && text.includes("\n\n")) {
              resolved = true;
              resolve({ text, rest });
            }
          });
        });
        request.on("error", reject);
        request.end();
      });
      expect(Object.keys(sseEvents(firstEvent.text)[0])).to.deep.equal(["task"]);
      s.runtime.release();
      const events = sseEvents(await firstEvent.rest);
      const last = events[events.length - 1].statusUpdate as { status: { state: string } };
      expect(last.status.state, method).to.equal("TASK_STATE_INPUT_REQUIRED");
      await streaming;
    }
  });

  it("answers the push config routes with PUSH_NOTIFICATION_NOT_SUPPORTED (capability off)", async () => {
    const task = await finishedTask();
    const base = `/tasks/${task.id}/pushNotificationConfigs`;
    restError(
      await call("POST", base, { body: { url: "https://example.invalid/hook" } }),
      400,
      "PUSH_NOTIFICATION_NOT_SUPPORTED",
    );
    restError(await call("GET", base), 400, "PUSH_NOTIFICATION_NOT_SUPPORTED");
    restError(await call("GET", `${base}/cfg-1`), 400, "PUSH_NOTIFICATION_NOT_SUPPORTED");
    restError(await call("DELETE", `${base}/cfg-1`), 400, "PUSH_NOTIFICATION_NOT_SUPPORTED");
  });

  it("GET /extendedAgentCard without auth is 400 UNSUPPORTED_OPERATION (it MUST require authentication)", async () => {
    restError(await call("GET", "/extendedAgentCard"), 400, "UNSUPPORTED_OPERATION");
  });

  it("needs A2A-Version 1.0 (header or query parameter)", async () => {
    restError(await call("GET", "/tasks", { headers: { "A2A-Version": "" } }), 400, "VERSION_NOT_SUPPORTED");
    restError(
      await call("GET", "/tasks", { headers: { "A2A-Version": "99.0" } }),
      400,
      "VERSION_NOT_SUPPORTED",
    );
    const viaQuery = await fetch(`${s.base}/tasks?A2A-Version=1.0`);
    expect(viaQuery.status).to.equal(200);
    const repeated = await fetch(`${s.base}/tasks?A2A-Version=1.0&A2A-Version=2.0`);
    expect(repeated.status).to.equal(200);
    const badQuery = await fetch(`${s.base}/tasks?A2A-Version=2.0`);
    expect(badQuery.status).to.equal(400);
  });

  it("rejects bodies that are not JSON objects of the request message", async () => {
    const textPlain = await call("POST", "/message:send", {
      raw: JSON.stringify(userMessage("x")),
      headers: { "Content-Type": "text/plain" },
    });
    restError(textPlain, 400, "CONTENT_TYPE_NOT_SUPPORTED");
    restError(
      await call("POST", "/message:send", {
        raw: "{not json",
        headers: { "Content-Type": "application/json" },
      }),
      400,
      "PARSE_ERROR",
    );
    restError(await call("POST", "/message:send", { body: [1, 2] }), 400, "INVALID_PARAMS");
    restError(await call("POST", "/message:send", { body: {} }), 400, "INVALID_PARAMS");
    restError(await call("POST", "/message:send"), 400, "INVALID_PARAMS");
    restError(
      await call("POST", "/message:send", {
        body: { message: { messageId: "m", role: "ROLE_NOBODY", parts: [] } },
      }),
      400,
      "INVALID_PARAMS",
    );
    restError(await call("POST", "/message:stream", { body: {} }), 400, "INVALID_PARAMS");
    restError(
      await call("POST", "/message:send", { body: userMessage("x", { taskId: "no-such-task" }) }),
      404,
      "TASK_NOT_FOUND",
    );
  });

  it("rejects a body larger than the limit without reading it", async () => {
    const reply = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request(`${s.base}/message:send`, {
        method: "POST",
        headers: { ...V1, "Content-Type": "application/json", "Content-Length": String(64 * 1024 * 1024) },
      });
      request.on("response", (response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
        response.on("end", () => {
          request.destroy();
          resolve({ status: response.statusCode ?? 0, body });
        });
      });
      request.on("error", reject);
      request.write("{");
    });
    expect(reply.status).to.equal(400);
    const body = JSON.parse(reply.body) as { error: { details: Array<{ reason: string }> } };
    expect(body.error.details[0].reason).to.equal("INVALID_REQUEST");
  });

  it("answers 405 for a known path with another method and 404 for unknown paths", async () => {
    const wrongMethod = await call("GET", "/message:send");
    expect(wrongMethod.status).to.equal(405);
    const unknown = await call("GET", "/no/such/route/here");
    expect(unknown.status).to.equal(404);
  });

  it("serves the REST routes to HTTP/2 (h2c) clients on the same port", async () => {
    const session = http2.connect(s.base);
    try {
      const reply = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const stream = session.request({
          ":method": "POST",
          ":path": "/message:send",
          "content-type": "application/json",
          "a2a-version": "1.0",
        });
        let status = 0;
        let body = "";
        stream.on("response", (headers) => (status = Number(headers[":status"])));
        stream.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
        stream.on("end", () => resolve({ status, body }));
        stream.on("error", reject);
        stream.end(JSON.stringify(userMessage("over h2c")));
      });
      expect(reply.status).to.equal(200);
      validAs("a2a/protojson/SendMessageResponse", JSON.parse(reply.body));
    } finally {
      session.close();
    }
  });
});

describe("a2a-bindings: REST binding with auth", () => {
  const basic = `Basic ${Buffer.from("alice:pw").toString("base64")}`;
  let s: BindingsServer;
  before(async () => {
    s = await startBindingsServer({ "basic-username": "alice", "basic-password": "pw" });
  });
  after(() => s.close());

  it("answers 401 {error: Unauthorized} on every route without credentials, serves them with", async () => {
    for (const [method, path] of [
      ["POST", "/message:send"],
      ["GET", "/tasks"],
      ["GET", "/tasks/x"],
      ["POST", "/tasks/x:cancel"],
      ["GET", "/tasks/x:subscribe"],
      ["GET", "/extendedAgentCard"],
      ["GET", "/acme/tasks"],
    ]) {
      const reply = await fetch(`${s.base}${path}`, { method, headers: V1 });
      expect(reply.status, `${method} ${path}`).to.equal(401);
      expect(await reply.json()).to.deep.equal({ error: "Unauthorized" });
    }
    const ok = await fetch(`${s.base}/extendedAgentCard`, { headers: { ...V1, Authorization: basic } });
    expect(ok.status).to.equal(200);
    const card = await fetch(`${s.base}/.well-known/agent-card.json`);
    expect(card.status, "the public card needs no auth").to.equal(200);
  });

  it("GET /extendedAgentCard returns the extended card to an authenticated caller", async () => {
    const response = await fetch(`${s.base}/extendedAgentCard`, { headers: { ...V1, Authorization: basic } });
    expect(response.status).to.equal(200);
    const reply = { json: (await response.json()) as Json };
    expect(reply.json.name).to.equal("iac-code");
    expect((reply.json.capabilities as { extendedAgentCard: boolean }).extendedAgentCard).to.equal(true);
    type Extension = { uri: string; params?: Json };
    const extensions = (reply.json.capabilities as { extensions: Extension[] }).extensions;
    const details = extensions.find((e) => e.uri === "urn:iac-code:a2a:runtime-details:v1")?.params as {
      transports: Array<{ protocolBinding: string; url: string }>;
      tls: boolean;
      thinkingExposure: string[];
      limits: Record<string, number>;
    };
    expect(details.transports.map((t) => t.protocolBinding)).to.deep.equal(["JSONRPC", "HTTP+JSON", "GRPC"]);
    expect(details.transports[2].url).to.equal(s.server.grpcTarget);
    expect(details.tls).to.equal(false);
    expect(details.thinkingExposure).to.deep.equal(["tool_trace"]);
    expect(details.limits.multimodalFileBytes).to.equal(25 * 1024 * 1024);
    expect(details.limits.listTasksMaxPageSize).to.equal(100);
    // The public card does not carry them.
    const publicCard = (await (await fetch(`${s.base}/.well-known/agent-card.json`)).json()) as {
      capabilities: { extensions: Extension[] };
    };
    expect(publicCard.capabilities.extensions.map((e) => e.uri)).to.not.include(
      "urn:iac-code:a2a:runtime-details:v1",
    );
    expect((reply.json.skills as Array<{ id: string }>).map((skill) => skill.id)).to.include(
      "iac_code_runtime_details",
    );
  });
});
