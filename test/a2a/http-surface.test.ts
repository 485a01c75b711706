/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call -- tests read free-form JSON-RPC replies through `any` */
import { expect } from "chai";
import { parseA2AHealth, schemaIndex } from "../../src/contract/index.js";
import { cleanup, post, rpc, startTestServer, type TestServer } from "./helpers.js";

describe("A2A HTTP surface", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(async () => {
    await t.close();
    cleanup(t.dir);
  });

  it("GET /health answers healthy with the version and runtime", async () => {
    const res = await fetch(new URL("/health", t.url));
    expect(res.status).to.equal(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.status).to.equal("healthy");
    expect(parseA2AHealth(body).ok, JSON.stringify(body)).to.equal(true);
    expect(body.runtime).to.deep.equal({ demo: false, provider: "scripted", model: "fake-model" });
  });

  it("serves the agent card with cache validators and 304 on If-None-Match", async () => {
    const res = await fetch(new URL("/.well-known/agent-card.json", t.url));
    expect(res.status).to.equal(200);
    expect(res.headers.get("cache-control")).to.equal("public, max-age=60");
    const etag = res.headers.get("etag")!;
    expect(etag).to.match(/^"sha256-[0-9a-f]{64}"$/);
    expect(res.headers.get("last-modified")).to.match(/GMT$/);
    const card = (await res.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form JSON
    expect(card.name).to.equal("iac-code");
    const validCard = schemaIndex["a2a/protojson/AgentCard"].validate;
    expect(validCard(card), JSON.stringify(validCard.errors)).to.equal(true);
    expect(card.supportedInterfaces[0]).to.deep.equal({
      url: t.url,
      protocolBinding: "JSONRPC",
      protocolVersion: "1.0",
    });
    expect(card.capabilities.streaming).to.equal(true);
    expect(card.capabilities.pushNotifications).to.equal(false);
    expect(card.capabilities.extendedAgentCard).to.equal(false); // no auth configured
    expect(card.capabilities.extensions.map((e: { uri: string }) => e.uri)).to.deep.equal([
      "urn:iac-code:a2a:artifact-metadata:v1",
      "urn:iac-code:a2a:thinking-exposure:v1",
    ]);
    expect(card.capabilities.extensions[1].params).to.deep.equal({ enabledTypes: ["tool_trace"] });
    expect(card.defaultOutputModes).to.deep.equal(["text/plain"]);
    expect(card.defaultInputModes).to.include.members([
      "text/plain",
      "application/json",
      "image/png",
      "audio/mpeg",
    ]);
    expect(card.skills.map((s: { id: string }) => s.id)).to.deep.equal([
      "iac_generation",
      "iac_review",
      "aliyun_ros_operations",
      "terraform_ros_conversion",
    ]);
    expect(card).to.not.have.property("securitySchemes");

    const again = await fetch(new URL("/.well-known/agent-card.json", t.url), {
      headers: { "If-None-Match": etag },
    });
    expect(again.status).to.equal(304);
    expect(await again.text()).to.equal("");
    expect(again.headers.get("etag")).to.equal(etag);
    const other = await fetch(new URL("/.well-known/agent-card.json", t.url), {
      headers: { "If-None-Match": '"x"' },
    });
    expect(other.status).to.equal(200);
    await other.arrayBuffer();
  });

  it("answers bad JSON with -32700 and id null", async () => {
    const reply = await post(t.url, "{not json", { "A2A-Version": "1.0" });
    expect(reply.status).to.equal(200);
    expect(reply.body).to.deep.include({ jsonrpc: "2.0", id: null });
    expect((reply.body.error as { code: number }).code).to.equal(-32700);
  });

  it("answers bad envelopes with -32600", async () => {
    const cases = [
      "[]",
      '{"jsonrpc":"1.0","id":1,"method":"GetTask","params":{"id":"x"}}',
      '{"jsonrpc":"2.0","id":1,"params":{}}',
      '{"jsonrpc":"2.0","id":{"a":1},"method":"GetTask"}',
      '"just a string"',
    ];
    for (const body of cases) {
      const reply = await post(t.url, body, { "A2A-Version": "1.0" });
      expect((reply.body.error as { code: number }).code, body).to.equal(-32600);
    }
  });

  it("answers unknown methods with -32601 and echoes the id", async () => {
    const reply = await post(t.url, '{"jsonrpc":"2.0","id":"abc","method":"message/send","params":{}}', {
      "A2A-Version": "1.0",
    });
    expect(reply.body.id).to.equal("abc");
    expect((reply.body.error as { code: number }).code).to.equal(-32601);
  });

  it("answers bad params with -32602 and ErrorInfo data", async () => {
    const reply = await rpc(t.url, "GetTask", { id: 42, historyLength: "many" });
    const error = reply.body.error as { code: number; data: Array<Record<string, unknown>> };
    expect(error.code).to.equal(-32602);
    expect(error.data[0]).to.include({
      "@type": "type.googleapis.com/google.rpc.ErrorInfo",
      reason: "INVALID_PARAMS",
      domain: "a2a-protocol.org",
    });
    const notObject = await rpc(t.url, "GetTask", [1, 2]);
    expect((notObject.body.error as { code: number }).code).to.equal(-32602);
    const missing = await rpc(t.url, "SendMessage", {});
    expect((missing.body.error as { code: number }).code).to.equal(-32602);
  });

  it("accepts snake_case params (ProtoJSON)", async () => {
    const reply = await rpc(t.url, "ListTasks", { page_size: 5, include_artifacts: true });
    expect(reply.body.result).to.deep.include({ pageSize: 5, totalSize: 0, nextPageToken: "", tasks: [] });
  });

  it("rejects a missing or unsupported A2A-Version with -32009", async () => {
    for (const headers of [{ "A2A-Version": "" }, { "A2A-Version": "0.3" }, { "A2A-Version": "2.0" }]) {
      const reply = await post(
        t.url,
        '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}',
        headers,
      );
      const error = reply.body.error as { code: number; message: string; data: Array<{ reason: string }> };
      expect(error.code, JSON.stringify(headers)).to.equal(-32009);
      expect(error.data[0].reason).to.equal("VERSION_NOT_SUPPORTED");
    }
    const noHeader = await fetch(t.url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}',
    });
    const body = (await noHeader.json()) as { error: { code: number; message: string } };
    expect(body.error.code).to.equal(-32009);
    expect(body.error.message).to.equal(
      "A2A version '0.3' is not supported by this handler. Expected version '1.0'.",
    );
    for (const ok of ["1", "1.0", "1.0.2"]) {
      const reply = await rpc(t.url, "GetTask", { id: "nope" }, { "A2A-Version": ok });
      expect((reply.body.error as { code: number }).code, ok).to.equal(-32001);
    }
  });

  it("rejects a non-JSON Content-Type with ContentTypeNotSupported", async () => {
    const reply = await post(t.url, "hello", { "Content-Type": "text/plain", "A2A-Version": "1.0" });
    expect((reply.body.error as { code: number }).code).to.equal(-32005);
  });

  it("rejects bodies over the size limit with -32600", async () => {
    const big = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "GetTask",
      params: { id: "x".repeat(17 * 1024 * 1024) },
    });
    const reply = await post(t.url, big, { "A2A-Version": "1.0" });
    expect(reply.body.error).to.deep.include({ code: -32600, message: "Payload larger than 16777216 bytes" });
  });

  it("answers push-config methods with PushNotificationNotSupportedError when push is off", async () => {
    const reply = await rpc(t.url, "GetTaskPushNotificationConfig", { taskId: "t", id: "c" });
    const error = reply.body.error as { code: number; data: Array<{ reason: string }> };
    expect(error.code).to.equal(-32003);
    expect(error.data[0].reason).to.equal("PUSH_NOTIFICATION_NOT_SUPPORTED");
  });

  it("refuses the extended card without auth (UnsupportedOperationError: it MUST require authentication)", async () => {
    const reply = await rpc(t.url, "GetExtendedAgentCard");
    const error = reply.body.error as { code: number; data: Array<{ reason: string }> };
    expect(error.code).to.equal(-32004);
    expect(error.data[0].reason).to.equal("UNSUPPORTED_OPERATION");
  });
});
