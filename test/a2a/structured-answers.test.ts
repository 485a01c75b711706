/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return -- tests read free-form JSON-RPC replies through `any` */
// The cloud resource selection and deployment confirmation inputs over A2A:
// the envelope a waiting task shows (selector, operation, displayParameters,
// deploymentSummary, option actions), every rejection of their answer data
// parts (-32602 naming the field, the task still waiting, nothing reaching the
// runtime), and the accepted forms as the runtime receives them. A real
// in-process A2A server over loopback, the AG-UI fixture runtime asking.
import { expect } from "chai";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { parseInputAnswer, parseInputRequest } from "../../src/contract/index.js";
import { startA2aServer, type RunningA2aServer } from "../../src/a2a/server.js";
import { resolveSettings } from "../../src/a2a/config/server-settings.js";
import { createLogger } from "../../src/server/logger.js";
import { ScriptRuntime } from "../agui/fixtures/runtime.js";
import { StructuredScript } from "../agui/fixtures/structured-inputs.js";
import { cleanup, makeTempDir, rpc, userMessage, V1, type AnyJson } from "./helpers.js";

describe("A2A cloud resource selection and deployment confirmation answers", function () {
  let dir: string;
  let server: RunningA2aServer;
  let runtime: ScriptRuntime;

  before(async () => {
    dir = makeTempDir();
    const workspace = path.join(dir, "workspace");
    mkdirSync(workspace, { recursive: true });
    runtime = new ScriptRuntime();
    new StructuredScript(runtime);
    server = await startA2aServer(
      resolveSettings({ port: 0, "persistence-dir": path.join(dir, "a2a") }, {}, {}),
      {
        runtime,
        logger: createLogger({ silent: true }),
        cwd: workspace,
        env: {},
      },
    );
  });
  after(async () => {
    await server.close();
    cleanup(dir);
  });

  /** A task waiting for the structured input the directives ask. */
  async function waiting(directives: string): Promise<{ task: AnyJson; input: AnyJson }> {
    const reply = await rpc(server.url, "SendMessage", {
      message: userMessage(`[[script:structured]] ${directives}`),
    });
    const task = (reply.body.result as AnyJson).task as AnyJson;
    expect(task.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    return { task, input: task.metadata.iac_code.input as AnyJson };
  }

  function answer(task: AnyJson, data: unknown, language?: string) {
    const metadata = language ? { iac_code: { preferredLanguage: language } } : undefined;
    return rpc(server.url, "SendMessage", {
      message: userMessage("", {
        taskId: task.id,
        contextId: task.contextId,
        parts: [{ mediaType: "application/json", data }],
        ...(metadata ? { metadata } : {}),
      }),
    });
  }

  async function taskOf(id: string): Promise<AnyJson> {
    const reply = await rpc(server.url, "GetTask", { id });
    return reply.body.result as AnyJson;
  }

  /** Each rejection: -32602 with its text and field, the task still waiting, the runtime told nothing. */
  async function expectRejections(task: AnyJson, cases: Array<[unknown, string, string]>): Promise<void> {
    const before = runtime.answers.length;
    for (const [data, message, field] of cases) {
      const r = await answer(task, data);
      expect(r.body.error, message).to.deep.include({ code: -32602, message });
      const info = (r.body.error as AnyJson).data?.find((d: AnyJson) => d.reason === "INVALID_PARAMS");
      expect(info?.metadata?.field, message).to.equal(field);
    }
    expect(runtime.answers.length).to.equal(before);
    const still = await taskOf(task.id);
    expect(still.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(still.metadata.iac_code.input.inputId).to.equal(task.metadata.iac_code.input.inputId);
  }

  it("a waiting selector shows its selector, options and schema in a valid a2a/input-request", async () => {
    const { task, input } = await waiting("[[selector:vswitch.vswitch]]");
    expect(parseInputRequest(input).ok, JSON.stringify(input)).to.equal(true);
    expect(input).to.deep.include({
      kind: "cloud_resource_selection",
      requestTaskId: task.id,
      contextId: task.contextId,
      inputId: "selector-1",
      toolUseId: "select-1",
      allowFreeText: true,
    });
    expect(input.selector).to.deep.equal({
      id: "vswitch.vswitch",
      parameter: "VSwitchId",
      resourceType: "ALIYUN::ECS::VSwitch",
      source: {
        provider: "aliyun",
        product: "vpc",
        action: "DescribeVSwitches",
        regionId: "cn-shanghai",
        simulated: true,
      },
      associationPropertyMetadata: { VpcId: "${VpcId}", ZoneId: "${ZoneId}" },
    });
    expect(input.options).to.deep.equal([{ id: "vsw-bp1demo0001", label: "demo-vsw (cn-hangzhou-h)" }]);
  });

  it("a waiting confirmation shows operation, displayParameters, deploymentSummary and each option's action", async () => {
    const { input } = await waiting("[[confirm]]");
    expect(parseInputRequest(input).ok, JSON.stringify(input)).to.equal(true);
    expect(input.operation).to.equal("create");
    expect(input.displayParameters).to.deep.equal([
      { name: "ZoneId", value: "cn-hangzhou-h", label: "Zone" },
      { name: "VpcId", value: "vpc-bp1demo0001" },
      { name: "DbPassword", value: "******", label: "Database password" },
    ]);
    expect(input.deploymentSummary).to.deep.equal({
      candidateName: "Plan A",
      action: "create",
      region: "cn-hangzhou",
      stackName: "iac-demo-web",
    });
    expect(input.options.map((o: AnyJson) => [o.id, o.action])).to.deep.equal([
      ["confirm", "confirm"],
      ["adjust", "adjust"],
      ["reselect", "reselect"],
      ["cancel", "cancel"],
    ]);
  });

  describe("cloud_resource_selection answers", () => {
    const D = "message.parts[0].data";
    const selected = (task: AnyJson, input: AnyJson, extra: Record<string, unknown> = {}) => ({
      schemaVersion: 1,
      kind: "cloud_resource_selection",
      requestTaskId: task.id,
      contextId: task.contextId,
      inputId: input.inputId,
      toolUseId: input.toolUseId,
      status: "selected",
      selectorId: "vpc.vpc",
      value: "vpc-bp1demo0002",
      label: "staging-vpc",
      source: input.selector.source,
      ...extra,
    });

    it("rejects each malformed answer naming the field, then takes value and label", async () => {
      const { task, input } = await waiting("[[selector]]");
      const ok = selected(task, input);
      const without = (key: string) => Object.fromEntries(Object.entries(ok).filter(([k]) => k !== key));
      await expectRejections(task, [
        [{ ...ok, extra: 1 }, `${D}.extra is not a field of a cloud_resource_selection answer.`, `${D}.extra`],
        [{ ...ok, freeText: "vpc-x" }, `${D}.freeText is not a field of a cloud_resource_selection answer.`, `${D}.freeText`],
        [{ ...ok, status: "chosen" }, `${D}.status must be one of: selected, canceled.`, `${D}.status`],
        [without("status"), `${D}.status must be one of: selected, canceled.`, `${D}.status`],
        [without("selectorId"), `${D}.selectorId is required when status is selected.`, `${D}.selectorId`],
        [without("value"), `${D}.value is required when status is selected.`, `${D}.value`],
        [{ ...ok, value: "" }, `${D}.value must be a non-empty string of at most 1024 characters.`, `${D}.value`],
        [{ ...ok, value: "v".repeat(1025) }, `${D}.value must be a non-empty string of at most 1024 characters.`, `${D}.value`],
        [{ ...ok, value: 7 }, `${D}.value must be a non-empty string of at most 1024 characters.`, `${D}.value`],
        [{ ...ok, label: 7 }, `${D}.label must be a string of at most 1024 characters.`, `${D}.label`],
        [{ ...ok, label: "l".repeat(1025) }, `${D}.label must be a string of at most 1024 characters.`, `${D}.label`],
        [{ ...ok, selectorId: "" }, `${D}.selectorId must be a non-empty string of at most 100 characters.`, `${D}.selectorId`],
        [{ ...ok, source: "DescribeVpcs" }, `${D}.source must be an object or null.`, `${D}.source`],
        [{ ...ok, source: [] }, `${D}.source must be an object or null.`, `${D}.source`],
        [{ ...ok, contextId: "another-context" }, `${D}.contextId does not match the task's context.`, `${D}.contextId`],
        [
          { ...ok, selectorId: "vswitch.vswitch" },
          `${D}.selectorId "vswitch.vswitch" is not the selector the task asked for (vpc.vpc).`,
          `${D}.selectorId`,
        ],
        [
          { ...ok, status: "canceled", value: undefined, label: "staging-vpc" },
          `${D}.label must be left out when status is canceled.`,
          `${D}.label`,
        ],
        [
          { ...ok, status: "canceled", label: undefined },
          `${D}.value must be left out when status is canceled.`,
          `${D}.value`,
        ],
        [
          { ...ok, status: "canceled", value: undefined, label: undefined, optionsEmpty: "yes" },
          `${D}.optionsEmpty must be true or false.`,
          `${D}.optionsEmpty`,
        ],
      ]); // prettier-ignore
      // The common checks keep their texts.
      const common = await answer(task, { ...ok, requestTaskId: "other-task" });
      expect(common.body.error).to.deep.include({
        code: -32602,
        message: "Permission response taskId does not match requestTaskId.",
      });
      expect(parseInputAnswer(ok).ok).to.equal(true);
      const r = await answer(task, ok);
      expect(r.body.error).to.equal(undefined);
      expect(runtime.answers.at(-1)).to.deep.equal({
        kind: "cloud_resource_selection",
        inputId: "selector-1",
        value: "vpc-bp1demo0002",
        label: "staging-vpc",
      });
      const done = await taskOf(task.id);
      expect(done.history.at(-1).parts[0].text).to.equal("Done: selector=vpc-bp1demo0002.");
    });

    it("takes a selection without label, contextId or source (the runtime gets value alone)", async () => {
      const { task, input } = await waiting("[[selector]]");
      const data = { ...selected(task, input), label: undefined, contextId: undefined, source: undefined };
      const r = await answer(task, JSON.parse(JSON.stringify(data)));
      expect(r.body.error).to.equal(undefined);
      expect(runtime.answers.at(-1)).to.deep.equal({
        kind: "cloud_resource_selection",
        inputId: "selector-1",
        value: "vpc-bp1demo0002",
      });
    });

    for (const optionsEmpty of [true, false, undefined]) {
      it(`takes status canceled${optionsEmpty === undefined ? "" : ` with optionsEmpty ${optionsEmpty}`} as cancelled: the turn goes on`, async () => {
        const { task, input } = await waiting("[[selector]] [[empty]]");
        const data: Record<string, unknown> = {
          schemaVersion: 1,
          kind: "cloud_resource_selection",
          requestTaskId: task.id,
          inputId: input.inputId,
          toolUseId: input.toolUseId,
          status: "canceled",
          selectorId: "vpc.vpc",
        };
        if (optionsEmpty !== undefined) data.optionsEmpty = optionsEmpty;
        const r = await answer(task, data);
        expect(r.body.error).to.equal(undefined);
        const expected: Record<string, unknown> = {
          kind: "cloud_resource_selection",
          inputId: "selector-1",
          cancelled: true,
        };
        if (optionsEmpty !== undefined) expected.optionsEmpty = optionsEmpty;
        expect(runtime.answers.at(-1)).to.deep.equal(expected);
        const done = (r.body.result as AnyJson).task as AnyJson;
        expect(done.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
        expect(done.history.at(-1).parts[0].text).to.equal(
          `Done: selector=${optionsEmpty ? "cancelled (no options)" : "cancelled"}.`,
        );
      });
    }

    it("says why in the request's language", async () => {
      const { task, input } = await waiting("[[selector]]");
      const r = await answer(task, { ...selected(task, input), status: "chosen" }, "fr");
      expect(r.body.error).to.deep.include({
        code: -32602,
        message: `${D}.status doit être l'une des valeurs : selected, canceled.`,
      });
    });
  });

  describe("deployment_confirmation answers", () => {
    const D = "message.parts[0].data";
    const confirm = (task: AnyJson, input: AnyJson, extra: Record<string, unknown> = {}) => ({
      schemaVersion: 1,
      kind: "deployment_confirmation",
      requestTaskId: task.id,
      inputId: input.inputId,
      toolUseId: input.toolUseId,
      action: "adjust",
      parameter_overrides: { ZoneId: "cn-hangzhou-i", Count: 2, Public: false },
      ...extra,
    });

    it("rejects each malformed answer naming the field, then takes the action and the overrides", async () => {
      const { task, input } = await waiting("[[confirm]]");
      const ok = confirm(task, input);
      const O = `${D}.parameter_overrides`;
      const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`P${i}`, i]));
      await expectRejections(task, [
        [{ ...ok, freeText: "go" }, `${D}.freeText is not a field of a deployment_confirmation answer.`, `${D}.freeText`],
        [{ ...ok, contextId: task.contextId }, `${D}.contextId is not a field of a deployment_confirmation answer.`, `${D}.contextId`],
        [{ ...ok, selectedId: "confirm" }, `${D}.selectedId is not a field of a deployment_confirmation answer.`, `${D}.selectedId`],
        [{ ...ok, action: "deploy" }, `${D}.action must be one of: confirm, adjust, reselect, cancel.`, `${D}.action`],
        [{ ...ok, action: undefined }, `${D}.action must be one of: confirm, adjust, reselect, cancel.`, `${D}.action`],
        [{ ...ok, parameter_overrides: ["ZoneId"] }, `${O} must be an object of template parameter names to values.`, O],
        [{ ...ok, parameter_overrides: "ZoneId=x" }, `${O} must be an object of template parameter names to values.`, O],
        [{ ...ok, parameter_overrides: null }, `${O} must be an object of template parameter names to values.`, O],
        [{ ...ok, parameter_overrides: { Name: { nested: 1 } } }, `${O}.Name must be a string, a number or a boolean.`, `${O}.Name`],
        [{ ...ok, parameter_overrides: { Name: ["a"] } }, `${O}.Name must be a string, a number or a boolean.`, `${O}.Name`],
        [{ ...ok, parameter_overrides: { Name: null } }, `${O}.Name must be a string, a number or a boolean.`, `${O}.Name`],
        [{ ...ok, parameter_overrides: { "": "x" } }, `${O}: every parameter name must be 1 to 200 characters long.`, O],
        [{ ...ok, parameter_overrides: { ["N".repeat(201)]: "x" } }, `${O}: every parameter name must be 1 to 200 characters long.`, O],
        [{ ...ok, parameter_overrides: many }, `${O} may hold at most 50 parameters.`, O],
      ]); // prettier-ignore
      expect(parseInputAnswer(JSON.parse(JSON.stringify(ok))).ok).to.equal(true);
      const r = await answer(task, ok);
      expect(r.body.error).to.equal(undefined);
      expect(runtime.answers.at(-1)).to.deep.equal({
        kind: "deployment_confirmation",
        inputId: "confirm-1",
        action: "adjust",
        parameterOverrides: { ZoneId: "cn-hangzhou-i", Count: 2, Public: false },
      });
    });

    it("refuses an action the confirmation does not offer, then takes one without overrides", async () => {
      const { task, input } = await waiting("[[confirm:cancel-only]]");
      await expectRejections(task, [
        [
          confirm(task, input, { action: "confirm" }),
          `${D}.action "confirm" is not offered by the task's confirmation (offered: cancel).`,
          `${D}.action`,
        ],
      ]);
      const r = await answer(task, {
        ...confirm(task, input, { action: "cancel" }),
        parameter_overrides: undefined,
      });
      expect(r.body.error).to.equal(undefined);
      expect(runtime.answers.at(-1)).to.deep.equal({
        kind: "deployment_confirmation",
        inputId: "confirm-1",
        action: "cancel",
      });
    });

    it("goes through the REST binding with the same checks", async () => {
      const { task, input } = await waiting("[[confirm]]");
      const send = (data: unknown) =>
        fetch(`${server.restUrl!}/message:send`, {
          method: "POST",
          headers: { "Content-Type": "application/json", ...V1 },
          body: JSON.stringify({
            message: userMessage("", {
              taskId: task.id,
              contextId: task.contextId,
              parts: [{ mediaType: "application/json", data }],
            }),
          }),
        });
      const bad = await send(confirm(task, input, { action: "launch" }));
      expect(bad.status).to.equal(400);
      const body = (await bad.json()) as AnyJson;
      expect(body.error.message).to.equal(`${D}.action must be one of: confirm, adjust, reselect, cancel.`);
      const good = await send(confirm(task, input, { action: "confirm", parameter_overrides: {} }));
      expect(good.status).to.equal(200);
      expect(runtime.answers.at(-1)).to.deep.equal({
        kind: "deployment_confirmation",
        inputId: "confirm-1",
        action: "confirm",
        parameterOverrides: {},
      });
    });
  });
});
