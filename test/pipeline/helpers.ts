// Shared setup of the pipeline tests: the real runtime with the scripted
// selling pipeline, Alibaba Cloud credentials pointing at the local ROS
// endpoint fixture (which verifies every signature), and readers for the
// envelopes a turn published.
import path from "node:path";
import { mkdir } from "node:fs/promises";
import { openStateStore, startA2aServer, type RunningA2aServer } from "../../src/a2a/server.js";
import { createAgentRuntime } from "../../src/runtime/index.js";
import { resolveSettings } from "../../src/a2a/config/server-settings.js";
import { createLogger } from "../../src/server/logger.js";
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

export interface PipelineA2a {
  url: string;
  dir: string;
  workspace: string;
  ros: RosEndpointFixture;
  runtime: AgentRuntime;
  server: RunningA2aServer;
  close(): Promise<void>;
}

/** The A2A server (in this process) in front of the scripted pipeline runtime and the local ROS endpoint. */
export async function startPipelineA2a(
  options: {
    dir?: string;
    ros?: RosEndpointFixture;
    file?: Record<string, unknown>;
    /** More of the server's environment (IAC_CODE_CONFIG_BACKUP_DIR...). */
    env?: NodeJS.ProcessEnv;
    /** The runtime writes its sessions through the server's state store, as `iac-code a2a` does. */
    sharedStore?: boolean;
  } = {},
): Promise<PipelineA2a> {
  const dir = options.dir ?? (await tempDir("iac-pipeline-a2a-"));
  const workspace = path.join(dir, "workspace");
  await mkdir(workspace, { recursive: true });
  const ros = options.ros ?? (await RosEndpointFixture.start({ [AK]: SECRET }));
  const settings = resolveSettings(
    { port: 0, "persistence-dir": path.join(dir, "persist"), ...options.file },
    {},
    {},
  );
  const state = options.sharedStore
    ? await openStateStore(settings, undefined, createLogger({ silent: true }))
    : undefined;
  const runtime = await createAgentRuntime({
    ...(state ? { store: state.runtime } : {}),
    configDir: path.join(dir, "config"),
    scriptFile: PIPELINE_SCRIPT,
    env: { HOME: dir, ALIBABA_CLOUD_ACCESS_KEY_ID: AK, ALIBABA_CLOUD_ACCESS_KEY_SECRET: SECRET },
    homeDir: dir,
    rosEndpoint: ros.url,
    stackPollIntervalMs: 1,
    logger: silentLogger(),
  });
  const server = await startA2aServer(settings, {
    runtime,
    logger: createLogger({ silent: true }),
    cwd: workspace,
    env: { IACCODE_A2A_ALLOWED_CWDS: dir, ...options.env },
    ...(state ? { state } : {}),
  });
  return {
    url: server.url,
    dir,
    workspace,
    ros,
    runtime,
    server,
    async close() {
      await server.close();
      await runtime.close();
      await state?.close();
      if (!options.ros) await ros.close();
    },
  };
}

/** An A2A server in this process in demo mode (nothing configured), raw thinking and tool traces shown. */
export async function startDemoA2a(
  dir: string,
  file: Record<string, unknown> = {},
): Promise<{ runtime: AgentRuntime; server: RunningA2aServer; close(): Promise<void> }> {
  const runtime = await createAgentRuntime({
    configDir: path.join(dir, "config"),
    env: { HOME: dir },
    homeDir: dir,
    logger: silentLogger(),
  });
  const settings = resolveSettings(
    {
      port: 0,
      "persistence-dir": path.join(dir, "persist"),
      "thinking-exposure": ["tool-trace", "raw-thinking"],
      ...file,
    },
    {},
    {},
  );
  const server = await startA2aServer(settings, {
    runtime,
    logger: createLogger({ silent: true }),
    cwd: dir,
    env: { IACCODE_A2A_ALLOWED_CWDS: dir },
  });
  return {
    runtime,
    server,
    async close() {
      await server.close();
      await runtime.close();
    },
  };
}
