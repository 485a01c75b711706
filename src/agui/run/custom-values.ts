// The values of the adapter's own CUSTOM events: iac-code.artifact.v1 (an A2A
// artifact update) and iac-code.tool-progress.v1 (a tool's progress report).
import { isObject, str, type A2aItem, type JsonObject } from "../upstream/a2a-items.js";
import { compact, dropNulls, type CustomValue } from "../events.js";
import { count } from "./usage-tally.js";

export function artifactValue(item: A2aItem): JsonObject {
  const artifact = item.payload.artifact as JsonObject;
  const part = Array.isArray(artifact.parts) && isObject(artifact.parts[0]) ? artifact.parts[0] : {};
  const meta = isObject(artifact.metadata) ? artifact.metadata : isObject(part.metadata) ? part.metadata : {};
  return compact({
    schemaVersion: 1,
    taskId: item.taskId,
    contextId: item.contextId,
    artifactId: str(artifact.artifactId),
    name: str(artifact.name),
    description: str(artifact.description),
    filename: str(part.filename) ?? str(artifact.name),
    mediaType: str(part.mediaType) ?? str(meta.mediaType),
    uri: str(part.url) ?? str(meta.uri),
    byteSize: count(meta.byteSize),
    sha256: str(meta.sha256),
    sourcePath: str(meta.sourcePath),
  });
}

export function toolProgressValue(tool: JsonObject, toolUseId: string, name: string): CustomValue {
  return dropNulls({
    schemaVersion: 1,
    status: "progress",
    toolUseId,
    name,
    mcp: isObject(tool.mcp) ? tool.mcp : undefined,
    progress: isObject(tool.progress) ? tool.progress : undefined,
    mcpProgress: isObject(tool.mcpProgress) ? tool.mcpProgress : undefined,
  });
}
