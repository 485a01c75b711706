// metadata.iac_code per-turn overrides: parsing rules, and that they reach the
// runtime for that turn only.
import { expect } from "chai";
import { turnOverridesFrom } from "../../src/a2a/core/incoming-message/turn-overrides.js";
import { cleanup, startTestServer, userMessage, type TestServer } from "./helpers.js";

describe("A2A per-turn overrides", () => {
  it("reads llm_headers as given ({} included, null as absent) and refuses unusable ones naming the header", () => {
    const headers = { "X-Tenant": "t-1", "x-trace-id": "a b\tc" };
    expect(turnOverridesFrom({ llm_headers: headers }, "en").llmHeaders).to.deep.equal(headers);
    expect(turnOverridesFrom({ llm_headers: {} }, "en").llmHeaders).to.deep.equal({});
    expect(turnOverridesFrom({ llm_headers: null }, "en")).not.to.have.property("llmHeaders");
    const refusal = (value: unknown) => {
      try {
        turnOverridesFrom({ llm_headers: value as never }, "en");
      } catch (error) {
        return (error as Error).message;
      }
      return "accepted";
    };
    expect(refusal("x")).to.match(/^metadata\.iac_code\.llm_headers must be an object/);
    expect(refusal({ "X-A": 1 })).to.match(
      /^metadata\.iac_code\.llm_headers\.X-A must be a valid HTTP header value/,
    );
    expect(refusal({ "X-A": "v\r\nX-B: w" })).to.match(/^metadata\.iac_code\.llm_headers\.X-A must be/);
    expect(refusal({ "a:b": "v" })).to.match(/has a name that is not a valid HTTP header name/);
    for (const reserved of [
      "Authorization",
      "x-api-key",
      "API-KEY",
      "Content-Type",
      "anthropic-version",
      "Host",
    ])
      expect(refusal({ [reserved]: "v" })).to.include(`llm_headers.${reserved} cannot be given`);
    expect(refusal(Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`X-${i}`, "v"])))).to.include(
      "at most 64 headers",
    );
  });

  it("reads model, key, thinking (nested or flat aliases), cloud credentials and modes", () => {
    const o = turnOverridesFrom(
      {
        iac_code_model: " qwen-max ",
        iac_code_api_key: "sk-1",
        thinking: { thinkingEnabled: "yes", effort: "high", thinking_budget: "2048" },
        alibaba_cloud_access_key_id: "LTAI1",
        alibaba_cloud_access_key_secret: "s3cret",
        alibaba_cloud_security_token: "sts",
        alibaba_cloud_region_id: "cn-beijing",
        user_id: "u-1",
        channel: "c".repeat(200),
        run_mode: "pipeline",
        pipeline_name: "selling",
        cleanupOnly: true,
        candidatePresentation: "rich-v1",
      },
      "fr",
    );
    expect(o).to.deep.equal({
      language: "fr",
      model: "qwen-max",
      apiKey: "sk-1",
      thinking: { enabled: true, effort: "high", budget: 2048 },
      alibabaCloud: {
        accessKeyId: "LTAI1",
        accessKeySecret: "s3cret",
        securityToken: "sts",
        regionId: "cn-beijing",
      },
      userId: "u-1",
      channel: "c".repeat(128),
      runMode: "pipeline",
      pipelineName: "selling",
      cleanupOnly: true,
      candidatePresentation: "rich-v1",
    });
    expect(turnOverridesFrom({ thinking_enabled: "off", thinkingBudget: 10 }, "en").thinking).to.deep.equal({
      enabled: false,
      budget: 10,
    });
  });

  it("ignores values that do not parse and half-given credentials", () => {
    const o = turnOverridesFrom(
      {
        iac_code_model: "   ",
        thinking: { enabled: "maybe", budget: 0 },
        thinking_budget: -3,
        alibaba_cloud_access_key_id: "LTAI1",
        run_mode: "batch",
        cleanupOnly: "true",
      },
      "en",
    );
    expect(o).to.deep.equal({ language: "en" });
  });

  describe("through the server", () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer();
    });
    after(async () => {
      await t.close();
      cleanup(t.dir);
    });

    it("hands each turn its own overrides and does not carry them into the next turn", async () => {
      const first = await t.rpc("SendMessage", {
        message: userMessage("one", {
          metadata: {
            iac_code: {
              iac_code_model: "m-1",
              iac_code_api_key: "k-1",
              thinking: { enabled: true, budget: 64 },
            },
          },
        }),
      });
      const contextId = (first.body.result as { task: { contextId: string } }).task.contextId;
      await t.rpc("SendMessage", { message: userMessage("two", { contextId }) });
      const [a, b] = t.runtime.overridesSeen.slice(-2);
      expect(a).to.include({ model: "m-1", apiKey: "k-1" });
      expect(a.thinking).to.deep.equal({ enabled: true, budget: 64 });
      expect(b).to.not.have.any.keys("model", "apiKey", "thinking");
    });
  });
});
