// The workspace of a turn (metadata.iac_code.cwd): absent means the server's
// default; otherwise the rule both protocols share (server/workspace-roots.ts).
import { checkWorkspace, type WorkspaceCheck } from "../../../server/workspace-roots.js";

/** The field a workspace refusal names. */
export const CWD_FIELD = "metadata.iac_code.cwd";

/** Checks metadata.iac_code.cwd (absent or null: defaultCwd); the real path, or why it is refused. */
export function resolveWorkspace(
  requested: unknown,
  defaultCwd: string,
  roots: readonly string[],
): WorkspaceCheck {
  return checkWorkspace(requested === undefined || requested === null ? defaultCwd : requested, roots);
}
