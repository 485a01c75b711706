// What the extended agent card tells authenticated callers about this running
// server: the interfaces actually served, TLS, thinking exposure and the
// limits each binding and the core enforce.
import type { JsonObject } from "@bufbuild/protobuf";
import { LIMITS } from "../core/incoming-message/parts.js";
import { MAX_PAGE_SIZE } from "../core/request/list-tasks.js";
import { MAX_FIELD_CHARS } from "../core/turn/truncate.js";
import { MAX_BODY_BYTES as JSONRPC_MAX_BODY_BYTES } from "./jsonrpc.js";
import { GRPC_MAX_MESSAGE_BYTES } from "./grpc.js";
import { REST_MAX_BODY_BYTES } from "./rest.js";

export interface RuntimeDetailsInput {
  interfaces: Array<{ protocolBinding: string; url: string }>;
  tls: boolean;
  grpcSeparatePort: boolean;
  thinkingExposure: readonly string[];
  pushNotifications: boolean;
  autoApprovePermissions: boolean;
  idleContextSeconds: number;
}

export function runtimeDetails(input: RuntimeDetailsInput): JsonObject {
  return {
    transports: input.interfaces.map((i) => ({ protocolBinding: i.protocolBinding, url: i.url })),
    tls: input.tls,
    grpcSeparatePort: input.grpcSeparatePort,
    thinkingExposure: [...input.thinkingExposure],
    pushNotifications: input.pushNotifications,
    autoApprovePermissions: input.autoApprovePermissions,
    idleContextSeconds: input.idleContextSeconds,
    limits: {
      jsonRpcBodyBytes: JSONRPC_MAX_BODY_BYTES,
      restBodyBytes: REST_MAX_BODY_BYTES,
      grpcMessageBytes: GRPC_MAX_MESSAGE_BYTES,
      dataPartBytes: LIMITS.data,
      rawTextPartBytes: LIMITS.raw,
      fileUrlTextBytes: LIMITS.fileText,
      multimodalInlineBytes: LIMITS.multimodalInline,
      multimodalFileBytes: LIMITS.multimodalFile,
      metadataFieldChars: MAX_FIELD_CHARS,
      listTasksMaxPageSize: MAX_PAGE_SIZE,
    },
  };
}
