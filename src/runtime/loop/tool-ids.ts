// Keeps tool-use ids unique within a session: some servers reuse ids
// (call_0, ...) across messages, and the ids key results, inputs and events.
import { toolUses, type Message } from "../messages.js";
import type { ProviderEvent } from "../providers/types.js";

export class ToolIdMap {
  private readonly known = new Set<string>();
  private readonly mapped = new Map<string, string>();

  constructor(messages: readonly Message[]) {
    for (const m of messages) for (const use of toolUses(m)) this.known.add(use.id);
  }

  /** The event with its tool-use id renamed when the conversation already has that id. */
  map(event: ProviderEvent): ProviderEvent {
    if (event.type === "tool_use_start") {
      let id = event.id || "toolu";
      for (let n = 2; this.known.has(id); n++) id = `${event.id}_${n}`;
      this.known.add(id);
      this.mapped.set(event.id, id);
      return id === event.id ? event : { ...event, id };
    }
    if (event.type === "tool_input_delta" || event.type === "tool_use_end") {
      const id = this.mapped.get(event.id);
      return id === undefined || id === event.id ? event : { ...event, id };
    }
    return event;
  }
}
