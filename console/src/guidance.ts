// Guidance while a pipeline runs (agui-iaccode.md §9.3): the message box sends
// its text as an activeGuidance run on the same thread, next to the pipeline's
// own run (which goes on), and the pipeline's interrupt judge answers on that
// run: CUSTOM iac-code.guidance.v1 interrupt_received, then
// interrupt_classified with the verdict, shown here in the conversation.
import { h, randomId } from "./dom.js";
import { tr, type MessageKey } from "./i18n.js";
import { obj, str } from "./json.js";
import type { WireEvent } from "./transcript.js";

export const CUSTOM_GUIDANCE = "iac-code.guidance.v1";

const VERDICTS: Record<string, MessageKey> = {
  supplement: "verdictSupplement",
  continue: "verdictContinue",
  ignored: "verdictIgnored",
  hard_interrupt: "verdictHardInterrupt",
};

/** The user's guidance as the conversation shows it: marked as guidance, not a new turn. */
export function guidanceMessage(text: string): HTMLElement {
  return h(
    "article",
    { class: "msg user guidance" },
    h(
      "header",
      { class: "who" },
      tr("span", "you"),
      " ",
      tr("span", "guidance", undefined, { class: "guidance-marker" }),
    ),
    h("div", { class: "body" }, text),
  );
}

/** What the judge's events show (undefined for any other event). */
export function verdictElement(ev: WireEvent): HTMLElement | undefined {
  if (ev.type !== "CUSTOM" || ev.name !== CUSTOM_GUIDANCE) return undefined;
  const value = obj(ev.value);
  const data = obj(value.data);
  if (value.eventType === "interrupt_received")
    return tr("p", "guidanceReceived", undefined, { class: "note status guidance-received" });
  if (value.eventType !== "interrupt_classified") return undefined;
  const action = str(data.action);
  const key = data.paused === true ? "verdictPaused" : (VERDICTS[action] ?? "verdictContinue");
  const reason = str(data.reason);
  return h(
    "div",
    { class: "guidance-verdict", "data-action": action, role: "status" },
    tr("strong", "guidance", undefined, { class: "guidance-marker" }),
    " ",
    tr("span", key, { step: str(data.targetStepId) }, { class: "verdict" }),
    reason ? h("p", { class: "reason" }, reason) : null,
  );
}

export type GuidanceResult = { ok: true } | { ok: false; status?: number; code: string; message: string };

/** Sends one guidance run and reads it to its end (RUN_FINISHED, or the refusal / RUN_ERROR). */
export async function sendGuidance(o: {
  url: string;
  threadId: string;
  text: string;
  iacCode: Record<string, unknown>;
  headers: Record<string, string>;
}): Promise<GuidanceResult> {
  const res = await fetch(o.url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "text/event-stream", ...o.headers },
    body: JSON.stringify({
      threadId: o.threadId,
      runId: randomId("guidance"),
      state: {},
      messages: [{ id: randomId("user"), role: "user", content: o.text }],
      tools: [],
      context: [],
      forwardedProps: { iacCode: { ...o.iacCode, runMode: "pipeline", activeGuidance: true } },
    }),
  });
  const body = await res.text();
  if (!res.ok) {
    let error = { code: String(res.status), message: body };
    try {
      error = { ...error, ...obj(obj(JSON.parse(body) as unknown).error) };
    } catch {
      // Not the adapter's JSON error: the status and the text say it.
    }
    return { ok: false, status: res.status, code: str(error.code), message: str(error.message) };
  }
  for (const line of body.split("\n")) {
    if (!line.startsWith("data:")) continue;
    const ev = obj(JSON.parse(line.slice(5)) as unknown);
    if (ev.type === "RUN_ERROR") return { ok: false, code: str(ev.code), message: str(ev.message) };
  }
  return { ok: true };
}
