// The seam between the protocol surfaces (A2A executor, and through it AG-UI)
// and the agent runtime. The A2A executor drives an AgentRuntime: one
// AgentSession per A2A context, one runTurn() per user message. Everything the
// surfaces need to project (text, thinking, tools, permissions, questions,
// usage, artifacts, errors) arrives as RuntimeEvents.
import type {
  A2AReadiness,
  DeploymentConfirmationAnswer,
  IacCodeEventMetadata,
  InputRequest as WireInputRequest,
} from "../contract/index.js";

/** An MCP server that could not be used (metadata.iac_code.mcpWarning). */
export type McpWarning = NonNullable<IacCodeEventMetadata["mcpWarning"]>;
/** The configured MCP servers' snapshot (metadata.iac_code.mcpStatus). */
export type McpStatus = NonNullable<IacCodeEventMetadata["mcpStatus"]>;
export type McpServerStatus = McpStatus["servers"][number];

/** An MCP progress notification of a running MCP tool. */
export interface McpToolProgress {
  serverName: string;
  /** The tool's name on its server (not mcp__...). */
  toolName: string;
  progress: number;
  total?: number;
  message?: string;
}

/** Per-turn overrides from A2A metadata.iac_code / AG-UI forwardedProps. Never persisted. */
export interface TurnOverrides {
  model?: string;
  apiKey?: string;
  /** Headers added to this turn's model requests (secret; already checked by src/server/llm-headers.ts). */
  llmHeaders?: Record<string, string>;
  thinking?: { enabled?: boolean; effort?: string; budget?: number };
  alibabaCloud?: {
    accessKeyId?: string;
    accessKeySecret?: string;
    securityToken?: string;
    regionId?: string;
  };
  /** Normalised language for server-generated text: en, zh, es, fr, de, ja, pt. */
  language?: string;
  userId?: string;
  channel?: string;
  runMode?: "normal" | "pipeline";
  pipelineName?: string;
  cleanupOnly?: boolean;
  candidatePresentation?: string;
}

/** An image handed to a multimodal model. */
export interface TurnImage {
  mediaType: string;
  /** Standard base64. */
  data: string;
  filename?: string;
}

export interface TurnInput {
  /** The prompt text assembled from the message's parts (attachment manifests included). */
  text: string;
  images: TurnImage[];
  overrides: TurnOverrides;
  /** The A2A task of the turn (pipeline envelopes name it). */
  taskId?: string;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cachedInputTokens?: number;
  provider?: string;
  model?: string;
}

export interface InputOption {
  id: string;
  label: string;
  description?: string;
  /** Candidate selection: the candidate the option stands for. */
  candidateIndex?: number;
  /** Candidate selection, rich-v1: compact Mermaid diagram and the cost step's figures. */
  architectureDiagram?: string;
  totalMonthlyCost?: number;
  currency?: string;
  costItems?: Array<{ name: string; spec?: string; monthlyCost: number }>;
  /** Deployment confirmation: what choosing the option does. */
  action?: ConfirmationAction;
}

/** Kinds of input: a tool permission, a tool's question, and the pipeline's own waits. */
export type InputKind =
  | "permission"
  | "ask_user_question"
  | "candidate_selection"
  | "pipeline_pause_confirmation"
  | "cloud_resource_selection"
  | "deployment_confirmation";

// The shapes of the selector and the deployment confirmation are a2a/input-request's and
// a2a/input-answer's (generated): what the runtime asks is what the wire carries.

/** What a deployment confirmation's answer does: deploy, deploy with changed parameters, choose another candidate, or stop. */
export type ConfirmationAction = DeploymentConfirmationAnswer["action"];

/** A cloud resource selector: which kind of resource the user picks, for which template parameter, and where the options came from. */
export type ResourceSelector = NonNullable<WireInputRequest["selector"]>;

/** Where a cloud resource selector's options came from (sent back with the answer). */
export type SelectorSource = ResourceSelector["source"];

/** A template parameter shown in a deployment confirmation. */
export type DisplayParameter = NonNullable<WireInputRequest["displayParameters"]>[number];

/** The deployment a deployment_confirmation is about. */
export type DeploymentSummary = Omit<NonNullable<WireInputRequest["deploymentSummary"]>, "resources">;

/** A question the turn cannot continue without; the turn is suspended until answered. */
export interface InputRequest {
  /** Stable id, e.g. permission-<32 hex> or ask-<toolUseId>. */
  inputId: string;
  kind: InputKind;
  toolUseId: string;
  toolName: string;
  title: string;
  purpose: string;
  /** read | file_change | cloud_change | local_execution | local_or_remote_change | unknown */
  effect: string;
  target?: string;
  isReadOnly: boolean;
  /** Localised prompt shown to the user, e.g. "Write vpc.yaml. Allow once?". */
  prompt: string;
  /** Redacted, bounded description of what will happen. */
  safeSummary: string;
  options: InputOption[];
  allowFreeText?: boolean;
  freeTextPrompt?: string;
  /** JSON Schema the answer payload must satisfy. */
  responseSchema: Record<string, unknown>;
  language: string;
  /** cloud_resource_selection: the selector (options are the resources found, id = resource id). */
  selector?: ResourceSelector;
  /** deployment_confirmation: the stack operation ("create", "update") and the parameters it will use. */
  operation?: WireInputRequest["operation"];
  displayParameters?: DisplayParameter[];
  /** deployment_confirmation: what is deployed where, and its cost. */
  deploymentSummary?: DeploymentSummary;
}

export type InputAnswer =
  | { inputId: string; kind: "permission"; decision: "allow_once" | "allow_always" | "deny" }
  | {
      inputId: string;
      kind: Exclude<InputKind, "permission">;
      selectedId?: string;
      freeText?: string;
      cancelled?: boolean;
      /** cloud_resource_selection: the chosen resource id and its label (status "selected"). */
      value?: string;
      label?: string;
      /** cloud_resource_selection, cancelled: the user saw no option to choose. */
      optionsEmpty?: boolean;
      /** deployment_confirmation: the action and the parameter values the user changed. */
      action?: ConfirmationAction;
      parameterOverrides?: Record<string, string | number | boolean>;
    };

/** A text payload a tool produced that the surfaces store and announce as an artifact. */
export interface ArtifactPayload {
  filename: string;
  mediaType: string;
  /** UTF-8 text or standard base64 bytes. */
  content?: string;
  base64?: string;
}

/** The A2A extension pipeline envelopes belong to (a2a/pipeline-envelope). */
export const PIPELINE_EVENTS_EXTENSION = "urn:iac-code:a2a:pipeline-events:v1";

/** One pipeline event as published (a2a/pipeline-envelope). */
export interface PipelineEnvelope {
  schemaVersion: "1.0";
  extensionUri: typeof PIPELINE_EVENTS_EXTENSION;
  eventId: string;
  sequence: number;
  createdAt: string;
  eventType: string;
  scope: "pipeline" | "step" | "candidate" | "candidate_step" | "interrupt" | "stack" | "cleanup";
  pipelineRunId: string;
  taskId: string;
  contextId: string;
  pipelineName: string;
  iacCodeSessionId: string;
  status: "working" | "input_required" | "completed" | "failed" | "canceled";
  data: Record<string, unknown>;
  step?: Record<string, unknown>;
  candidate?: Record<string, unknown>;
  candidateStep?: Record<string, unknown>;
  input?: Record<string, unknown>;
  artifact?: Record<string, unknown>;
}

/** What a cleanup-only turn did (metadata.iac_code.cleanupOnly). */
export interface CleanupSummary {
  requested: true;
  status: "completed" | "failed" | "pending" | "unavailable";
  resourceCount: number;
  resources: Array<Record<string, unknown>>;
}

/** The pipeline state of a context for clients that reconnect (GET /iac-code/pipeline/state). */
export interface PipelineState {
  snapshot: Record<string, unknown>;
  events: PipelineEnvelope[];
}

export type RuntimeErrorKind = "authentication" | "retryable" | "fatal";

/**
 * What failed, as both protocols report it (A2A metadata.iac_code.error.code,
 * AG-UI RUN_ERROR code; the codes of schemas/errors/catalogue/agui.json).
 */
export type RuntimeErrorCode = NonNullable<NonNullable<IacCodeEventMetadata["error"]>["code"]>;

export type RuntimeEvent =
  | { type: "message_start"; messageId: string }
  | { type: "text_delta"; messageId: string; text: string }
  | { type: "thinking_delta"; messageId: string; text: string }
  | { type: "tool_use_start"; toolUseId: string; name: string }
  | { type: "tool_input_delta"; toolUseId: string; partialJsonLength: number }
  | { type: "tool_use_end"; toolUseId: string; name: string; input: Record<string, unknown> }
  | {
      type: "tool_result";
      toolUseId: string;
      name: string;
      result: unknown;
      isError: boolean;
      artifact?: ArtifactPayload;
    }
  /**
   * Intermediate progress (stack polling, long operations). mcp: an MCP
   * progress notification, whose params as received are `progress`.
   */
  | {
      type: "tool_progress";
      toolUseId: string;
      name: string;
      progress: Record<string, unknown>;
      mcp?: McpToolProgress;
    }
  /** An MCP server could not be used; the turn goes on without its tools. */
  | { type: "mcp_warning"; warning: McpWarning }
  /** The MCP servers' snapshot: once per turn, again when it changes. */
  | { type: "mcp_status"; status: McpStatus }
  /** A permission decided without asking (read-only, rule, mode or auto-approve). */
  | {
      type: "permission_decided";
      toolUseId: string;
      toolName: string;
      allowed: boolean;
      autoApproved: boolean;
      reason: string;
    }
  /** pipeline: the envelopes that go out with the same update (pipeline mode). */
  | { type: "input_required"; request: InputRequest; pipeline?: PipelineEnvelope[] }
  | {
      type: "input_received";
      inputId: string;
      toolUseId: string;
      kind: InputRequest["kind"];
      decision?: string;
      pipeline?: PipelineEnvelope[];
    }
  /**
   * Pipeline events, already numbered and journaled, published together.
   * cleanupOnly: the summary of a cleanup-only turn.
   */
  | { type: "pipeline"; envelopes: PipelineEnvelope[]; cleanupOnly?: CleanupSummary }
  | {
      type: "message_end";
      messageId: string;
      stopReason: "end_turn" | "tool_use" | "max_tokens" | "max_turns" | "stream_error" | "cancelled";
      usage?: TokenUsage;
      /** The message's complete assistant text (may be empty). */
      text: string;
    }
  | {
      type: "compaction";
      phase: "started" | "finished" | "failed";
      originalTokens?: number;
      compactedTokens?: number;
      summary?: string;
    }
  /** A turn-ending failure; message is already sanitised for clients. */
  | { type: "error"; kind: RuntimeErrorKind; message: string; errorId?: string; code?: RuntimeErrorCode };

export interface AgentSession {
  readonly sessionId: string;
  readonly cwd: string;
  /**
   * Runs one user turn. The iterable ends when the turn ends (normally, on error,
   * or when the signal aborts). While an input_required event is outstanding the
   * iterable simply waits; answerInput() resumes it.
   */
  runTurn(input: TurnInput, signal: AbortSignal): AsyncIterable<RuntimeEvent>;
  /**
   * Continues a turn restored after a restart (pending inputs re-published
   * first). Yields nothing and ends at once when nothing was interrupted.
   */
  resumeTurn(overrides: TurnOverrides, signal: AbortSignal): AsyncIterable<RuntimeEvent>;
  /** Inputs the session waits for (also after a restart). */
  pendingInputs(): InputRequest[];
  /**
   * True when a pipeline run of this session has not ended: a process that
   * died while the run was working leaves it to resumeTurn(), which continues
   * it without waiting for an answer (its waits are published again).
   */
  revivable?(): boolean;
  /**
   * Resolves a pending input; returns false when it is not pending. An input
   * is pending from the moment its input_required event is yielded, so an
   * answer handed over as soon as the event is seen is taken at once.
   */
  answerInput(answer: InputAnswer): boolean;
  /**
   * A message for a turn that is still running (a pipeline run): taken as the
   * answer of the candidate selection it waits for, or classified and applied
   * beside the run, its events on the running turn. False when no turn takes it.
   */
  interject?(input: TurnInput): boolean;
  /**
   * Journals envelopes the server adds to the session's latest pipeline run
   * (the session backup's backup_committed / backup_blocked notices), numbered
   * after its last one; undefined when the session never ran a pipeline.
   */
  journalPipeline?(
    specs: Array<Pick<PipelineEnvelope, "eventType" | "scope" | "status" | "data">>,
  ): Promise<PipelineEnvelope[] | undefined>;
  close(): Promise<void>;
}

export interface RuntimeInfo {
  provider: string;
  model: string;
  /** True when no provider is configured and the bundled demo script runs. */
  demo: boolean;
  /** Human-readable hint on how to configure a real model (demo mode). */
  hint?: string;
  /** The run mode of requests that do not choose one, and the default pipeline. */
  mode?: "normal" | "pipeline";
  pipelineName?: string;
  /** Pipelines a request may name. */
  pipelines?: string[];
}

/** What the runtime needs to answer with a real model and to reach Alibaba Cloud (names, never values). */
export type RuntimeReadiness = A2AReadiness;

export interface AgentRuntime {
  /** Opens (or restores, when sessionId names a saved session) the session of a context. */
  openSession(options: { contextId: string; cwd: string; sessionId?: string }): Promise<AgentSession>;
  /**
   * Checks the pipeline choice of a request before a task is created: a
   * message that names an unknown pipeline is refused (the text says why);
   * undefined when the request is fine.
   */
  checkTurn?(overrides: TurnOverrides): string | undefined;
  /** The pipeline journal of a session: the snapshot and the events after a sequence; undefined when none. */
  pipelineState?(sessionId: string, afterSequence?: number): Promise<PipelineState | undefined>;
  info(): RuntimeInfo;
  /** The model's and the cloud credentials' readiness (GET /iac-code/readiness); absent in test doubles. */
  readiness?(): RuntimeReadiness;
  close(): Promise<void>;
}
