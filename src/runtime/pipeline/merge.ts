// Several event producers of one pipeline turn side by side (parallel
// candidates; the step loop and the interruptions handled beside it): their
// events come out as they happen. The turn's outermost merge (the host's)
// also puts envelopes strictly in sequence order; it is the only one that
// does, since it sees every producer of the turn.
import { Channel } from "../loop/channel.js";
import type { PipelineEnvelope, RuntimeEvent } from "../seam.js";

/** The first sequence number an event publishes, if it publishes envelopes. */
function sequenceOf(event: RuntimeEvent): number | undefined {
  const list = event.type === "pipeline" ? event.envelopes : "pipeline" in event ? event.pipeline : undefined;
  return list?.[0]?.sequence;
}

/**
 * Runs generators side by side; their events come out as they happen. With
 * `firstSequence` (the next sequence the turn numbers), envelopes come out
 * strictly in sequence order: two producers finishing their journal writes
 * close together may resume in either order.
 */
export async function* merge<T>(
  runs: Array<AsyncGenerator<RuntimeEvent, T>>,
  options: { firstSequence?: number; onError?: () => void } = {},
): AsyncGenerator<RuntimeEvent, T[]> {
  const { firstSequence, onError } = options;
  const channel = new Channel<RuntimeEvent>();
  const held: RuntimeEvent[] = [];
  let expected = firstSequence ?? 0;
  const release = (event: RuntimeEvent): void => {
    if (firstSequence === undefined || sequenceOf(event) === undefined) return channel.push(event);
    held.push(event);
    held.sort((a, b) => (sequenceOf(a) as number) - (sequenceOf(b) as number));
    while (held.length > 0 && sequenceOf(held[0]) === expected) {
      const next = held.shift() as RuntimeEvent;
      const list =
        next.type === "pipeline"
          ? next.envelopes
          : ((next as { pipeline?: PipelineEnvelope[] }).pipeline ?? []);
      expected = (list.at(-1)?.sequence ?? expected) + 1;
      channel.push(next);
    }
  };
  const all = Promise.all(
    runs.map(async (run) => {
      try {
        for (;;) {
          const next = await run.next();
          if (next.done) return next.value;
          release(next.value);
        }
      } catch (error) {
        onError?.();
        throw error;
      }
    }),
  );
  all.catch(() => undefined);
  try {
    yield* channel.drain(all);
    // Whatever is still held (a run that stopped between numbering and publishing) goes out in order.
    yield* held.splice(0);
    return await all;
  } finally {
    // A consumer that stops early still waits for the runs to unwind (they watch the turn's signal).
    await all.catch(() => undefined);
  }
}
