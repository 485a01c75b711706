// How the pipeline tests answer an AG-UI interrupt: the first choice its
// response schema offers (allow once, the first option, the first resource
// found, confirm, continue), or a given option id where the interrupt lists it.

export interface ResumeEntry {
  interruptId: string;
  status: "resolved";
  payload: unknown;
}

/** What answering needs of an interrupt (AG-UI's Interrupt has these). */
export interface AnswerableInterrupt {
  id: string;
  responseSchema?: unknown;
  metadata?: unknown;
}

export function answerFor(interrupt: AnswerableInterrupt, optionId?: string): ResumeEntry {
  const schema = interrupt.responseSchema as {
    properties?: { decision?: unknown };
    oneOf?: Array<{ properties: Record<string, { const?: string }> }>;
  };
  const meta = interrupt.metadata as { options?: Array<{ id: string }> } | undefined;
  let payload: unknown;
  if (schema.properties?.decision) payload = { decision: "allow_once" };
  else {
    const branches = schema.oneOf ?? [];
    const chosen = branches.find(
      (b) => optionId !== undefined && b.properties.selectedId?.const === optionId,
    );
    const first = (chosen ?? branches[0]).properties;
    if (first.selectedId) payload = { selectedId: first.selectedId.const };
    else if (first.value) payload = { value: meta?.options?.[0]?.id };
    else payload = { freeText: "continue" };
  }
  return { interruptId: interrupt.id, status: "resolved", payload };
}
