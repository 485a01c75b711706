// Server-made ids: task, context and session ids are version 7 UUIDs (time
// first), so the rows keyed by them land together in the state store.
import { expect } from "chai";
import { newId } from "../../src/a2a/core/request/ids.js";
import { newSessionId, newTimeOrderedId } from "../../src/runtime/ids.js";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("ids: time-ordered UUIDs", () => {
  it("are RFC 9562 version 7 UUIDs carrying the time in ms, unique", () => {
    const before = Date.now();
    const ids = Array.from({ length: 1000 }, newTimeOrderedId);
    const after = Date.now();
    for (const id of ids) expect(id).to.match(UUID_V7);
    expect(new Set(ids).size).to.equal(ids.length);
    const ms = parseInt(ids[0].replaceAll("-", "").slice(0, 12), 16);
    expect(ms).to.be.within(before, after);
  });

  it("sort by creation time across milliseconds (task, context and session ids alike)", async () => {
    const earlier = [newId(), newSessionId()];
    await new Promise((resolve) => setTimeout(resolve, 3));
    const later = [newId(), newSessionId()];
    for (const a of earlier) for (const b of later) expect(a < b).to.equal(true);
  });
});
