// What one turn has told its clients about the MCP servers: each warning
// once, and the servers' snapshot again only when it changed. Kept apart from
// the manager so that a turn does not load the MCP SDK when no server is
// configured.
import type { McpStatus, McpWarning, RuntimeEvent } from "../seam.js";

/** A warning with an identity, so a turn announces each one once. */
export interface McpIssue {
  id: number;
  warning: McpWarning;
}

/** What a turn reads from the runtime's MCP servers. */
export interface McpSource {
  status(): McpStatus;
  issues(): McpIssue[];
}

/** What one turn has announced: each warning once, the snapshot when it changes. */
export class McpTurnView {
  private readonly announced = new Set<number>();
  private lastStatus = "";

  constructor(private readonly manager: McpSource) {}

  get status(): McpStatus {
    return this.manager.status();
  }

  events(): RuntimeEvent[] {
    const out: RuntimeEvent[] = [];
    for (const issue of this.manager.issues()) {
      if (this.announced.has(issue.id)) continue;
      this.announced.add(issue.id);
      out.push({ type: "mcp_warning", warning: issue.warning });
    }
    const status = this.manager.status();
    const json = JSON.stringify(status);
    if (json !== this.lastStatus) {
      this.lastStatus = json;
      out.push({ type: "mcp_status", status });
    }
    return out;
  }
}
