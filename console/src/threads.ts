// The thread list, kept in the browser's localStorage: each thread's id, title,
// workspace and invocation id (a resume must repeat it), and the interrupts it
// waits on, so a reloaded page can still answer them. No token, no key: only
// what the adapter already knows about the thread.
import type { Interrupt } from "@ag-ui/client";

export interface ThreadRecord {
  id: string;
  title: string;
  cwd: string;
  rosInvocationId: string;
  createdAt: number;
  /** The execution of the last run (from iac-code.session.v1): what Cancel cancels. */
  executionId?: string;
  /** The id of the run that started that execution: an observer names it (subscribe extension). */
  runId?: string;
  /** Interrupts of the last run, not answered yet. */
  pending: Interrupt[];
}

const KEY = "iac-code-console.threads";

export function loadThreads(): ThreadRecord[] {
  try {
    const parsed: unknown = JSON.parse(localStorage.getItem(KEY) ?? "[]");
    return Array.isArray(parsed) ? (parsed as ThreadRecord[]).filter((r) => typeof r?.id === "string") : [];
  } catch {
    return [];
  }
}

export function saveThread(record: ThreadRecord): void {
  const others = loadThreads().filter((r) => r.id !== record.id);
  localStorage.setItem(KEY, JSON.stringify([record, ...others].slice(0, 50)));
}
