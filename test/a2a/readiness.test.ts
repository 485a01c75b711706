// GET /iac-code/readiness: whether a real model and Alibaba Cloud credentials
// are configured, naming what is missing and never a value; behind the
// server's auth; the body is the a2a/readiness contract.
import { expect } from "chai";
import path from "node:path";
import { schemaIndex, violations } from "../../src/contract/index.js";
import { createAgentRuntime } from "../../src/runtime/index.js";
import type { AgentRuntime } from "../../src/runtime/seam.js";
import { removeDir, startE2eServer, tempDir, type E2eServer } from "../e2e/helpers.js";
import { silentLogger } from "../runtime/helpers.js";

const TOKEN = "readiness-token";
const SECRET = "readiness-cloud-secret-0123456789";

function expectContract(body: unknown): void {
  const validate = schemaIndex["a2a/readiness"].validate;
  expect(validate(body), JSON.stringify(violations(validate))).to.equal(true);
}

describe("A2A GET /iac-code/readiness", function () {
  this.timeout(30_000);
  let s: E2eServer | undefined;
  const dirs: string[] = [];
  const runtimes: AgentRuntime[] = [];
  afterEach(async () => {
    await s?.close();
    s = undefined;
    await Promise.all(runtimes.splice(0).map((r) => r.close()));
    for (const dir of dirs.splice(0)) removeDir(dir);
  });

  it("answers behind the auth: a scripted model is ready, no credentials is not, nothing secret", async () => {
    s = await startE2eServer({ script: "e2e-a2a.yaml", file: { token: TOKEN } });
    dirs.push(s.dir);
    const url = new URL("iac-code/readiness", s.url);
    expect((await fetch(url)).status).to.equal(401);
    const res = await fetch(url, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as Record<string, Record<string, unknown>>;
    expectContract(body);
    expect(body.llm).to.deep.include({ ready: true, demo: false, provider: "scripted", missing: [] });
    expect(body.cloud).to.deep.equal({
      ready: false,
      provider: "aliyun",
      missing: ["ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET"],
    });
  });

  it("the runtime says what is missing: demo mode, a provider without its key, credentials from the environment", async () => {
    const dir = tempDir("iac-readiness-");
    dirs.push(dir);
    const open = async (env: NodeJS.ProcessEnv) => {
      const runtime = await createAgentRuntime({
        configDir: path.join(dir, `config-${runtimes.length}`),
        env: { HOME: dir, ...env },
        homeDir: dir,
        logger: silentLogger(),
      });
      runtimes.push(runtime);
      return runtime.readiness!();
    };
    const demo = await open({});
    expectContract(demo);
    expect(demo.llm).to.deep.include({
      ready: false,
      demo: true,
      provider: "demo",
      missing: ["IAC_CODE_API_KEY"],
    });
    const keyless = await open({ IAC_CODE_PROVIDER: "dashscope" });
    expect(keyless.llm).to.deep.include({ ready: false, demo: false, provider: "dashscope" });
    expect(keyless.llm.missing).to.deep.equal(["IAC_CODE_API_KEY"]);
    const ready = await open({
      IAC_CODE_PROVIDER: "dashscope",
      IAC_CODE_API_KEY: "sk-readiness-key-0123456789",
      ALIBABA_CLOUD_ACCESS_KEY_ID: "LTAI5tReadinessKey01",
      ALIBABA_CLOUD_ACCESS_KEY_SECRET: SECRET,
      ALIBABA_CLOUD_REGION_ID: "cn-shanghai",
    });
    expectContract(ready);
    expect(ready.llm).to.deep.include({ ready: true, missing: [] });
    expect(ready.cloud).to.deep.equal({
      ready: true,
      provider: "aliyun",
      source: "env",
      regionId: "cn-shanghai",
      missing: [],
    });
    const text = JSON.stringify(ready);
    for (const secret of [SECRET, "sk-readiness-key", "LTAI5tReadinessKey01"])
      expect(text).to.not.contain(secret);
  });
});
