/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return -- tests read free-form JSON-RPC replies through `any` */
import { expect } from "chai";
import {
  cleanup,
  openStream,
  resultOf,
  startTestServer,
  stateOf,
  userMessage,
  type AnyJson,
} from "./helpers.js";

describe("A2A permissions and thinking exposure settings", () => {
  it("auto-approve-permissions answers permission requests itself and audits them", async () => {
    const t = await startTestServer({ file: { "auto-approve-permissions": true } });
    try {
      const stream = await openStream(t.url, "SendStreamingMessage", {
        message: userMessage("[[permission]] go"),
      });
      const events = await stream.rest();
      expect(events.map(stateOf)).to.not.include(undefined);
      const metas = events
        .map((e) => resultOf(e).statusUpdate?.metadata?.iac_code as AnyJson | undefined)
        .filter(Boolean);
      expect(metas.some((m) => m!.input)).to.equal(false);
      const permission = metas.find((m) => m!.permission)!.permission;
      expect(permission).to.deep.equal({
        autoApproved: true,
        toolName: "write_file",
        toolUseId: permission.toolUseId,
      });
      const texts = events
        .map((e) => resultOf(e).statusUpdate?.status?.message?.parts?.[0]?.text)
        .filter(Boolean);
      expect(texts).to.include("Answer allow_once for write_file.");
      expect(stateOf(events.at(-1)!)).to.equal("TASK_STATE_INPUT_REQUIRED");
      const entry = (await t.server.state.audit.entries()).at(-1);
      expect(entry).to.include({
        toolName: "write_file",
        decision: "allow_once",
        reason: "auto-approve-permissions",
      });
    } finally {
      await t.close();
      cleanup(t.dir);
    }
  });

  it("thinking-exposure none hides tool trace and thinking but keeps artifacts, text and usage", async () => {
    const t = await startTestServer({ file: { "thinking-exposure": "none" } });
    try {
      const card = (await (await fetch(new URL("/.well-known/agent-card.json", t.url))).json()) as AnyJson;
      expect((card.capabilities.extensions as AnyJson[]).map((e) => e.uri)).to.deep.equal([
        "urn:iac-code:a2a:artifact-metadata:v1",
      ]);
      const stream = await openStream(t.url, "SendStreamingMessage", {
        message: userMessage("[[think]] [[tool]] x"),
      });
      const events = await stream.rest();
      const metas = events
        .map((e) => resultOf(e).statusUpdate?.metadata?.iac_code as AnyJson | undefined)
        .filter(Boolean);
      expect(metas.some((m) => m!.tool || m!.thinking || m!.permission)).to.equal(false);
      expect(metas.some((m) => m!.usage)).to.equal(true);
      expect(events.some((e) => resultOf(e).artifactUpdate)).to.equal(true);
    } finally {
      await t.close();
      cleanup(t.dir);
    }
  });

  it("tool-trace alone hides raw thinking", async () => {
    const t = await startTestServer();
    try {
      const stream = await openStream(t.url, "SendStreamingMessage", { message: userMessage("[[think]] x") });
      const events = await stream.rest();
      expect(events.some((e) => resultOf(e).statusUpdate?.metadata?.iac_code?.thinking)).to.equal(false);
    } finally {
      await t.close();
      cleanup(t.dir);
    }
  });
});
