// Shared checks for AG-UI streams: every event validates against our contract
// (schemaIndex["agui/event"]), the whole stream passes the official client's
// enforcement and verifier (@ag-ui/client 1.0) without a single warning, and our
// own stricter verifier (scripts/lib/agui-stream-verifier.ts), run by run across the runs
// of a thread for every stream the harness reads (post, agentRun).
import { expect } from "chai";
import { from, lastValueFrom, toArray } from "rxjs";
import { enforceEvents, transformChunks, verifyEvents, type BaseEvent } from "@ag-ui/client";
import { schemaIndex, violations } from "../../src/contract/index.js";
import { ThreadStreamVerifier } from "../../scripts/lib/agui-stream-verifier.js";

/** An event as read off the wire, before any narrowing (tests read its fields freely). */
export interface WireEvent {
  type: string;
  timestamp: number;
  [key: string]: unknown;
}
/** Wire events, or the translator's typed events (both are checked the same way). */
type AnyEvent = { type: string };

export function expectContractValid(events: readonly AnyEvent[]): void {
  const validate = schemaIndex["agui/event"].validate;
  for (const ev of events) {
    const ok = validate(ev);
    expect(
      ok,
      `${ev.type} ${JSON.stringify(ev)}: ${JSON.stringify(ok ? [] : violations(validate))}`,
    ).to.equal(true);
  }
}

/** Captures console.warn while fn runs. */
export async function captureWarnings<T>(fn: () => Promise<T>): Promise<{ result: T; warnings: string[] }> {
  const warnings: string[] = [];
  const original = console.warn;
  console.warn = (...args: unknown[]) => warnings.push(args.map(String).join(" "));
  try {
    return { result: await fn(), warnings };
  } finally {
    console.warn = original;
  }
}

/** Runs recorded events through the official client's pipeline; throws on a protocol violation. */
export async function expectClientAccepts(events: readonly AnyEvent[]): Promise<void> {
  const { warnings } = await captureWarnings(() =>
    lastValueFrom(
      from(events as unknown as BaseEvent[]).pipe(
        enforceEvents(),
        transformChunks(),
        verifyEvents(),
        toArray(),
      ),
    ),
  );
  expect(warnings, warnings.join("\n")).to.deep.equal([]);
}

export async function expectValidStream(events: readonly AnyEvent[]): Promise<void> {
  expectContractValid(events);
  await expectClientAccepts(events);
  expectStrict(new ThreadStreamVerifier(undefined, { unseenEarlierRuns: true }), events);
}

function expectStrict(verifier: ThreadStreamVerifier, events: readonly AnyEvent[], complete = true): void {
  const problems = verifier.run(events, { complete });
  expect(
    problems,
    `${JSON.stringify(problems)}\n${events.map((e) => JSON.stringify(e)).join("\n")}`,
  ).to.deep.equal([]);
}

/** One verifier per thread of an adapter (its URL): message and tool ids stay unique across runs. */
const threads = new Map<string, ThreadStreamVerifier>();

/** A restarted adapter (new URL) continues the threads of the one it replaces. */
export function carryThreadVerifiers(fromUrl: string, toUrl: string): void {
  for (const [key, verifier] of [...threads]) {
    if (key.startsWith(`${fromUrl} `)) threads.set(`${toUrl} ${key.slice(fromUrl.length + 1)}`, verifier);
  }
}

/** The strict verifier over one run of `threadId` on the adapter at `url`, after its earlier runs. */
export function expectStrictThreadRun(
  url: string,
  threadId: string,
  events: readonly AnyEvent[],
  complete = true,
): void {
  const key = `${url} ${threadId}`;
  let verifier = threads.get(key);
  if (!verifier) threads.set(key, (verifier = new ThreadStreamVerifier(threadId)));
  expectStrict(verifier, events, complete);
}

export const types = (events: readonly AnyEvent[]): string[] => events.map((e) => e.type);
