// Printing: JSON with sorted keys (indented for people, one compact line for
// --output json), and the task table of task-list.
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { pb } from "../../contract/index.js";
import { messageText, stateLabel } from "./text.js";

export interface Writer {
  write(text: string): unknown;
  isTTY?: boolean;
}

export type OutputFormat = "text" | "json" | "table";

/**
 * A writer that masks the given secrets (also in their JSON-escaped form), so
 * a server that echoes a key it was sent does not put it on the screen or in a
 * script's log.
 */
export function redacting(writer: Writer, secrets: string[]): Writer {
  const needles = [...new Set(secrets.flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]))].filter(
    (s) => s.length >= 4,
  );
  if (needles.length === 0) return writer;
  return {
    isTTY: writer.isTTY,
    write: (text: string) =>
      writer.write(needles.reduce((out, needle) => out.split(needle).join("***"), text)),
  };
}

const sortKeys = (_key: string, value: unknown): unknown =>
  value !== null && typeof value === "object" && !Array.isArray(value)
    ? Object.fromEntries(
        Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      )
    : value;

export function sortedJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, sortKeys, indent);
}

/** Indented JSON for text output, one compact line for --output json. */
export function printJson(out: Writer, value: unknown, format: OutputFormat): void {
  out.write(`${sortedJson(value, format === "json" ? undefined : 2)}\n`);
}

function clip(text: string, width: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > width ? `${flat.slice(0, width - 3)}...` : flat;
}

/** RFC 3339 to the second (fits the 20-character Updated column). */
function updated(timestamp: pb.TaskStatus["timestamp"]): string {
  return timestamp
    ? timestampDate(timestamp)
        .toISOString()
        .replace(/\.\d{3}Z$/, "Z")
    : "";
}

/** Name, minimum width, and whether a longer value is clipped (ids never are: they are copied). */
const COLUMNS: Array<[string, number, boolean]> = [
  ["ID", 28, false],
  ["Status", 14, true],
  ["Context", 22, false],
  ["Updated", 20, true],
  ["Message", 56, true],
];

function row(cells: string[], widths: number[]): string {
  return cells
    .map((cell, i) => {
      const text = COLUMNS[i][2] ? clip(cell, widths[i]) : cell;
      return i === cells.length - 1 ? text : text.padEnd(widths[i]);
    })
    .join("  ")
    .trimEnd();
}

/** The task table, the count line, and the command for the next page when there is one. */
export function taskTable(
  response: pb.ListTasksResponse,
  nextPageCommand: (token: string) => string,
): string {
  if (response.tasks.length === 0) return "No A2A tasks found.\n";
  const rows = response.tasks.map((task) => [
    task.id,
    stateLabel(task.status?.state),
    task.contextId,
    updated(task.status?.timestamp),
    messageText(task.status?.message),
  ]);
  const widths = COLUMNS.map(([, width, clipped], i) =>
    clipped ? width : Math.max(width, ...rows.map((cells) => cells[i].length)),
  );
  const lines = [
    row(
      COLUMNS.map(([name]) => name),
      widths,
    ),
    ...rows.map((cells) => row(cells, widths)),
  ];
  const shown = response.tasks.length;
  lines.push(
    response.totalSize >= shown && response.totalSize > 0
      ? `Showing ${shown} of ${response.totalSize} tasks.`
      : `Showing ${shown} tasks.`,
  );
  if (response.nextPageToken) lines.push(`Next page: ${nextPageCommand(response.nextPageToken)}`);
  return `${lines.join("\n")}\n`;
}

/** A shell word: quoted only when it needs to be. */
export function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
