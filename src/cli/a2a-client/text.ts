// The text a person wants from an A2A reply (first non-empty): the status
// message of a status update or task, a direct message, an artifact's text,
// else the trailing run of agent messages in the task's history.
import { pb } from "../../contract/index.js";

export function messageText(message: pb.Message | undefined): string {
  return partsText(message?.parts ?? []);
}

function partsText(parts: pb.Part[]): string {
  return parts
    .map((part) => (part.content.case === "text" ? part.content.value : ""))
    .filter((text) => text !== "")
    .join(" ");
}

/** Agent messages at the end of the history, up to the first user or text-less entry. */
function trailingAgentText(history: pb.Message[]): string {
  const texts: string[] = [];
  for (let i = history.length - 1; i >= 0; i -= 1) {
    const text = history[i].role === pb.Role.AGENT ? messageText(history[i]) : "";
    if (text === "") break;
    texts.unshift(text);
  }
  return texts.join(" ");
}

export function taskText(task: pb.Task): string {
  return messageText(task.status?.message) || trailingAgentText(task.history);
}

type Payload = pb.SendMessageResponse["payload"] | pb.StreamResponse["payload"];

export function replyText(payload: Payload): string {
  switch (payload.case) {
    case "task":
      return taskText(payload.value);
    case "message":
      return messageText(payload.value);
    case "statusUpdate":
      return messageText(payload.value.status?.message);
    case "artifactUpdate":
      return partsText(payload.value.artifact?.parts ?? []);
    default:
      return "";
  }
}

/** `TASK_STATE_INPUT_REQUIRED` -> `input-required`. */
export function stateLabel(state: pb.TaskState | undefined): string {
  const name = pb.TaskState[state ?? pb.TaskState.UNSPECIFIED] ?? String(state);
  return name.toLowerCase().replace(/_/g, "-");
}
