// The group-commit engine on its own: one write per event-loop turn, the
// waiters woken by its outcome, a failed write's changes staged again, writes
// in flight reported in order, and the last commit at close.
import { expect } from "chai";
import { setImmediate as nextTurn } from "node:timers/promises";
import { createLogger } from "../../src/server/logger.js";
import { GroupCommit, type Staged, type StagedPart } from "../../src/server/group-commit.js";

interface Batch extends Staged {
  items: string[];
}

/** A part that stages strings. */
class Part implements StagedPart<Batch> {
  items: string[] = [];
  stage(item: string): void {
    this.items.push(item);
  }
  hasStaged(): boolean {
    return this.items.length > 0;
  }
  take(): Batch {
    const items = this.items;
    this.items = [];
    return { items, restage: () => this.items.unshift(...items) };
  }
}

const logger = createLogger({ silent: true });

describe("server: group commit", () => {
  it("synchronous: what one turn staged is one write; a failure rejects its waiters and restages", async () => {
    const written: string[][] = [];
    let fail = false;
    const a = new Part();
    const b = new Part();
    const group = new GroupCommit<Batch>((taken) => {
      if (fail) throw new Error("disk full");
      written.push(taken.flatMap((t) => t.items));
    }, logger);
    group.join(a);
    group.join(b);
    b.stage("b1");
    a.stage("a1");
    await Promise.all([group.commit(), group.commit()]);
    expect(written).to.deep.equal([["a1", "b1"]]);
    expect(group.commits).to.equal(1);

    fail = true;
    a.stage("a2");
    const error = await group.commit().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String(error)).to.include("disk full");
    expect(a.items).to.deep.equal(["a2"]);
    expect(() => group.commitNow()).to.throw("disk full");
    expect(a.items).to.deep.equal(["a2"]);

    fail = false;
    group.commitNow();
    expect(written).to.deep.equal([["a1", "b1"], ["a2"]]);
    a.stage("a3");
    await group.close();
    expect(written.at(-1)).to.deep.equal(["a3"]);
    a.stage("a4");
    expect(() => group.commitNow()).to.throw("closed");
  });

  it("asynchronous: the next write goes out before the last is answered; each resolves after those before it", async () => {
    const answers: Array<{ items: string[]; answer: (error?: Error) => void }> = [];
    const part = new Part();
    const group = new GroupCommit<Batch>(
      (taken) =>
        new Promise<void>((resolve, reject) => {
          answers.push({ items: taken[0].items, answer: (e) => (e ? reject(e) : resolve()) });
        }),
      logger,
    );
    group.join(part);
    part.stage("one");
    const first = group.commit();
    await nextTurn();
    part.stage("two");
    const second = group.commit();
    await nextTurn();
    expect(answers.map((a) => a.items)).to.deep.equal([["one"], ["two"]]);

    const resolved: string[] = [];
    void first.then(() => resolved.push("one"));
    void second.then(() => resolved.push("two"));
    answers[1].answer();
    await nextTurn();
    expect(resolved).to.deep.equal([]);
    answers[0].answer();
    await Promise.all([first, second]);
    expect(resolved).to.deep.equal(["one", "two"]);
    expect(group.commits).to.equal(2);

    part.stage("three");
    const third = group.commit().catch((e: unknown) => e);
    await nextTurn();
    part.stage("four");
    answers[2].answer(new Error("connection lost"));
    expect(String(await third)).to.include("connection lost");
    // Staged again, before what was staged meanwhile.
    expect(part.items).to.deep.equal(["three", "four"]);
    const closing = group.close();
    await nextTurn();
    answers[3].answer();
    await closing;
    expect(answers[3].items).to.deep.equal(["three", "four"]);
  });
});
