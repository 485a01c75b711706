// Issue 4's "Done when", end to end: `iac-code a2a` runs as a child process
// whose environment names only IAC_CODE_API_KEY and IAC_CODE_BASE_URL (plus a
// private HOME and config dir), pointing at the local OpenAI-compatible fixture.
// The official @a2a-js/sdk 1.3.0 JSON-RPC client asks "create a VPC template"
// and gets streamed text, a permission request for the file write, and after
// allowing it, the file in the workspace and the model's closing text.
import { expect } from "chai";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { SendMessageRequest, TaskState, type StreamResponse } from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  type Client,
} from "@a2a-js/sdk/client";
import { chunk, OpenAiFixture, type RecordedRequest } from "../fixtures/openai-server.js";
import { cleanEnv, removeDir, startCli, tempDir, type CliChild } from "./helpers.js";

const API_KEY = "sk-e2e-fixture-key-0123456789";
const TEMPLATE = [
  "ROSTemplateFormatVersion: '2015-09-01'",
  "Description: A VPC.",
  "Resources:",
  "  Vpc:",
  "    Type: ALIYUN::ECS::VPC",
  "    Properties:",
  "      CidrBlock: 192.168.0.0/16",
  "",
].join("\n");

type Json = Record<string, unknown>;

/** The model: text then a write_file call; after the tool result, a closing text. */
function model(request: RecordedRequest) {
  const messages = (request.body.messages ?? []) as Json[];
  const last = messages.at(-1);
  if (last?.role === "tool") {
    return {
      chunks: [
        chunk.text("Done: "),
        chunk.text(`the workspace now has vpc.yaml (tool said: ${String(last.content)})`),
        chunk.finish("stop"),
        chunk.usage(120, 20),
      ],
    };
  }
  const args = JSON.stringify({ path: "vpc.yaml", content: TEMPLATE });
  return {
    chunks: [
      chunk.text("I'll create a VPC template "),
      chunk.text("and write it to vpc.yaml."),
      // Arguments arrive before the id and the name, split over chunks.
      chunk.toolCall({ index: 0, args: args.slice(0, 10) }),
      chunk.toolCall({ index: 0, id: "call_vpc_1", name: "write_file", args: args.slice(10, 40) }),
      chunk.toolCall({ index: 0, args: args.slice(40) }),
      chunk.finish("tool_calls"),
      chunk.usage(100, 30),
    ],
  };
}

function textOf(event: StreamResponse): string | undefined {
  const payload = event.payload;
  if (payload?.$case !== "statusUpdate") return undefined;
  const content = payload.value.status?.message?.parts[0]?.content;
  return content?.$case === "text" ? content.value : undefined;
}

function iacOf(event: StreamResponse): Json | undefined {
  const payload = event.payload;
  if (payload?.$case === "statusUpdate") return payload.value.metadata?.iac_code as Json | undefined;
  if (payload?.$case === "task") return payload.value.metadata?.iac_code as Json | undefined;
  return undefined;
}

function stateOf(event: StreamResponse): TaskState | undefined {
  const payload = event.payload;
  if (payload?.$case === "statusUpdate") return payload.value.status?.state;
  if (payload?.$case === "task") return payload.value.status?.state;
  return undefined;
}

describe("e2e: issue 4 'Done when' (iac-code a2a + OpenAI-compatible endpoint + @a2a-js/sdk)", function () {
  this.timeout(60_000);
  let fixture: OpenAiFixture;
  let dir: string;
  let workspace: string;
  let cli: CliChild;
  let client: Client;

  before(async () => {
    fixture = await OpenAiFixture.start();
    fixture.respond = model;
    dir = tempDir();
    const project = path.join(dir, "project");
    mkdirSync(project, { recursive: true });
    // The default workspace of a message without a cwd (created by the server at start-up).
    workspace = path.join(dir, "config", "workspace");
    const env = cleanEnv(path.join(dir, "home"), {
      IAC_CODE_API_KEY: API_KEY,
      IAC_CODE_BASE_URL: fixture.url,
      IAC_CODE_CONFIG_DIR: path.join(dir, "config"),
    });
    mkdirSync(env.HOME!, { recursive: true });
    // Run in a project directory, as a user would; the messages name no cwd.
    cli = await startCli(["a2a", "--port", "0"], env, project);
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory()],
      }),
    );
    client = await factory.createFromUrl(cli.url);
  });

  after(async () => {
    await cli?.stop();
    await fixture?.close();
    if (dir) removeDir(dir);
  });

  it("streams text, asks to write the file, and writes it after allow_once", async () => {
    // The start-up line names the generic OpenAI-compatible provider (its model is the endpoint's first).
    const banner = cli
      .stdout()
      .split("\n")
      .find((l) => l.startsWith("iac-code A2A server listening on"));
    expect(banner).to.match(/; model openai_compatible\/auto\)$/);
    const health = (await (await fetch(`${cli.url}health`)).json()) as { runtime: Json };
    expect(health.runtime).to.deep.include({ demo: false, provider: "openai_compatible" });

    const first: StreamResponse[] = [];
    for await (const event of client.sendMessageStream(
      SendMessageRequest.fromJSON({
        message: { messageId: "done-when-1", role: "ROLE_USER", parts: [{ text: "create a VPC template" }] },
      }),
    )) {
      first.push(event);
      // The server keeps the stream open while it waits; leave once the question is here.
      if (stateOf(event) === TaskState.TASK_STATE_INPUT_REQUIRED && iacOf(event)?.input) break;
    }
    expect(first[0].payload?.$case).to.equal("task");
    const streamed = first.map(textOf).filter(Boolean);
    expect(streamed).to.deep.equal(["I'll create a VPC template ", "and write it to vpc.yaml."]);
    const envelope = iacOf(first.at(-1)!)!.input as Json;
    expect(envelope).to.deep.include({
      kind: "permission",
      toolName: "write_file",
      toolUseId: "call_vpc_1",
      target: "vpc.yaml",
    });
    expect(existsSync(path.join(workspace, "vpc.yaml"))).to.equal(false);

    // What reached the endpoint: the key as a bearer token, the endpoint's model, the tools.
    const [firstCall] = fixture.requests;
    expect(firstCall.headers.authorization).to.equal(`Bearer ${API_KEY}`);
    expect(firstCall.body).to.deep.include({ model: "fixture-model", stream: true });
    expect(fixture.modelListings).to.equal(1);
    const tools = (firstCall.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
    expect(tools).to.include("write_file");

    const task = first[0].payload?.$case === "task" ? first[0].payload.value : undefined;
    const second: StreamResponse[] = [];
    for await (const event of client.sendMessageStream(
      SendMessageRequest.fromJSON({
        message: {
          messageId: "done-when-2",
          role: "ROLE_USER",
          taskId: task!.id,
          contextId: task!.contextId,
          parts: [
            {
              mediaType: "application/json",
              data: {
                schemaVersion: 1,
                kind: "permission",
                requestTaskId: task!.id,
                inputId: envelope.inputId,
                toolUseId: envelope.toolUseId,
                decision: "allow_once",
              },
            },
          ],
        },
      }),
    )) {
      second.push(event);
    }
    expect(readFileSync(path.join(workspace, "vpc.yaml"), "utf8")).to.equal(TEMPLATE);
    const closing = second.map(textOf).filter(Boolean).join("");
    expect(closing).to.include("Done: the workspace now has vpc.yaml (tool said: Created vpc.yaml");
    expect(stateOf(second.at(-1)!)).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(iacOf(second.at(-1)!)).to.not.have.property("input");
    expect(second.some((e) => e.payload?.$case === "artifactUpdate")).to.equal(true);

    // The model was given the tool result on the same call id.
    const chat = fixture.requests.filter((r) => r.path.endsWith("/chat/completions"));
    expect(chat).to.have.length(2);
    const toolMessage = (chat[1].body.messages as Json[]).at(-1)!;
    expect(toolMessage).to.deep.include({ role: "tool", tool_call_id: "call_vpc_1" });
    // The key never reaches the server's logs.
    expect(cli.stderr()).to.not.include(API_KEY);
  });
});
