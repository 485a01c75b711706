// A session as JSON lines, for people who read sessions (`iac-code sessions
// export <contextId>`): first the session's identity, then every part (the
// session itself, its pipeline, each step attempt's transcript), each log's
// rows in order and each document. Rows and documents that are JSON are
// given as JSON, anything else as text. Secrets are never in the store, so
// never in an export.
import type { RuntimeStore, StoreScope } from "./runtime-store.js";

/** Logs first in this order (then any other), so a reader meets the conversation first. */
const LOG_ORDER = ["conversation", "usage", "permission-audit", "events", "tool-log"];

function value(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function ordered(names: string[], order: string[]): string[] {
  const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length);
  return [...names].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** The lines of a session's export; nothing when the store holds nothing of it. */
export async function* exportSession(
  store: RuntimeStore,
  session: { sessionId: string; contextId: string },
): AsyncGenerator<string> {
  const { sessionId, contextId } = session;
  const catalog = await store.catalog(sessionId);
  if (catalog.length === 0) return;
  const own: StoreScope = { sessionId, contextId, part: "" };
  const meta = await store.get(own, "session");
  yield JSON.stringify({ type: "session", sessionId, contextId, ...(meta ? { meta: value(meta) } : {}) });
  for (const { part, logs, docs } of catalog) {
    const scope: StoreScope = { sessionId, contextId, part };
    for (const log of ordered(logs, LOG_ORDER)) {
      const rows = await (await store.log(scope, log)).read();
      for (const [i, row] of rows.entries()) {
        yield JSON.stringify({ type: "row", part, log, seq: i + 1, value: value(row) });
      }
    }
    for (const doc of ordered(docs, ["session"])) {
      if (part === "" && doc === "session") continue;
      const text = await store.get(scope, doc);
      if (text !== undefined) yield JSON.stringify({ type: "doc", part, doc, value: value(text) });
    }
  }
}
