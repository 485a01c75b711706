// The world of the guidance tests: the A2A server in this process in front of
// the real runtime whose model is the guidance script
// (test/fixtures/scripts/pipeline-guidance.yaml: intent_parsing makes a long
// model call, so a pipeline runs long enough to be guided), and a tap between
// an adapter and that server recording every request.
import path from "node:path";
import { startA2aServer, type RunningA2aServer } from "../../src/a2a/server.js";
import { resolveSettings } from "../../src/a2a/config/server-settings.js";
import { createAgentRuntime } from "../../src/runtime/index.js";
import type { AgentRuntime } from "../../src/runtime/seam.js";
import { createLogger } from "../../src/server/logger.js";
import { startTap, type A2aTap } from "../agui/harness.js";
import { SCRIPTS } from "../e2e/helpers.js";
import { silentLogger, tempDir } from "../runtime/helpers.js";

export const GUIDANCE_SCRIPT = path.join(SCRIPTS, "pipeline-guidance.yaml");

export interface GuidanceWorld {
  dir: string;
  token: string;
  runtime: AgentRuntime;
  a2a: RunningA2aServer;
  tap: A2aTap;
  close(): Promise<void>;
}

export async function guidanceWorld(token = "guidance-token"): Promise<GuidanceWorld> {
  const dir = await tempDir("iac-guidance-");
  const runtime = await createAgentRuntime({
    configDir: path.join(dir, "config"),
    scriptFile: GUIDANCE_SCRIPT,
    env: { HOME: dir },
    homeDir: dir,
    logger: silentLogger(),
  });
  const settings = resolveSettings({ port: 0, "persistence-dir": path.join(dir, "persist"), token }, {}, {});
  const a2a = await startA2aServer(settings, {
    runtime,
    logger: createLogger({ silent: true }),
    cwd: dir,
    env: { IACCODE_A2A_ALLOWED_CWDS: dir },
  });
  const tap = await startTap(a2a.url);
  return {
    dir,
    token,
    runtime,
    a2a,
    tap,
    async close() {
      await tap.close();
      await a2a.close();
      await runtime.close();
    },
  };
}
