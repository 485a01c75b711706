// The ProtoJSON of each A2A method's result, shared by the JSON-RPC and REST
// bindings: the response message as protobuf-es encodes it, except for the
// lists the spec wants present even when empty, and the Empty of a delete.
import type { JsonObject, JsonValue, Message } from "@bufbuild/protobuf";
import { encodeProtoJson, pb } from "../../contract/index.js";
import type { A2AMethod, A2AMethodName } from "../core/methods.js";

/** ListTasksResponse fields the spec wants even when empty (spec §2.1). */
function encodeListTasks(response: pb.ListTasksResponse): JsonValue {
  const json = encodeProtoJson(pb.ListTasksResponseSchema, response) as JsonObject;
  return {
    tasks: json.tasks ?? [],
    nextPageToken: response.nextPageToken,
    pageSize: response.pageSize,
    totalSize: response.totalSize,
  };
}

/** The configs list is there even when empty. */
function encodeListPushConfigs(response: pb.ListTaskPushNotificationConfigsResponse): JsonValue {
  const json = encodeProtoJson(pb.ListTaskPushNotificationConfigsResponseSchema, response) as JsonObject;
  return { ...json, configs: json.configs ?? [] };
}

const SPECIAL: Partial<Record<A2AMethodName, (result: Message) => JsonValue>> = {
  ListTasks: (result) => encodeListTasks(result as pb.ListTasksResponse),
  ListTaskPushNotificationConfigs: (result) =>
    encodeListPushConfigs(result as pb.ListTaskPushNotificationConfigsResponse),
};

const isMessage = (result: Message | Record<string, never>): result is Message => "$typeName" in result;

/** A unary method's result (callUnary's answer) as the JSON the bindings send. */
export function encodeResult(method: A2AMethod, result: Message | Record<string, never>): JsonValue {
  if (!isMessage(result)) return {}; // google.protobuf.Empty
  const special = SPECIAL[method.name];
  return special ? special(result) : encodeProtoJson(method.output, result);
}

/** Methods whose JSON-RPC params may be left out (every field of their request is optional). */
export const PARAMS_OPTIONAL: ReadonlySet<A2AMethodName> = new Set<A2AMethodName>([
  "GetExtendedAgentCard",
  "ListTasks",
]);
