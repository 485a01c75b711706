// The agent runtime's public door. The surfaces (A2A executor, CLI) use
// createAgentRuntime() and the seam types; nothing else here is needed.
export { createAgentRuntime, loadDemoScript } from "./runtime.js";
export {
  resolveRuntimeConfig,
  defaultConfigDir,
  type RuntimeOptions,
  type ResolvedRuntimeConfig,
} from "./config.js";
export { ConfigError, InvalidInputAnswerError } from "./errors.js";
export { PERMISSION_MODES, type PermissionMode } from "./permissions/policy.js";
export { PROVIDERS } from "./providers/registry.js";
export type * from "./seam.js";
