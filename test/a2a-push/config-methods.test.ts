// The four push config methods with push-notifications on, through
// @a2a-js/sdk 1.3 over each binding (JSON-RPC, HTTP+JSON, gRPC): create (id
// defaults to the task id, same id overwrites, secrets never echoed), get,
// list in id order with page tokens, delete (a missing config is silent),
// owner isolation; then the JSON-RPC details: field-naming rejections, the
// inline config of SendMessage, and PushNotificationNotSupportedError when off.
import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { SendMessageRequest, type Task } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import {
  BINDINGS,
  sdkClient,
  startBindingsServer,
  type BindingsServer,
} from "../a2a-bindings/fixtures/server.js";
import { rpc } from "../a2a/helpers.js";

const BEARER = { serviceParameters: { authorization: "Bearer tok-a" } };
const OTHER = { serviceParameters: { "X-API-Key": "key-b" } };
const HOOK = "https://hooks.example.com/a2a";

function message(text: string): SendMessageRequest {
  return SendMessageRequest.fromJSON({
    message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }] },
  });
}

async function reasonOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as { reason?: string }).reason ?? String(error);
  }
  throw new Error("expected the call to fail");
}

async function pushCapability(base: string): Promise<unknown> {
  const card = (await (await fetch(`${base}/.well-known/agent-card.json`)).json()) as {
    capabilities: { pushNotifications?: boolean };
  };
  return card.capabilities.pushNotifications;
}

const config = (taskId: string, extra: Record<string, unknown> = {}) => ({
  tenant: "",
  id: "",
  taskId,
  url: HOOK,
  token: "",
  authentication: undefined,
  ...extra,
});

for (const binding of BINDINGS) {
  describe(`a2a-push: config methods through @a2a-js/sdk over ${binding}`, () => {
    let s: BindingsServer;
    let client: Client;
    let taskId: string;

    before(async () => {
      s = await startBindingsServer({ "push-notifications": true, token: "tok-a", "api-key": "key-b" });
      client = await sdkClient(s.base, binding);
      taskId = ((await client.sendMessage(message("hello"), BEARER)) as Task).id;
    });
    after(() => s.close());

    it("the card says pushNotifications: true", async () => {
      expect(await pushCapability(s.base)).to.equal(true);
    });

    it("create: the id defaults to the task id, same id overwrites, token and credentials are not echoed", async () => {
      const created = await client.createTaskPushNotificationConfig(
        config(taskId, {
          id: "hook-b",
          token: "notify-secret",
          authentication: { scheme: "bearer", credentials: "cb-secret" },
        }),
        BEARER,
      );
      expect(created).to.deep.include({ id: "hook-b", taskId, url: HOOK, token: "" });
      expect(created.authentication).to.deep.include({ scheme: "bearer", credentials: "" });
      const defaulted = await client.createTaskPushNotificationConfig(config(taskId), BEARER);
      expect(defaulted.id).to.equal(taskId);
      await client.createTaskPushNotificationConfig(
        config(taskId, { id: "hook-b", url: "https://other.example.com/cb" }),
        BEARER,
      );
      const got = await client.getTaskPushNotificationConfig({ tenant: "", taskId, id: "hook-b" }, BEARER);
      expect(got).to.deep.include({ id: "hook-b", url: "https://other.example.com/cb", token: "" });
      expect(got.authentication).to.equal(undefined);
    });

    it("list: sorted by id, pageSize 1 pages with tokens to the end", async () => {
      await client.createTaskPushNotificationConfig(config(taskId, { id: "hook-a" }), BEARER);
      // The SDK's REST client sends no pageSize / pageToken: that binding is paged with fetch.
      const page = async (
        pageToken: string,
      ): Promise<{ configs: Array<{ id: string }>; nextPageToken: string }> => {
        if (binding !== "HTTP+JSON")
          return client.listTaskPushNotificationConfig(
            { tenant: "", taskId, pageSize: 1, pageToken },
            BEARER,
          );
        const query = new URLSearchParams({ pageSize: "1", pageToken });
        const res = await fetch(`${s.base}/tasks/${taskId}/pushNotificationConfigs?${query.toString()}`, {
          headers: { Authorization: "Bearer tok-a", "A2A-Version": "1.0" },
        });
        expect(res.status).to.equal(200);
        return (await res.json()) as { configs: Array<{ id: string }>; nextPageToken: string };
      };
      const ids: string[] = [];
      let pageToken = "";
      do {
        const one = await page(pageToken);
        expect(one.configs).to.have.length(1);
        ids.push(one.configs[0].id);
        pageToken = one.nextPageToken;
      } while (pageToken);
      expect(ids).to.deep.equal(["hook-a", "hook-b", taskId].sort());
      const all = await client.listTaskPushNotificationConfig(
        { tenant: "", taskId, pageSize: 0, pageToken: "" },
        BEARER,
      );
      expect(all.configs.map((c) => c.id)).to.deep.equal(ids);
      expect(all.nextPageToken).to.equal("");
    });

    it("delete: gone afterwards (get says TASK_NOT_FOUND); deleting it again is silent", async () => {
      await client.deleteTaskPushNotificationConfig({ tenant: "", taskId, id: "hook-a" }, BEARER);
      expect(
        await reasonOf(client.getTaskPushNotificationConfig({ tenant: "", taskId, id: "hook-a" }, BEARER)),
      ).to.equal("TASK_NOT_FOUND");
      await client.deleteTaskPushNotificationConfig({ tenant: "", taskId, id: "hook-a" }, BEARER);
    });

    it("another owner sees no task: create, get, list and delete say TASK_NOT_FOUND", async () => {
      for (const call of [
        client.createTaskPushNotificationConfig(config(taskId, { id: "theirs" }), OTHER),
        client.getTaskPushNotificationConfig({ tenant: "", taskId, id: "hook-b" }, OTHER),
        client.listTaskPushNotificationConfig({ tenant: "", taskId, pageSize: 0, pageToken: "" }, OTHER),
        client.deleteTaskPushNotificationConfig({ tenant: "", taskId, id: "hook-b" }, OTHER),
      ])
        expect(await reasonOf(call)).to.equal("TASK_NOT_FOUND");
      const mine = await client.listTaskPushNotificationConfig(
        { tenant: "", taskId, pageSize: 0, pageToken: "" },
        BEARER,
      );
      expect(mine.configs.map((c) => c.id))
        .to.include("hook-b")
        .and.not.include("theirs");
    });

    it("a private callback URL is refused at create (INVALID_PARAMS)", async () => {
      expect(
        await reasonOf(
          client.createTaskPushNotificationConfig(
            config(taskId, { url: "http://127.0.0.1:9999/a2a" }),
            BEARER,
          ),
        ),
      ).to.equal("INVALID_PARAMS");
    });
  });
}

describe("a2a-push: config methods over JSON-RPC, the details", () => {
  let s: BindingsServer;
  let url: string;
  let taskId: string;

  before(async () => {
    s = await startBindingsServer({ "push-notifications": true });
    url = `${s.base}/`;
    const sent = await rpc(url, "SendMessage", {
      message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "hi" }] },
    });
    taskId = (sent.body.result as { task: { id: string } }).task.id;
  });
  after(() => s.close());

  const errorOf = (reply: { body: Record<string, unknown> }) =>
    reply.body.error as {
      code: number;
      message: string;
      data: Array<{ reason: string; metadata: Record<string, string> }>;
    };

  it("refuses bad configs with -32602, naming the field and the reason", async () => {
    for (const [params, field, text] of [
      [
        { taskId, url: "http://localhost:9/x" },
        "url",
        "A2A push callback URL must not target private or local hosts",
      ],
      [
        { taskId, url: "http://[::ffff:10.0.0.1]/x" },
        "url",
        "A2A push callback URL must not target private or local hosts",
      ],
      [
        { taskId, url: "http://169.254.169.254/x" },
        "url",
        "A2A push callback URL must not target private or local hosts",
      ],
      [{ taskId, url: "gopher://hooks.example.com/" }, "url", "A2A push callback URL must be http or https"],
      [{ taskId }, "url", "url is required"],
      [{ taskId, url: HOOK, id: "bad id!" }, "id", "Invalid A2A id"],
      [{ taskId, url: HOOK, token: "a\r\nX-Evil: 1" }, "token", "token must not contain control characters"],
      [
        { taskId, url: HOOK, authentication: { scheme: "bearer token" } },
        "authentication.scheme",
        "authentication.scheme must be an HTTP auth scheme name",
      ],
      [{ url: HOOK }, "taskId", "taskId is required"],
    ] as const) {
      const error = errorOf(await rpc(url, "CreateTaskPushNotificationConfig", params));
      expect(error.code, JSON.stringify(params)).to.equal(-32602);
      expect(error.message).to.equal(text);
      expect(error.data[0].metadata.field).to.equal(field);
    }
    const list = async (params: Record<string, unknown>) =>
      errorOf(await rpc(url, "ListTaskPushNotificationConfigs", { taskId, ...params }));
    expect((await list({ pageToken: "!!!" })).message).to.equal("Invalid page token: !!!");
    expect((await list({ pageSize: 101 })).message).to.equal("maximum page size is 100");
    expect((await list({ pageSize: -1 })).data[0].metadata.field).to.equal("pageSize");
    expect(
      errorOf(await rpc(url, "GetTaskPushNotificationConfig", { taskId: "no-such-task", id: "x" })).code,
    ).to.equal(-32001);
  });

  it("SendMessage stores configuration.taskPushNotificationConfig for the new task; a bad one creates no task", async () => {
    const sent = await rpc(url, "SendMessage", {
      message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "with hook" }] },
      configuration: { taskPushNotificationConfig: { url: HOOK, token: "inline-secret" } },
    });
    const task = (sent.body.result as { task: { id: string } }).task;
    const listed = await rpc(url, "ListTaskPushNotificationConfigs", { taskId: task.id });
    expect(listed.body.result).to.deep.equal({ configs: [{ id: task.id, taskId: task.id, url: HOOK }] });
    expect(listed.raw).to.not.include("inline-secret");

    const before = (await rpc(url, "ListTasks", {})).body.result as { totalSize: number };
    const refused = errorOf(
      await rpc(url, "SendMessage", {
        message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "bad hook" }] },
        configuration: { taskPushNotificationConfig: { url: "http://10.0.0.1/" } },
      }),
    );
    expect(refused.code).to.equal(-32602);
    expect(refused.data[0].metadata.field).to.equal("configuration.taskPushNotificationConfig.url");
    const after = (await rpc(url, "ListTasks", {})).body.result as { totalSize: number };
    expect(after.totalSize).to.equal(before.totalSize);
  });

  it("REST: create answers 201 with the config (no token), a refused URL 400 naming the field, delete 200 {}", async () => {
    const route = `${s.base}/tasks/${taskId}/pushNotificationConfigs`;
    const headers = { "Content-Type": "application/json", "A2A-Version": "1.0" };
    const created = await fetch(route, {
      method: "POST",
      headers,
      body: JSON.stringify({ id: "rest-hook", url: HOOK, token: "rest-secret" }),
    });
    expect(created.status).to.equal(201);
    expect(await created.json()).to.deep.equal({ id: "rest-hook", taskId, url: HOOK });
    const refused = await fetch(route, {
      method: "POST",
      headers,
      body: JSON.stringify({ url: "http://[::1]/" }),
    });
    expect(refused.status).to.equal(400);
    const error = (
      (await refused.json()) as {
        error: { message: string; details: Array<{ metadata: { field: string } }> };
      }
    ).error;
    expect(error.message).to.equal("A2A push callback URL must not target private or local hosts");
    expect(error.details[0].metadata.field).to.equal("url");
    const deleted = await fetch(`${route}/rest-hook`, {
      method: "DELETE",
      headers: { "A2A-Version": "1.0" },
    });
    expect(deleted.status).to.equal(200);
    expect(await deleted.json()).to.deep.equal({});
  });

  it("Delete answers {} ", async () => {
    const reply = await rpc(url, "DeleteTaskPushNotificationConfig", { taskId, id: "never-created" });
    expect(reply.body.result).to.deep.equal({});
  });
});

describe("a2a-push: push-notifications off", () => {
  let s: BindingsServer;
  before(async () => (s = await startBindingsServer()));
  after(() => s.close());

  it("every config method and an inline config answer PushNotificationNotSupportedError (-32003)", async () => {
    const url = `${s.base}/`;
    for (const [method, params] of [
      ["CreateTaskPushNotificationConfig", { taskId: "t", url: HOOK }],
      ["GetTaskPushNotificationConfig", { taskId: "t", id: "c" }],
      ["ListTaskPushNotificationConfigs", { taskId: "t" }],
      ["DeleteTaskPushNotificationConfig", { taskId: "t", id: "c" }],
      [
        "SendMessage",
        {
          message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "x" }] },
          configuration: { taskPushNotificationConfig: { url: HOOK } },
        },
      ],
    ] as const) {
      const error = (await rpc(url, method, params)).body.error as {
        code: number;
        data: Array<{ reason: string }>;
      };
      expect(error.code, method).to.equal(-32003);
      expect(error.data[0].reason).to.equal("PUSH_NOTIFICATION_NOT_SUPPORTED");
    }
    expect(await pushCapability(s.base)).to.equal(false);
  });
});
