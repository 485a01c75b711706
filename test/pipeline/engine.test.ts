// The pipeline engine behind the runtime seam: the whole selling pipeline
// driven by the scripted provider against the local ROS endpoint (steps,
// candidates in parallel, selection, deployment with stack progress,
// completion and handoff), the early exit, a failing candidate, a rollback
// that marks fields stale and cleans up, guards and nudges.
import { expect } from "chai";
import { ofType, removeTempDirs, turn, type AnswerBody } from "../runtime/helpers.js";
import type { InputRequest } from "../../src/runtime/seam.js";
import { envelopes, pipelineWorld, storyOf, type PipelineWorld } from "./helpers.js";

const PIPELINE = { runMode: "pipeline" as const };

/** Allows every permission and picks candidate `choice` when asked. */
function answers(choice: string) {
  return (request: InputRequest): AnswerBody | undefined =>
    request.kind === "permission"
      ? { kind: "permission", decision: "allow_once" }
      : request.kind === "candidate_selection"
        ? { kind: "candidate_selection", selectedId: choice }
        : request.kind === "ask_user_question"
          ? { kind: "ask_user_question", selectedId: "web" }
          : undefined;
}

describe("pipeline engine: the selling pipeline", function () {
  this.timeout(30_000);
  let world: PipelineWorld;
  beforeEach(async () => {
    world = await pipelineWorld();
  });
  afterEach(async () => {
    await world.close();
    await removeTempDirs();
  });

  it("runs every step, candidates in parallel, the selection and the deployment, then hands off", async () => {
    const events = await turn(world.session, "Deploy a small web app", {
      overrides: PIPELINE,
      answer: answers("1"),
    });
    const list = envelopes(events);
    const story = storyOf(list);
    console.log(story.join(" "));
    expect(story[0]).to.equal("pipeline_started");
    expect(story.slice(-2)).to.deep.equal(["pipeline_completed", "pipeline_handoff_ready"]);
    expect(ofType(events, "error")).to.deep.equal([]);
  });
});
