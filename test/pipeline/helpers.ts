// Shared setup of the pipeline tests: the real runtime with the scripted
// selling pipeline, Alibaba Cloud credentials pointing at the local ROS
// endpoint fixture (which verifies every signature), and readers for the
// envelopes a turn published.
import path from "node:path";
import { mkdir } from "node:fs/promises";
import { createAgentRuntime } from "../../src/runtime/index.js";
import type { AgentRuntime, AgentSession, PipelineEnvelope, RuntimeEvent } from "../../src/runtime/seam.js";
import { RosEndpointFixture } from "../fixtures/ros-endpoint.js";
import { SCRIPTS, silentLogger, tempDir } from "../runtime/helpers.js";

export const PIPELINE_SCRIPT = path.join(SCRIPTS, "pipeline-selling.yaml");
export const AK = "LTAI5tPipelineKeyId01";
export const SECRET = "pipeline-fixture-secret-0123456789";

export interface PipelineWorld {
  dir: string;
  cwd: string;
  configDir: string;
  ros: RosEndpointFixture;
  runtime: AgentRuntime;
  session: AgentSession;
  close(): Promise<void>;
}

/** A runtime over fresh directories (or `dir` again, for a restart) and one session in its workspace. */
export async function pipelineWorld(
  options: { dir?: string; ros?: RosEndpointFixture; sessionId?: string } = {},
): Promise<PipelineWorld> {
  const dir = options.dir ?? (await tempDir("iac-pipeline-"));
  const cwd = path.join(dir, "workspace");
  const configDir = path.join(dir, "config");
  await mkdir(cwd, { recursive: true });
  const ros = options.ros ?? (await RosEndpointFixture.start({ [AK]: SECRET }));
  const runtime = await createAgentRuntime({
    configDir,
    scriptFile: PIPELINE_SCRIPT,
    env: { HOME: dir, ALIBABA_CLOUD_ACCESS_KEY_ID: AK, ALIBABA_CLOUD_ACCESS_KEY_SECRET: SECRET },
    homeDir: dir,
    rosEndpoint: ros.url,
    stackPollIntervalMs: 1,
    logger: silentLogger(),
  });
  const session = await runtime.openSession({
    contextId: "ctx-pipeline",
    cwd,
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
  });
  return {
    dir,
    cwd,
    configDir,
    ros,
    runtime,
    session,
    async close() {
      await runtime.close();
      if (!options.ros) await ros.close();
    },
  };
}

/** The envelopes of a turn's events, in publication order. */
export function envelopes(events: readonly RuntimeEvent[]): PipelineEnvelope[] {
  return events.flatMap((e) =>
    e.type === "pipeline"
      ? e.envelopes
      : (e.type === "input_required" || e.type === "input_received") && e.pipeline
        ? e.pipeline
        : [],
  );
}

/** Event types, leaving out the chatty ones (text, usage, message starts). */
export function storyOf(list: readonly PipelineEnvelope[]): string[] {
  const chatty = new Set(["text_delta", "thinking_delta", "usage", "message_started"]);
  return list.filter((e) => !chatty.has(e.eventType)).map((e) => e.eventType);
}
