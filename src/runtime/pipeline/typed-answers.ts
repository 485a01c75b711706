// A plain message on a task that waits for a deployment confirmation or a
// resource selection is taken as its answer when it reads as one, as the
// candidate selection takes a typed choice: "confirm" (an option's id, action
// or label) or JSON {"action", "parameter_overrides"} for the confirmation; a
// resource id or an option's label for the selection ("none" chooses none).
// Anything else is left to the interrupt judge.
import { selectorProfile } from "../cloud/resource-selectors.js";
import type { InputAnswer, InputRequest } from "../seam.js";

function confirmationAnswer(request: InputRequest, text: string): InputAnswer | undefined {
  const lower = text.toLowerCase();
  const names = request.options.some(
    (o) => o.id.toLowerCase() === lower || o.action === lower || o.label.toLowerCase() === lower,
  );
  if (!names && !text.startsWith("{")) return undefined;
  return { kind: "deployment_confirmation", inputId: request.inputId, freeText: text };
}

function selectionAnswer(request: InputRequest, text: string): InputAnswer | undefined {
  const lower = text.toLowerCase();
  if (lower === "none" || lower === "cancel")
    return { kind: "cloud_resource_selection", inputId: request.inputId, cancelled: true };
  const option = request.options.find((o) => o.id === text || o.label.toLowerCase() === lower);
  if (option)
    return {
      kind: "cloud_resource_selection",
      inputId: request.inputId,
      value: option.id,
      label: option.label,
    };
  const profile = request.selector ? selectorProfile(request.selector.id) : undefined;
  if (profile && !profile.refusal(text))
    return { kind: "cloud_resource_selection", inputId: request.inputId, value: text };
  return undefined;
}

/** The answer a typed message gives one of the pending inputs, if it reads as one. */
export function typedAnswer(pending: readonly InputRequest[], message: string): InputAnswer | undefined {
  const text = message.trim();
  if (!text) return undefined;
  for (const request of pending) {
    if (request.kind === "deployment_confirmation") {
      const answer = confirmationAnswer(request, text);
      if (answer) return answer;
    }
    if (request.kind === "cloud_resource_selection") {
      const answer = selectionAnswer(request, text);
      if (answer) return answer;
    }
  }
  return undefined;
}
