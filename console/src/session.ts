// One thread in the page: its @ag-ui/client HttpAgent, its views, the run in
// flight and the interrupts waiting for answers. A resume is sent once every
// pending interrupt has an answer; Cancel uses the cancel extension with the
// execution id of the iac-code.session.v1 event.
import { HttpAgent, type BaseEvent, type Interrupt } from "@ag-ui/client";
import { h, randomId } from "./dom.js";
import { FilesView } from "./files-view.js";
import { guidanceMessage, sendGuidance, verdictElement } from "./guidance.js";
import { language, t, tr } from "./i18n.js";
import { interruptCard, type Answer } from "./interrupts.js";
import { PipelineView } from "./pipeline-view.js";
import { observeExecution } from "./observe.js";
import { saveThread, type ThreadRecord } from "./threads.js";
import { Transcript, type WireEvent } from "./transcript.js";

export interface SessionHost {
  /** The Authorization header value, when the server needs a token. */
  authorization(): string | undefined;
  /** The server refused the token (401): ask for it again. */
  unauthorized(): void;
  /** Running state or pending interrupts changed (buttons, thread list). */
  changed(session: ThreadSession): void;
  /** Puts a request in the message box (a demo scenario to try). */
  tryDemo(text: string): void;
}

/** The adapter's base URL: the console is served at <base>console. */
export const BASE_URL = new URL(".", location.href).href;

export class ThreadSession {
  readonly files = new FilesView();
  readonly pipeline: PipelineView;
  readonly transcript: Transcript;
  readonly agent: HttpAgent;
  running = false;
  /** The run in flight is a pipeline's: the message box sends guidance to it. */
  pipelineRun = false;
  private answers = new Map<string, Answer>();
  private status?: HTMLElement;

  constructor(
    readonly record: ThreadRecord,
    private readonly host: SessionHost,
    restored: boolean,
  ) {
    this.pipeline = new PipelineView({
      cleanUp: () => void this.cleanUp(),
      tryDemo: (text) => host.tryDemo(text),
    });
    this.transcript = new Transcript(this.files, (id, name, content) =>
      this.pipeline.toolResult(id, name, content),
    );
    this.agent = new HttpAgent({ url: BASE_URL, threadId: record.id });
    if (restored) {
      this.transcript.note("earlier", "info");
      this.transcript.expectHistory();
    }
    // A thread opened again: its execution, if still running or waiting, is followed as an observer.
    if (restored && record.executionId && record.runId) void this.observe();
    else if (record.pending.length) this.showInterrupts(record.pending);
  }

  get pending(): Interrupt[] {
    return this.record.pending;
  }

  /** A new turn with the user's text. */
  async send(text: string, pipeline: boolean): Promise<void> {
    if (!this.record.title) this.record.title = text.slice(0, 60);
    saveThread(this.record);
    const id = randomId("user");
    this.transcript.user(text, id);
    this.agent.addMessage({ id, role: "user", content: text });
    await this.run({ pipeline });
  }

  /** Guidance for the running pipeline: its own run next to the pipeline's; the verdict comes on the pipeline's. */
  async guide(text: string): Promise<void> {
    this.transcript.element(guidanceMessage(text));
    const auth = this.host.authorization();
    try {
      const result = await sendGuidance({
        url: BASE_URL,
        threadId: this.record.id,
        text,
        iacCode: this.forwardedProps(true, false).iacCode as Record<string, unknown>,
        headers: { "Accept-Language": language(), ...(auth ? { Authorization: auth } : {}) },
      });
      if (result.ok) this.transcript.note("guidanceSent", "status guidance-sent");
      else {
        if (result.status === 401) this.host.unauthorized();
        this.transcript.note("error", "error", { code: result.code, message: result.message });
      }
    } catch (err) {
      this.transcript.note("requestFailed", "error", { message: (err as Error).message });
    }
  }

  /** Deletes the stacks the pipeline left behind: a cleanupOnly request (no model turn). */
  async cleanUp(): Promise<void> {
    if (this.running) return;
    const text = t("cleanUpMessage");
    this.transcript.user(text);
    this.agent.addMessage({ id: randomId("user"), role: "user", content: text });
    await this.run({ cleanupOnly: true });
    this.pipeline.cleanupEnded();
  }

  private async answer(id: string, answer: Answer): Promise<void> {
    this.answers.set(id, answer);
    if (!this.pending.every((i) => this.answers.has(i.id))) return;
    const resume = this.pending.map((i) => ({ interruptId: i.id, ...this.answers.get(i.id)! }));
    this.answers = new Map();
    this.pipeline.clearSelection();
    await this.run({ resume });
  }

  private forwardedProps(pipeline: boolean, cleanupOnly: boolean): Record<string, unknown> {
    return {
      iacCode: {
        schemaVersion: 1,
        rosInvocationId: this.record.rosInvocationId,
        cwd: this.record.cwd,
        preferredLanguage: language(),
        ...(pipeline ? { runMode: "pipeline" } : {}),
        ...(cleanupOnly ? { cleanupOnly: true } : {}),
      },
    };
  }

  private async run(options: {
    pipeline?: boolean;
    cleanupOnly?: boolean;
    resume?: Array<{ interruptId: string } & Answer>;
  }): Promise<void> {
    this.running = true;
    this.pipelineRun = options.pipeline === true;
    this.status?.remove();
    this.status = this.transcript.note("running", "status");
    this.host.changed(this);
    const auth = this.host.authorization();
    this.agent.headers = {
      "Accept-Language": language(),
      ...(auth ? { Authorization: auth } : {}),
    };
    let sawError = false;
    // A resume's answers were taken once the adapter announces the session (it does so only then).
    let accepted = false;
    let interrupts: Interrupt[] = [];
    let outcome = "";
    try {
      await this.agent.runAgent(
        {
          runId: randomId("run"),
          forwardedProps: this.forwardedProps(options.pipeline ?? false, options.cleanupOnly ?? false),
          ...(options.resume ? { resume: options.resume } : {}),
        },
        {
          onEvent: ({ event }: { event: BaseEvent }) => {
            const ev = event as unknown as WireEvent;
            this.apply(ev);
            if (ev.type === "RUN_ERROR") sawError = true;
            if (ev.type === "CUSTOM" && ev.name === "iac-code.session.v1") accepted = true;
            if (ev.type === "RUN_FINISHED") {
              const result = (ev.outcome ?? {}) as { type?: string; interrupts?: Interrupt[] };
              outcome = result.type ?? "success";
              interrupts = result.interrupts ?? [];
            }
          },
        },
      );
    } catch (err) {
      const status = (err as { status?: number }).status;
      const payload = (err as { payload?: { error?: { code?: string; message?: string } } }).payload;
      if (status === 401) this.host.unauthorized();
      if (payload?.error?.message)
        this.transcript.note("error", "error", {
          code: payload.error.code ?? String(status),
          message: payload.error.message,
        });
      else if (!sawError) this.transcript.note("requestFailed", "error", { message: (err as Error).message });
      sawError = true;
    } finally {
      this.running = false;
      this.pipelineRun = false;
      this.status?.remove();
      this.status = undefined;
    }
    if (outcome === "interrupt") {
      this.record.pending = interrupts;
      this.showInterrupts(interrupts);
      this.status = this.transcript.note("waitingAnswer", "status");
    } else if (!sawError || outcome || (options.resume && accepted)) {
      // Answered (the run may still fail after taking the answers): nothing waits any more,
      // for the client either (it refuses a new run while it holds interrupts).
      this.record.pending = [];
      this.agent.pendingInterrupts = [];
      if (outcome) this.transcript.note("finished", "status");
    }
    // A refused resume (its answers not taken) keeps the interrupts: answer them again.
    if (sawError && options.resume && !outcome && this.pending.length) this.showInterrupts(this.pending);
    saveThread(this.record);
    this.host.changed(this);
  }

  private apply(ev: WireEvent): void {
    if (ev.type === "RUN_STARTED" && typeof ev.runId === "string") this.record.runId = ev.runId;
    if (ev.type === "CUSTOM" && ev.name === "iac-code.session.v1") {
      const value = (ev.value ?? {}) as { executionId?: string };
      if (value.executionId) this.record.executionId = value.executionId;
      // Kept at once: a page reloaded during the run can attach to it again.
      saveThread(this.record);
    }
    this.transcript.apply(ev);
    this.pipeline.apply(ev);
    const verdict = verdictElement(ev);
    if (verdict) this.transcript.element(verdict);
    // A resume of a pipeline's run is a pipeline run too, once its steps show.
    const piped = ev.type === "STEP_STARTED" || (ev.type === "CUSTOM" && ev.name === "iac-code.pipeline.v1");
    if (this.running && !this.pipelineRun && piped) {
      this.pipelineRun = true;
      this.host.changed(this);
    }
  }

  /**
   * Follows the thread's execution read-only (the subscribe extension): the
   * conversation and the pipeline panel come back from its snapshots, then the
   * run's events to its end. Nothing running (404/409): the interrupts kept in
   * the thread list, if any, are shown to be answered.
   */
  private async observe(): Promise<void> {
    const { executionId, runId, id: threadId, rosInvocationId } = this.record;
    this.running = true;
    this.status = this.transcript.note("observing", "status");
    this.host.changed(this);
    const auth = this.host.authorization();
    let outcome = "";
    let interrupts: Interrupt[] = [];
    let status = 0;
    try {
      status = await observeExecution(
        BASE_URL,
        { executionId: executionId!, threadId, runId: runId!, rosInvocationId },
        { "Accept-Language": language(), ...(auth ? { Authorization: auth } : {}) },
        (ev) => {
          this.apply(ev);
          if (ev.type === "RUN_FINISHED") {
            const result = (ev.outcome ?? {}) as { type?: string; interrupts?: Interrupt[] };
            outcome = result.type ?? "success";
            interrupts = result.interrupts ?? [];
          }
        },
      );
    } catch (err) {
      this.transcript.note("requestFailed", "error", { message: (err as Error).message });
    } finally {
      this.running = false;
      this.status?.remove();
      this.status = undefined;
    }
    if (status === 401) this.host.unauthorized();
    if (outcome === "interrupt") {
      this.record.pending = interrupts;
      this.status = this.transcript.note("waitingAnswer", "status");
    } else if (outcome) {
      this.record.pending = [];
      this.transcript.note("finished", "status");
    }
    if (this.pending.length) this.showInterrupts(this.pending);
    saveThread(this.record);
    this.host.changed(this);
  }

  private showInterrupts(interrupts: Interrupt[]): void {
    for (const interrupt of interrupts) {
      const respond = (answer: Answer, shown: string) => {
        this.transcript.element(
          h(
            "article",
            { class: "msg user" },
            tr("header", "you", undefined, { class: "who" }),
            h("div", { class: "body" }, shown),
          ),
        );
        void this.answer(interrupt.id, answer);
      };
      const card = interruptCard(interrupt, respond);
      this.transcript.element(card.el);
      this.pipeline.offerSelection(interrupt, (selectedId, title) =>
        card.answer({ status: "resolved", payload: { selectedId } }, title),
      );
    }
  }

  /** Cancels the execution (the running one, or the one waiting on interrupts). */
  async cancel(): Promise<void> {
    const executionId = this.record.executionId;
    if (!executionId) {
      // No execution id yet: leaving the stream makes the adapter cancel the A2A task.
      if (this.running) this.agent.abortRun();
      return;
    }
    const auth = this.host.authorization();
    const res = await fetch(
      `${BASE_URL}extensions/iac-code/v1/executions/${encodeURIComponent(executionId)}/cancel`,
      {
        method: "POST",
        headers: { "Content-Type": "application/json", ...(auth ? { Authorization: auth } : {}) },
        body: JSON.stringify({ threadId: this.record.id, rosInvocationId: this.record.rosInvocationId }),
      },
    );
    if (res.status === 401) {
      this.host.unauthorized();
      return;
    }
    if (!this.running) {
      this.record.pending = [];
      this.agent.pendingInterrupts = [];
      this.answers = new Map();
      this.pipeline.clearSelection();
      for (const el of this.transcript.root.querySelectorAll<HTMLButtonElement | HTMLInputElement>(
        ".interrupt:not([data-answered]) :is(button, input)",
      ))
        el.disabled = true;
      this.status?.remove();
      this.transcript.note("cancelled", "status");
      saveThread(this.record);
      this.host.changed(this);
    }
  }
}
