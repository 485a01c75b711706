// Configuration resolution: precedence (options > env > files > catalogue),
// demo mode when nothing is configured, clear errors for what cannot work.
import { expect } from "chai";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import {
  ConfigError,
  createAgentRuntime,
  defaultConfigDir,
  resolveRuntimeConfig,
} from "../../src/runtime/index.js";
import { removeTempDirs, silentLogger, tempDir, TOOLS_SCRIPT } from "./helpers.js";

function configError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).to.be.instanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("runtime: configuration", () => {
  let configDir: string;
  beforeEach(async () => {
    configDir = await tempDir();
  });
  afterEach(removeTempDirs);

  it("is demo mode when nothing is configured anywhere", () => {
    const config = resolveRuntimeConfig({ configDir, env: {} });
    expect(config).to.include({ demo: true, model: "demo-script", providerSource: "demo" });
    expect(config.hint).to.match(/^Demo mode: .*IAC_CODE_API_KEY/);
  });

  it("leaves demo mode as soon as anything is configured", async () => {
    for (const env of [
      { IAC_CODE_API_KEY: "k" },
      { IAC_CODE_MODEL: "qwen-plus" },
      { IAC_CODE_BASE_URL: "http://localhost:9/v1" },
      { IAC_CODE_PROVIDER: "ollama" },
    ]) {
      expect(resolveRuntimeConfig({ configDir, env }).demo, JSON.stringify(env)).to.equal(false);
    }
    await writeFile(path.join(configDir, ".credentials.yml"), "dashscope: sk-file-key\n");
    const fromFile = resolveRuntimeConfig({ configDir, env: {} });
    expect(fromFile).to.include({ demo: false, apiKey: "sk-file-key", model: "qwen3.8-max" });
    expect(fromFile.provider.key).to.equal("dashscope");
  });

  it("defaults to DashScope with its compatible-mode URL", () => {
    const config = resolveRuntimeConfig({ configDir, env: { IAC_CODE_API_KEY: "sk-x" } });
    expect(config.provider.key).to.equal("dashscope");
    expect(config).to.include({
      baseUrl: "https://dashscope.aliyuncs.com/compatible-mode/v1",
      model: "qwen3.8-max",
      apiKey: "sk-x",
    });
    expect(config.hint).to.equal(undefined);
  });

  it("applies the precedence options > env > settings.yml", async () => {
    await writeFile(
      path.join(configDir, "settings.yml"),
      [
        "activeProvider: deepseek",
        "providers:",
        "  deepseek:",
        "    model: deepseek-reasoner",
        "    apiBase: https://proxy.example/v1",
        "    thinkingEnabled: true",
        "    maxCompletionTokens: 4000",
        "    models:",
        "      deepseek-chat: { thinkingEnabled: false, effort: low }",
        "  openai:",
        "    model: gpt-5.1",
        "permissions:",
        "  mode: accept_edits",
        "  allow: ['write_file(*.yaml)']",
        "  deny: [ros_stack]",
      ].join("\n"),
    );
    const fromFile = resolveRuntimeConfig({ configDir, env: {} });
    expect(fromFile.provider.key).to.equal("deepseek");
    expect(fromFile).to.deep.include({
      model: "deepseek-reasoner",
      baseUrl: "https://proxy.example/v1",
      thinking: { enabled: true },
      maxTokens: 4000,
    });
    expect(fromFile.permissions).to.deep.include({ mode: "accept_edits", autoApprove: false });
    expect(fromFile.permissions.allow.map((r) => r.raw)).to.deep.equal(["write_file(*.yaml)"]);
    expect(fromFile.hint).to.match(/^Provider deepseek has no API key/);

    const perModel = resolveRuntimeConfig({
      configDir,
      env: { IAC_CODE_MODEL: "deepseek-chat", IAC_CODE_API_KEY: "k" },
    });
    expect(perModel).to.deep.include({ model: "deepseek-chat", thinking: { enabled: false, effort: "low" } });

    const fromEnv = resolveRuntimeConfig({
      configDir,
      env: { IAC_CODE_PROVIDER: "OpenAI", IAC_CODE_API_KEY: "k" },
    });
    expect(fromEnv.provider.key).to.equal("openai");
    expect(fromEnv).to.include({ model: "gpt-5.1", baseUrl: "https://api.openai.com/v1" });

    const fromOptions = resolveRuntimeConfig({
      configDir,
      env: { IAC_CODE_PROVIDER: "openai", IAC_CODE_MODEL: "env-model" },
      provider: "Alibaba Cloud Bailian",
      model: "qwen-max",
      baseUrl: "http://127.0.0.1:9999/v1",
      apiKey: "opt-key",
      permissionMode: "bypass_permissions",
      autoApprovePermissions: true,
      permissionRules: { allow: ["edit_file"] },
    });
    expect(fromOptions.provider.key).to.equal("dashscope");
    expect(fromOptions).to.include({
      model: "qwen-max",
      baseUrl: "http://127.0.0.1:9999/v1",
      apiKey: "opt-key",
    });
    expect(fromOptions.permissions).to.deep.include({ mode: "bypass", autoApprove: true });
    expect(fromOptions.permissions.allow.map((r) => r.raw)).to.deep.equal([
      "edit_file",
      "write_file(*.yaml)",
    ]);
  });

  it("guesses the provider from the model or the base URL; a bare base URL uses the endpoint's first model", () => {
    const known = resolveRuntimeConfig({
      configDir,
      env: { IAC_CODE_BASE_URL: "https://dashscope.aliyuncs.com/compatible-mode/v1", IAC_CODE_API_KEY: "k" },
    });
    expect(known.provider.key).to.equal("dashscope");
    expect(known.model).to.equal("qwen3.8-max");
    const bare = resolveRuntimeConfig({
      configDir,
      env: { IAC_CODE_BASE_URL: "http://10.0.0.5:8000/v1", IAC_CODE_API_KEY: "k" },
    });
    expect(bare.provider.key).to.equal("openai_compatible");
    expect(bare.model).to.equal("auto");
    expect(
      resolveRuntimeConfig({ configDir, env: { IAC_CODE_MODEL: "claude-sonnet-4-5" } }).provider.key,
    ).to.equal("anthropic");
    expect(resolveRuntimeConfig({ configDir, env: { IAC_CODE_MODEL: "gpt-5" } }).provider.key).to.equal(
      "openai",
    );
    expect(
      resolveRuntimeConfig({ configDir, env: { IAC_CODE_MODEL: "deepseek-chat" } }).provider.key,
    ).to.equal("deepseek");
    const local = resolveRuntimeConfig({
      configDir,
      env: { IAC_CODE_BASE_URL: "http://localhost:8000/v1", IAC_CODE_MODEL: "llama" },
    });
    expect(local.provider.key).to.equal("openai_compatible");
    expect(local.hint).to.equal(undefined);
  });

  it("selects the scripted provider from a script file", () => {
    const config = resolveRuntimeConfig({ configDir, env: {}, scriptFile: TOOLS_SCRIPT });
    expect(config).to.include({ demo: false, scriptFile: TOOLS_SCRIPT, model: "scripted" });
    expect(config.provider.key).to.equal("scripted");
    // IAC_CODE_SCRIPT, or its older documented name IAC_CODE_SCRIPT_FILE.
    for (const name of ["IAC_CODE_SCRIPT", "IAC_CODE_SCRIPT_FILE"]) {
      expect(resolveRuntimeConfig({ configDir, env: { [name]: TOOLS_SCRIPT } }).provider.key, name).to.equal(
        "scripted",
      );
    }
  });

  it("rejects what cannot work with clear messages", async () => {
    expect(
      configError(() => resolveRuntimeConfig({ configDir, env: { IAC_CODE_PROVIDER: "acme" } })),
    ).to.equal(
      'IAC_CODE_PROVIDER: unknown provider "acme". Known providers: dashscope, openai, deepseek, openai_compatible, ollama, vllm, lmstudio, anthropic, anthropic_compatible, scripted.',
    );
    expect(configError(() => resolveRuntimeConfig({ configDir, env: {}, provider: "scripted" }))).to.match(
      /needs a script file/,
    );
    expect(
      configError(() => resolveRuntimeConfig({ configDir, env: { IAC_CODE_PROVIDER: "openai_compatible" } })),
    ).to.equal("Provider openai_compatible needs a base URL (IAC_CODE_BASE_URL or --base-url).");
    expect(
      configError(() =>
        resolveRuntimeConfig({
          configDir,
          env: { IAC_CODE_PROVIDER: "anthropic_compatible", IAC_CODE_BASE_URL: "http://x" },
        }),
      ),
    ).to.equal("Provider anthropic_compatible needs a model (IAC_CODE_MODEL or --model).");
    expect(
      configError(() =>
        resolveRuntimeConfig({
          configDir,
          env: { IAC_CODE_PROVIDER: "vllm", IAC_CODE_MODEL: "m", IAC_CODE_BASE_URL: "ftp://x" },
        }),
      ),
    ).to.equal("The base URL of provider vllm is not an http(s) URL.");
    expect(configError(() => resolveRuntimeConfig({ configDir, env: {}, permissionMode: "yolo" }))).to.match(
      /unknown permission mode "yolo"/,
    );
    expect(
      configError(() =>
        resolveRuntimeConfig({ configDir, env: {}, permissionRules: { allow: ["write_file("] } }),
      ),
    ).to.match(/^Invalid permission rule "write_file\("/);
    const settingsFile = path.join(configDir, "settings.yml");
    await writeFile(settingsFile, "providers: [1, 2]\n");
    expect(configError(() => resolveRuntimeConfig({ configDir, env: {} }))).to.equal(
      `${settingsFile}:1:12: providers must be object`,
    );
    await writeFile(settingsFile, "model: [unclosed\n");
    expect(configError(() => resolveRuntimeConfig({ configDir, env: {} }))).to.match(
      new RegExp(`^${settingsFile}:\\d+:\\d+: not valid YAML`),
    );
    await writeFile(settingsFile, "providers:\n  dashscope:\n    thinkingBudget: -3\n");
    expect(configError(() => resolveRuntimeConfig({ configDir, env: { IAC_CODE_API_KEY: "k" } }))).to.equal(
      `${settingsFile}:3:21: providers.dashscope.thinkingBudget must be >= 1`,
    );
  });

  it("settings.yml: the short form people write works, and what it would ignore is refused where it stands", async () => {
    const settingsFile = path.join(configDir, "settings.yml");
    const resolve = (env: NodeJS.ProcessEnv = {}) => resolveRuntimeConfig({ configDir, env });
    await writeFile(settingsFile, "provider: dashscope\nmodel: qwen-max\napi-key: sk-short\n");
    expect(resolve()).to.include({
      demo: false,
      model: "qwen-max",
      apiKey: "sk-short",
      providerSource: "settings",
    });
    expect(resolve().provider.key).to.equal("dashscope");
    // The environment beats the file; `_` is accepted for `-` at the top level.
    expect(resolve({ IAC_CODE_MODEL: "qwen-plus" }).model).to.equal("qwen-plus");
    await writeFile(
      settingsFile,
      "provider: openai_compatible\nbase_url: http://127.0.0.1:9/v1\nmodel: m1\n",
    );
    expect(resolve()).to.include({ baseUrl: "http://127.0.0.1:9/v1", model: "m1" });
    // api-key-env: the key comes from the variable it names, which must be set.
    await writeFile(settingsFile, "provider: deepseek\napi-key-env: MY_DEEPSEEK_KEY\n");
    expect(resolve({ MY_DEEPSEEK_KEY: "sk-env" })).to.include({ apiKey: "sk-env" });
    expect(configError(() => resolve())).to.equal(
      "settings.yml api-key-env names MY_DEEPSEEK_KEY, which is not set.",
    );
    // The short form wins over providers.<name> for the provider it names; display names work there.
    await writeFile(
      settingsFile,
      "activeProvider: DashScope\nmodel: qwen-max\nproviders:\n  DashScope:\n    model: qwen-plus\n    maxCompletionTokens: 99\n",
    );
    expect(resolve({ IAC_CODE_API_KEY: "k" })).to.include({ model: "qwen-max", maxTokens: 99 });
    await writeFile(settingsFile, "provider: openai\nactiveProvider: dashscope\n");
    expect(configError(() => resolve())).to.equal(
      "settings.yml: provider and activeProvider name different providers; keep one.",
    );
    // Typos and unknown keys are refused with the line, the column and the key they are probably a typo of.
    await writeFile(settingsFile, "provder: dashscope\nmodel: qwen-max\n");
    expect(configError(() => resolve())).to.equal(
      `${settingsFile}:1:1: unknown key provder (did you mean provider?)`,
    );
    await writeFile(settingsFile, "model: qwen-max\nproviders:\n  dashscope:\n    modle: qwen-plus\n");
    expect(configError(() => resolve())).to.equal(
      `${settingsFile}:4:5: unknown key modle (did you mean model?)`,
    );
    await writeFile(settingsFile, "colour: blue\n");
    expect(configError(() => resolve())).to.equal(`${settingsFile}:1:1: unknown key colour`);
    await writeFile(settingsFile, "providers:\n  dashscop:\n    model: qwen-max\n");
    expect(configError(() => resolve())).to.match(/^settings.yml providers: unknown provider "dashscop"/);
    await writeFile(settingsFile, "provider: acme\n");
    expect(configError(() => resolve())).to.match(/^settings.yml provider: unknown provider "acme"/);
  });

  it("rejects a script that does not match the format, naming the problem", async () => {
    const bad = path.join(configDir, "bad.yaml");
    await writeFile(bad, "version: 1\nrules:\n  - reply: [{ txt: hi }]\n");
    let message = "";
    try {
      await createAgentRuntime({ configDir, env: {}, scriptFile: bad, logger: silentLogger() });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).to.match(/^Script .*bad\.yaml does not match the script format: \/rules\/0\/reply\/0 /);
    let missing = "";
    try {
      await createAgentRuntime({
        configDir,
        env: {},
        scriptFile: path.join(configDir, "nope.yaml"),
        logger: silentLogger(),
      });
    } catch (error) {
      missing = (error as Error).message;
    }
    expect(missing).to.match(/^Cannot read script file .*nope\.yaml: ENOENT$/);
  });

  it("finds the config directory from IAC_CODE_CONFIG_DIR (with ~ and $VAR) or ~/.iac-code", () => {
    expect(defaultConfigDir({ HOME: "/home/u" })).to.equal("/home/u/.iac-code");
    expect(defaultConfigDir({ HOME: "/home/u", IAC_CODE_CONFIG_DIR: "~/cfg" })).to.equal("/home/u/cfg");
    expect(defaultConfigDir({ HOME: "/home/u", BASE: "/srv", IAC_CODE_CONFIG_DIR: "$BASE/iac" })).to.equal(
      "/srv/iac",
    );
  });

  it("reports the resolved model in info(), never the key", async () => {
    const runtime = await createAgentRuntime({
      configDir,
      env: { IAC_CODE_API_KEY: "sk-secret-info-1234" },
      logger: silentLogger(),
    });
    try {
      expect(runtime.info()).to.deep.equal({
        provider: "dashscope",
        model: "qwen3.8-max",
        demo: false,
        mode: "normal",
        pipelineName: "selling",
        pipelines: ["selling"],
      });
    } finally {
      await runtime.close();
    }
  });
});
