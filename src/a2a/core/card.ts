// The agent card (public and extended), rendered once per server start as
// ProtoJSON, with the cache validators served alongside it.
import { createHash } from "node:crypto";
import { create, type JsonObject } from "@bufbuild/protobuf";
import { pb, encodeProtoJson } from "../../contract/index.js";
import { PIPELINE_EVENTS_EXTENSION } from "../../runtime/seam.js";
import { VERSION } from "../../version.js";
import type { Authenticator } from "./request/auth.js";
import { canonicalJson, type MediaTypes } from "./incoming-message/parts.js";

export const ARTIFACT_METADATA_EXTENSION = "urn:iac-code:a2a:artifact-metadata:v1";
export const THINKING_EXPOSURE_EXTENSION = "urn:iac-code:a2a:thinking-exposure:v1";
export const RUNTIME_DETAILS_EXTENSION = "urn:iac-code:a2a:runtime-details:v1";

export interface CardOptions {
  /** The interfaces served, in order (JSON-RPC, HTTP+JSON, gRPC; or one custom transport). */
  interfaces?: Array<{ url: string; protocolBinding: string }>;
  pushNotifications: boolean;
  thinkingExposure: readonly string[];
  requiredExtensions: readonly string[];
  mediaTypes: MediaTypes;
  auth: Authenticator;
  /** Authenticated runtime details (served transports, exposure, limits); extended card only. */
  runtimeDetails?: JsonObject;
  /** Pipelines a request may run, and the run mode of requests that choose none. */
  pipelines?: { mode: string; names: string[] };
}

const SKILLS = [
  {
    id: "iac_generation",
    name: "IaC Generation",
    description: "Generate Alibaba Cloud ROS and Terraform templates from natural language.",
    tags: ["iac", "ros", "terraform", "alibaba-cloud"],
    examples: ["Create a VPC with two vSwitches in cn-hangzhou."],
  },
  {
    id: "iac_review",
    name: "IaC Review",
    description: "Inspect IaC templates and suggest fixes.",
    tags: ["iac", "review", "validation"],
    examples: ["Review this ROS template for missing parameters."],
  },
  {
    id: "aliyun_ros_operations",
    name: "Alibaba Cloud ROS Operations",
    description: "Assist with ROS stack workflows using iac-code tools.",
    tags: ["aliyun", "ros", "stack"],
    examples: ["Check why this ROS stack update failed."],
  },
  {
    id: "terraform_ros_conversion",
    name: "Terraform To ROS Conversion",
    description: "Assist Terraform-to-ROS conversion using bundled iac-code skill resources.",
    tags: ["terraform", "ros", "conversion"],
    examples: ["Convert this Terraform VPC module to ROS YAML."],
  },
];

const RUNTIME_SKILL = {
  id: "iac_code_runtime_details",
  name: "iac-code Runtime Details",
  description: "Authenticated details for task management, push configuration, and local runtime behavior.",
  tags: ["iac-code", "runtime", "a2a"],
  examples: ["List my current A2A tasks."],
};

export interface RenderedCard {
  json: JsonObject;
  etag: string;
  lastModified: string;
}

export interface AgentCards {
  publicCard: RenderedCard;
  extendedCard: pb.AgentCard;
}

function buildCard(options: CardOptions, extended: boolean): pb.AgentCard {
  const inputModes = [...new Set([...options.mediaTypes.text, ...options.mediaTypes.multimodal])];
  let description =
    "AI-powered Infrastructure as Code assistant for Alibaba Cloud ROS and Terraform workflows.";
  if (!options.auth.enabled)
    description += " Unauthenticated A2A server mode is intended for trusted local environments.";

  const extensions: Array<{ uri: string; description: string; required: boolean; params?: JsonObject }> = [
    {
      uri: ARTIFACT_METADATA_EXTENSION,
      description: "Optional iac-code metadata namespace for tool status and stored local artifact metadata.",
      required: options.requiredExtensions.includes(ARTIFACT_METADATA_EXTENSION),
    },
  ];
  if (options.thinkingExposure.length > 0) {
    extensions.push({
      uri: THINKING_EXPOSURE_EXTENSION,
      description:
        "Optional iac-code metadata namespace for selected thinking exposure signals. Raw thinking is emitted only when raw_thinking is enabled.",
      required: options.requiredExtensions.includes(THINKING_EXPOSURE_EXTENSION),
      params: { enabledTypes: [...options.thinkingExposure] },
    });
  }
  if (options.pipelines) {
    extensions.push({
      uri: PIPELINE_EVENTS_EXTENSION,
      description:
        "Optional iac-code pipeline event extension for state snapshots, replay, interrupts, and parallel candidate streams.",
      required: options.requiredExtensions.includes(PIPELINE_EVENTS_EXTENSION),
      // enabled: a request chooses pipeline mode itself (metadata.iac_code.runMode); mode is the default.
      params: {
        schemaVersion: "1.0",
        enabled: true,
        mode: options.pipelines.mode,
        pipelines: options.pipelines.names,
        supportsEventBatching: true,
        eventBatchMetadataPath: "metadata.iac_code.pipelineBatch.events",
        maxBatchEvents: 1024,
        supportsSnapshot: true,
        supportsReplay: true,
        supportsInterrupts: true,
        supportsParallelCandidates: true,
        stateEndpoint: "/iac-code/pipeline/state",
      },
    });
  }
  for (const uri of options.requiredExtensions) {
    if (!extensions.some((e) => e.uri === uri)) {
      extensions.push({
        uri,
        description: "Extension required by this server's configuration.",
        required: true,
      });
    }
  }

  if (extended && options.runtimeDetails) {
    extensions.push({
      uri: RUNTIME_DETAILS_EXTENSION,
      description:
        "Runtime details for authenticated callers: served transports, thinking exposure and limits.",
      required: false,
      params: options.runtimeDetails,
    });
  }

  const securitySchemes: Record<string, pb.SecurityScheme> = {};
  const securityRequirements: pb.SecurityRequirement[] = [];
  const addScheme = (name: string, scheme: pb.SecurityScheme["scheme"]) => {
    securitySchemes[name] = create(pb.SecuritySchemeSchema, { scheme });
    securityRequirements.push(
      create(pb.SecurityRequirementSchema, {
        schemes: { [name]: create(pb.StringListSchema, { list: [""] }) },
      }),
    );
  };
  const http = (scheme: string): pb.SecurityScheme["scheme"] => ({
    case: "httpAuthSecurityScheme",
    value: create(pb.HTTPAuthSecuritySchemeSchema, { scheme }),
  });
  if (options.auth.bearerEnabled) addScheme("bearerAuth", http("bearer"));
  if (options.auth.basicEnabled) addScheme("basicAuth", http("basic"));
  const jwt = options.auth.jwtSettings;
  if (jwt?.issuer) {
    // OpenID Connect: clients discover the provider (and its key set) from the issuer.
    addScheme("oidcAuth", {
      case: "openIdConnectSecurityScheme",
      value: create(pb.OpenIdConnectSecuritySchemeSchema, {
        openIdConnectUrl: `${jwt.issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`,
        description: `Bearer JWT of this provider, audience ${jwt.audience}.`,
      }),
    });
  } else if (jwt) {
    addScheme("jwtAuth", {
      case: "httpAuthSecurityScheme",
      value: create(pb.HTTPAuthSecuritySchemeSchema, {
        scheme: "bearer",
        bearerFormat: "JWT",
        description: `Bearer JWT signed by a key of ${jwt.jwksUrl}, audience ${jwt.audience}.`,
      }),
    });
  }
  if (options.auth.apiKeyEnabled) {
    addScheme("apiKeyAuth", {
      case: "apiKeySecurityScheme",
      value: create(pb.APIKeySecuritySchemeSchema, { location: "header", name: options.auth.apiKeyHeader }),
    });
  }

  const skills = extended ? [...SKILLS, RUNTIME_SKILL] : SKILLS;
  return create(pb.AgentCardSchema, {
    name: "iac-code",
    description,
    supportedInterfaces: (options.interfaces ?? []).map((i) => ({ ...i, protocolVersion: "1.0" })),
    version: VERSION,
    capabilities: {
      streaming: true,
      pushNotifications: options.pushNotifications,
      // GetExtendedAgentCard MUST require authentication (spec): without auth there is none to serve.
      extendedAgentCard: options.auth.enabled,
      extensions,
    },
    securitySchemes,
    securityRequirements,
    defaultInputModes: inputModes,
    defaultOutputModes: ["text/plain"],
    skills: skills.map((s) => ({ ...s, inputModes, outputModes: ["text/plain"] })),
  });
}

/** The served form of a card JSON with its cache validators (also used after signing). */
export function renderCard(json: JsonObject, now = new Date()): RenderedCard {
  const etag = `"sha256-${createHash("sha256").update(canonicalJson(json), "utf8").digest("hex")}"`;
  return { json, etag, lastModified: now.toUTCString() };
}

export function buildAgentCards(options: CardOptions, now = new Date()): AgentCards {
  const json = encodeProtoJson(pb.AgentCardSchema, buildCard(options, false)) as JsonObject;
  return {
    publicCard: renderCard(json, now),
    extendedCard: buildCard(options, true),
  };
}
