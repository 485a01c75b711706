// The pipeline panel: how the run ended (pipeline-outcome.ts), the steps
// timeline (from pipeline_started and the STEP_STARTED / STEP_FINISHED events;
// a failed step with its reason, the steps a rollback went back over), notices
// (pipeline-notices.ts), the candidates (candidates-view.ts), the deployment
// (deployment-view.ts) and the cleanup (cleanup-view.ts). Before any run: the
// demo scenarios to try (demo-tags.ts).
import type { Interrupt } from "@ag-ui/client";
import { CandidatesView } from "./candidates-view.js";
import { CleanupView } from "./cleanup-view.js";
import { demoTagList } from "./demo-tags.js";
import { DeploymentView } from "./deployment-view.js";
import { h } from "./dom.js";
import { i18nLabel, tr } from "./i18n.js";
import { obj, str, type Json } from "./json.js";
import { NoticesView } from "./pipeline-notices.js";
import { OutcomeView } from "./pipeline-outcome.js";
import { setNote, setState, stateOf, StepList, type StepState } from "./step-list.js";
import type { WireEvent } from "./transcript.js";

/** What the panel asks of its thread. */
export interface PipelineHooks {
  /** Sends a cleanupOnly request (the "Clean up" button). */
  cleanUp(): void;
  /** Puts a demo request in the message box. */
  tryDemo(text: string): void;
}

/** How a pipeline snapshot's step statuses show (pending stays pending). */
const SNAPSHOT_STATES: Record<string, StepState | undefined> = {
  running: "running",
  waiting_input: "waiting",
  completed: "done",
  failed: "failed",
  stale: "rolledBack",
};

/** Why a step or candidate failed: the short summary, else the error. */
const failureReason = (data: Json): string => str(data.errorSummary) || str(data.error);

export class PipelineView {
  readonly root: HTMLElement;
  private readonly empty: HTMLElement;
  private readonly timeline: StepList;
  private readonly outcome: OutcomeView;
  private readonly notices = new NoticesView();
  private readonly candidates = new CandidatesView();
  private readonly deployment = new DeploymentView();
  private readonly cleanup = new CleanupView();
  /** Steps finished since the last other event: a run that ends on an interrupt closes them only for now. */
  private justFinished: HTMLLIElement[] = [];

  constructor(hooks: PipelineHooks) {
    this.empty = h(
      "div",
      { class: "empty" },
      tr("p", "noPipeline"),
      demoTagList((text) => hooks.tryDemo(text)),
    );
    this.outcome = new OutcomeView(() => hooks.cleanUp());
    this.timeline = new StepList(h("ol", { class: "timeline", ...i18nLabel("steps") }));
    this.root = h(
      "section",
      { class: "pipeline" },
      this.empty,
      this.outcome.root,
      this.timeline.el,
      this.notices.root,
      this.candidates.root,
      this.deployment.root,
      this.cleanup.root,
    );
  }

  /** The timeline item or candidate step item of an AG-UI stepName. */
  private stepOf(stepName: string): HTMLLIElement | undefined {
    this.empty.hidden = true;
    const m = /^candidate:([^:]+):(.+)$/.exec(stepName);
    return m ? this.candidates.stepOf(m[1], m[2]) : this.timeline.item(stepName);
  }

  apply(ev: WireEvent): void {
    if (ev.type !== "STEP_FINISHED") {
      if (ev.type === "RUN_FINISHED" && obj(ev.outcome).type === "interrupt") {
        for (const li of this.justFinished) setState(li, "waiting");
      }
      this.justFinished = [];
    }
    switch (ev.type) {
      case "STEP_STARTED": {
        const li = this.stepOf(str(ev.stepName));
        if (li) {
          setState(li, "running");
          setNote(li);
        }
        break;
      }
      case "STEP_FINISHED": {
        const li = this.stepOf(str(ev.stepName));
        // A failure or a rollback says more than the step's end.
        if (li && stateOf(li) !== "failed" && stateOf(li) !== "rolledBack") {
          setState(li, "done");
          this.justFinished.push(li);
        }
        break;
      }
      case "CUSTOM":
        if (ev.name === "iac-code.pipeline.v1") this.pipelineEvent(obj(ev.value));
        break;
      case "ACTIVITY_SNAPSHOT":
        this.snapshot(ev);
        break;
    }
  }

  private pipelineEvent(value: Json): void {
    const data = obj(value.data);
    const candidate = obj(value.candidate);
    const eventType = str(value.eventType);
    const step = str(obj(value.candidateStep).id) || str(obj(value.step).id);
    if (this.cleanup.apply(eventType, data)) return;
    switch (eventType) {
      case "pipeline_started":
        this.empty.hidden = true;
        for (const name of Array.isArray(data.stepNames) ? data.stepNames : [])
          if (typeof name === "string") this.timeline.item(name);
        break;
      case "candidate_started":
        this.empty.hidden = true;
        this.candidates.card(candidate);
        break;
      case "candidate_completed":
      case "candidate_failed": {
        const failed = eventType === "candidate_failed" || data.failed === true;
        this.candidates.ended(candidate, failed, str(data.failedStepId), failureReason(data));
        break;
      }
      case "candidate_restart_requested":
        this.candidates.restarted(candidate, data);
        break;
      case "step_failed":
      case "candidate_step_failed": {
        const cid = str(candidate.id) || str(candidate.subPipelineId);
        const stepId = step || str(data.stepId);
        const li = cid ? this.stepOf(`candidate:${cid}:${stepId}`) : this.stepOf(stepId);
        if (li) {
          setState(li, "failed");
          const reason = failureReason(data);
          if (reason) setNote(li, h("span", { class: "reason" }, reason));
        }
        break;
      }
      case "rollback_completed":
        this.rollback(data, candidate, step);
        break;
      case "candidate_selected":
        this.candidates.selected(Number(data.candidateIndex));
        break;
      case "diagram_shown":
      case "candidate_detail_shown": {
        // Shown on its candidate's card; a block no card takes goes above the notices.
        const orphan = this.candidates.present(eventType, data);
        if (orphan) this.notices.root.before(orphan);
        break;
      }
      case "context_compaction_started":
      case "context_compacted":
      case "context_compaction_failed":
        this.notices.compaction(eventType, data, step);
        break;
      case "pipeline_warning":
        this.notices.warning(data, step);
        break;
      case "stack_progress":
      case "stack_current_changed":
        this.deployment.stack(data);
        break;
      case "stack_instances_progress":
        this.deployment.instances(data);
        break;
      case "pipeline_completed":
        this.empty.hidden = true;
        this.outcome.completed(data, this.cleanup.unfinished());
        break;
    }
  }

  /** rollback_completed: the run's (a notice, the steps gone back over) or a candidate's (on its card). */
  private rollback(data: Json, candidate: Json, step: string): void {
    const from = str(data.fromStep) || step;
    const to = str(data.toStep) || str(data.toStepId);
    if (str(candidate.id) || str(candidate.subPipelineId) || data.rollbackScope === "candidate") {
      this.candidates.status(candidate, "candidateRolledBack", str(data.reason), { from, to });
      return;
    }
    this.notices.rollback(data, from);
    // Steps after the target up to the one that asked are to be run again.
    const names = this.timeline.names();
    const first = names.indexOf(to);
    const last = names.indexOf(from);
    if (first >= 0 && last > first) {
      for (const name of names.slice(first + 1, last + 1)) setState(this.timeline.item(name), "rolledBack");
      setNote(this.timeline.item(from), tr("span", "rolledBackTo", { to }));
    }
    // The selection is undone: the user chooses again.
    this.candidates.unselect();
  }

  /**
   * ACTIVITY_SNAPSHOT: the pipeline's state, shown when the panel shows
   * nothing yet (a thread opened again after a reload); a panel that followed
   * the events already shows more than the snapshot says.
   */
  snapshot(ev: WireEvent): void {
    if (this.empty.hidden || ev.activityType !== "iac-code.pipeline.v1") return;
    const snap = obj(obj(ev.content).snapshot);
    const steps = Array.isArray(snap.steps) ? snap.steps.map(obj) : [];
    const candidates = Array.isArray(snap.candidates) ? snap.candidates.map(obj) : [];
    if (!steps.length && !candidates.length) return;
    this.empty.hidden = true;
    for (const step of steps) {
      const state = SNAPSHOT_STATES[str(step.status)];
      const li = this.timeline.item(str(step.id));
      if (state) setState(li, state);
    }
    for (const c of candidates) {
      const subSteps = Array.isArray(c.steps) ? c.steps.map(obj) : [];
      const card = { id: c.id, name: c.name, index: c.index, steps: subSteps.map((s) => str(s.id)) };
      this.candidates.card(card);
      for (const s of subSteps) {
        const li = this.candidates.stepOf(str(c.id), str(s.id));
        const state = SNAPSHOT_STATES[str(s.status)];
        if (li && state) setState(li, state);
      }
      if (c.status === "completed" || c.status === "failed")
        this.candidates.ended(card, c.status === "failed", "", "");
    }
  }

  /** A cost estimate's result, for its candidate's card. */
  toolResult(toolCallId: string, name: string, content: string): void {
    this.candidates.toolResult(toolCallId, name, content);
  }

  /** A candidate_selection interrupt: each candidate it offers gets a button answering with its option. */
  offerSelection(interrupt: Interrupt, choose: (selectedId: string, title: string) => void): boolean {
    return this.candidates.offerSelection(interrupt, choose);
  }

  /** Removes the Choose buttons (the selection was answered or cancelled). */
  clearSelection(): void {
    this.candidates.clearSelection();
  }

  /** A cleanupOnly run ended (the "Clean up" button is offered again if a deletion failed). */
  cleanupEnded(): void {
    this.outcome.cleanupEnded(this.cleanup.failed());
  }
}
