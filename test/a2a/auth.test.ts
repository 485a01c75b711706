/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return -- tests read free-form JSON-RPC replies through `any` */
import { expect } from "chai";
import { cleanup, rpc, startTestServer, userMessage, type TestServer } from "./helpers.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests peek into free-form JSON
type Json = Record<string, any>;

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;

async function status(url: string, headers: Record<string, string>): Promise<number> {
  const reply = await rpc(url, "ListTasks", {}, headers);
  return reply.status;
}

describe("A2A authentication", () => {
  describe("all three schemes configured", () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer({
        file: {
          token: "tok-123",
          "basic-username": "alice",
          "basic-password": "s3cret",
          "api-key": "key-9",
          "api-key-header": "X-Custom-Key",
        },
      });
    });
    after(async () => {
      await t.close();
      cleanup(t.dir);
    });

    it("answers 401 {error: Unauthorized} without or with wrong credentials", async () => {
      for (const headers of [
        {},
        { Authorization: "Bearer nope" },
        { Authorization: "bearer tok-123" },
        { Authorization: basic("alice", "wrong") },
        { Authorization: basic("", "s3cret") },
        { Authorization: "Basic !!notbase64" },
        { Authorization: `Basic ${Buffer.from("alice").toString("base64")}` },
        { "X-Custom-Key": "nope" },
        { "X-API-Key": "key-9" },
      ] as Array<Record<string, string>>) {
        const reply = await rpc(t.url, "ListTasks", {}, headers);
        expect(reply.status, JSON.stringify(headers)).to.equal(401);
        expect(reply.body).to.deep.equal({ error: "Unauthorized" });
        expect(reply.contentType).to.match(/^application\/json/);
      }
    });

    it("accepts any configured scheme", async () => {
      expect(await status(t.url, { Authorization: "Bearer tok-123" })).to.equal(200);
      expect(await status(t.url, { Authorization: basic("alice", "s3cret") })).to.equal(200);
      expect(await status(t.url, { "x-custom-key": "key-9" })).to.equal(200);
    });

    it("keeps the card and health public and advertises the schemes", async () => {
      const health = await fetch(new URL("/health", t.url));
      expect(health.status).to.equal(200);
      await health.arrayBuffer();
      const res = await fetch(new URL("/.well-known/agent-card.json", t.url));
      const card = (await res.json()) as Json;
      expect(card.securitySchemes).to.deep.equal({
        bearerAuth: { httpAuthSecurityScheme: { scheme: "bearer" } },
        basicAuth: { httpAuthSecurityScheme: { scheme: "basic" } },
        apiKeyAuth: { apiKeySecurityScheme: { location: "header", name: "X-Custom-Key" } },
      });
      expect(card.securityRequirements).to.deep.equal([
        { schemes: { bearerAuth: { list: [""] } } },
        { schemes: { basicAuth: { list: [""] } } },
        { schemes: { apiKeyAuth: { list: [""] } } },
      ]);
      expect(card.description).to.not.include("Unauthenticated");
      expect(card.capabilities.extendedAgentCard).to.equal(true);
    });

    it("scopes tasks to the caller's identity", async () => {
      const bearer = { Authorization: "Bearer tok-123" };
      const alice = { Authorization: basic("alice", "s3cret") };
      const created = await rpc(
        t.url,
        "SendMessage",
        { message: userMessage("mine", { contextId: "ctx-owned" }) },
        bearer,
      );
      const task = (created.body.result as Json).task as Json;
      expect((await rpc(t.url, "GetTask", { id: task.id }, bearer)).body.result).to.have.property(
        "id",
        task.id,
      );
      const foreign = await rpc(t.url, "GetTask", { id: task.id }, alice);
      expect(foreign.body.error).to.deep.include({ code: -32001 });
      expect((await rpc(t.url, "CancelTask", { id: task.id }, alice)).body.error).to.deep.include({
        code: -32001,
      });
      expect((await rpc(t.url, "SubscribeToTask", { id: task.id }, alice)).body.error).to.deep.include({
        code: -32001,
      });
      expect(
        (await rpc(t.url, "SendMessage", { message: userMessage("x", { taskId: task.id }) }, alice)).body
          .error,
      ).to.deep.include({ code: -32001 });
      const list = (await rpc(t.url, "ListTasks", {}, alice)).body.result as Json;
      expect((list.tasks as Json[]).map((x) => x.id)).to.not.include(task.id);
      const mine = (await rpc(t.url, "ListTasks", {}, bearer)).body.result as Json;
      expect((mine.tasks as Json[]).map((x) => x.id)).to.include(task.id);
      // Someone else's context id cannot be borrowed.
      const borrowed = await rpc(
        t.url,
        "SendMessage",
        { message: userMessage("hijack", { contextId: "ctx-owned" }) },
        alice,
      );
      const failed = (borrowed.body.result as Json).task as Json;
      expect(failed.status.state).to.equal("TASK_STATE_FAILED");
      expect(failed.status.message.parts[0].text).to.equal("A2A context belongs to a different caller.");
    });

    it("serves the extended card to authenticated callers only", async () => {
      const anonymous = await rpc(t.url, "GetExtendedAgentCard", {});
      expect(anonymous.status).to.equal(401);
      const ok = await rpc(t.url, "GetExtendedAgentCard", {}, { Authorization: "Bearer tok-123" });
      expect(((ok.body.result as Json).skills as Json[]).at(-1)!.id).to.equal("iac_code_runtime_details");
    });
  });

  for (const [name, file, good, bad] of [
    [
      "bearer only",
      { token: "only-token" },
      { Authorization: "Bearer only-token" },
      { Authorization: "Bearer x" },
    ],
    [
      "basic only",
      { "basic-username": "u", "basic-password": "p" },
      { Authorization: basic("u", "p") },
      { Authorization: basic("u", "q") },
    ],
    ["api key only (default header)", { "api-key": "k" }, { "X-API-Key": "k" }, { "X-API-Key": "j" }],
  ] as Array<[string, Json, Record<string, string>, Record<string, string>]>) {
    it(`${name}: accepts the right credential and refuses the wrong one`, async () => {
      const t = await startTestServer({ file });
      try {
        expect(await status(t.url, good)).to.equal(200);
        expect(await status(t.url, bad)).to.equal(401);
        expect(await status(t.url, {})).to.equal(401);
      } finally {
        await t.close();
        cleanup(t.dir);
      }
    });
  }

  it("reads the bearer token from IACCODE_A2A_HTTP_TOKEN when the file has none", async () => {
    const t = await startTestServer({ env: { IACCODE_A2A_HTTP_TOKEN: "env-token" } });
    try {
      expect(await status(t.url, { Authorization: "Bearer env-token" })).to.equal(200);
      expect(await status(t.url, {})).to.equal(401);
    } finally {
      await t.close();
      cleanup(t.dir);
    }
  });

  it("without auth every caller is anonymous, the card says so and declares no extended card", async () => {
    const t = await startTestServer();
    try {
      expect(await status(t.url, {})).to.equal(200);
      const card = (await (await fetch(new URL("/.well-known/agent-card.json", t.url))).json()) as Json;
      expect(card.description).to.include(
        "Unauthenticated A2A server mode is intended for trusted local environments.",
      );
      // GetExtendedAgentCard MUST require authentication (A2A spec): none to serve, none declared.
      expect(card.capabilities.extendedAgentCard).to.equal(false);
      const extended = await t.rpc("GetExtendedAgentCard", {});
      expect(extended.body.error).to.deep.include({
        code: -32004,
        message: "The extended agent card requires authentication, and none is configured on this transport.",
      });
    } finally {
      await t.close();
      cleanup(t.dir);
    }
  });

  it("requires configured extensions in A2A-Extensions", async () => {
    const uri = "urn:iac-code:a2a:artifact-metadata:v1";
    const t = await startTestServer({ file: { "required-extensions": [uri, "urn:example:other"] } });
    try {
      const missing = await t.rpc("SendMessage", { message: userMessage("hi") });
      expect(missing.body.error).to.deep.include({
        code: -32008,
        message: `Required A2A extensions were not requested: urn:example:other, ${uri}`,
      });
      expect(t.runtime.prompts).to.have.length(0);
      const partial = await t.rpc("GetTask", { id: "x" }, { "A2A-Extensions": uri });
      expect((partial.body.error as Json).code).to.equal(-32008);
      const ok = await t.rpc(
        "SendMessage",
        { message: userMessage("hi") },
        { "A2A-Extensions": `${uri}, urn:example:other` },
      );
      expect(((ok.body.result as Json).task as Json).status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
      const card = (await (await fetch(new URL("/.well-known/agent-card.json", t.url))).json()) as Json;
      const required = (card.capabilities.extensions as Json[]).filter((e) => e.required).map((e) => e.uri);
      expect(required).to.deep.equal([uri, "urn:example:other"]);
      // GetExtendedAgentCard checks no extensions: refused for want of auth, not for the extensions.
      const extended = await t.rpc("GetExtendedAgentCard", {});
      expect((extended.body.error as Json).data[0].reason).to.equal("UNSUPPORTED_OPERATION");
    } finally {
      await t.close();
      cleanup(t.dir);
    }
  });
});
