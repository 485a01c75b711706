// How a turn is shown. --output json: every event (or the reply) as one
// compact JSON line. Text on a pipe: the streamed text as it comes, then one
// line per other event, its text or compact JSON (the reply: its text or indented JSON). Text on a terminal: agent text
// as it streams, tool steps as short lines, a spinner with the elapsed time
// while waiting. A request nobody answers here is printed as one JSON line.
import { encodeProtoJson, pb } from "../../contract/index.js";
import type { InputRequest } from "./inputs.js";
import { sortedJson, type Writer } from "./output.js";
import { messageText, replyText, stateLabel } from "./text.js";

export interface TurnRenderer {
  /** A request was sent; nothing has come back yet. */
  waiting(): void;
  event(event: pb.StreamResponse): void;
  reply(reply: pb.SendMessageResponse): void;
  /** The turn stopped on a request that will not be answered here. */
  inputRequired(request: InputRequest): void;
  /** Stops any animation and ends the current line (before a prompt, at the end). */
  settle(): void;
}

const eventJson = (event: pb.StreamResponse) => encodeProtoJson(pb.StreamResponseSchema, event);
const replyJson = (reply: pb.SendMessageResponse) => encodeProtoJson(pb.SendMessageResponseSchema, reply);

export class JsonRenderer implements TurnRenderer {
  constructor(protected readonly out: Writer) {}
  waiting(): void {}
  event(event: pb.StreamResponse): void {
    this.out.write(`${sortedJson(eventJson(event))}\n`);
  }
  reply(reply: pb.SendMessageResponse): void {
    this.out.write(`${sortedJson(replyJson(reply))}\n`);
  }
  inputRequired(request: InputRequest): void {
    this.out.write(`${sortedJson(request)}\n`);
  }
  settle(): void {}
}

/**
 * Text on a pipe: like JSON, but an event or reply with text prints its text. The
 * streamed text deltas are written as they come, without added line breaks (the
 * final message repeating them is skipped); anything else starts a line of its own.
 */
export class PlainRenderer extends JsonRenderer {
  private atLineStart = true;
  private streamed = false;

  override event(event: pb.StreamResponse): void {
    const { payload } = event;
    if (payload.case === "statusUpdate") {
      const iac = payload.value.metadata?.iac_code;
      const final = iac !== null && typeof iac === "object" && !Array.isArray(iac) && "assistantFinal" in iac;
      const text = messageText(payload.value.status?.message);
      if (text && !final) {
        this.write(text);
        this.streamed = true;
        return;
      }
      const repeated = final && this.streamed;
      if (final) this.streamed = false;
      if (text && repeated) return;
    }
    const text = replyText(payload);
    this.settle();
    if (text) this.write(`${text}\n`);
    else super.event(event);
  }
  override reply(reply: pb.SendMessageResponse): void {
    this.out.write(`${replyText(reply.payload) || sortedJson(replyJson(reply), 2)}\n`);
  }
  override inputRequired(request: InputRequest): void {
    this.settle();
    super.inputRequired(request);
  }
  /** Ends a line of streamed text. */
  override settle(): void {
    if (!this.atLineStart) this.write("\n");
  }
  private write(text: string): void {
    this.out.write(text);
    this.atLineStart = text.endsWith("\n");
  }
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** A one-line spinner on the terminal's stderr: `⠋ working 3.2s`. */
class Spinner {
  private timer: NodeJS.Timeout | undefined;
  private frame = 0;
  label = "waiting";

  constructor(
    private readonly err: Writer,
    private readonly since: number,
  ) {}

  start(): void {
    if (this.timer) return;
    this.draw();
    this.timer = setInterval(() => this.draw(), 100);
    this.timer.unref();
  }

  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.err.write("\r\x1b[2K");
  }

  private draw(): void {
    const seconds = ((Date.now() - this.since) / 1000).toFixed(1);
    this.err.write(`\r\x1b[2K${FRAMES[this.frame++ % FRAMES.length]} ${this.label} ${seconds}s`);
  }
}

interface ToolTrace {
  status?: string;
  name?: string;
}

export class LiveRenderer implements TurnRenderer {
  private readonly spinner: Spinner;
  private atLineStart = true;
  /** Text chunks streamed in this turn: the final answer that repeats them is not printed again. */
  private streamed = false;

  constructor(
    private readonly out: Writer,
    err: Writer,
  ) {
    this.spinner = new Spinner(err, Date.now());
  }

  waiting(): void {
    this.spinner.start();
  }

  event(event: pb.StreamResponse): void {
    const { payload } = event;
    switch (payload.case) {
      case "statusUpdate":
        return this.statusUpdate(payload.value);
      case "message":
        return this.line(messageText(payload.value));
      case "artifactUpdate": {
        // Artifacts are usually files (a file:// URL part); their text, if any, follows.
        const artifact = payload.value.artifact;
        const urls = (artifact?.parts ?? []).flatMap((p) =>
          p.content.case === "url" ? [p.content.value] : [],
        );
        const label = [artifact?.name || artifact?.artifactId, ...urls, replyText(payload)].filter(Boolean);
        return this.line(`artifact ${label.join(" ")}`);
      }
      case "task":
        this.spinner.label = stateLabel(payload.value.status?.state);
        return this.spinner.start();
    }
  }

  reply(reply: pb.SendMessageResponse): void {
    this.spinner.stop();
    this.line(replyText(reply.payload) || sortedJson(replyJson(reply), 2));
  }

  inputRequired(request: InputRequest): void {
    this.settle();
    this.out.write(`${sortedJson(request)}\n`);
  }

  settle(): void {
    this.spinner.stop();
    if (!this.atLineStart) this.write("\n");
  }

  private statusUpdate(update: pb.TaskStatusUpdateEvent): void {
    const iac = update.metadata?.iac_code;
    const meta = iac && typeof iac === "object" && !Array.isArray(iac) ? iac : {};
    const text = messageText(update.status?.message);
    const final = meta.assistantFinal !== undefined;
    if (text && !(final && this.streamed)) {
      this.spinner.stop();
      this.write(text);
      if (!final) this.streamed = true;
    }
    if (final) this.streamed = false;
    const tool = meta.tool as ToolTrace | undefined;
    if (tool?.status === "completed" || tool?.status === "failed") {
      this.line(
        `${tool.status === "completed" ? "✓" : "✗"} ${tool.name ?? "tool"}${tool.status === "failed" ? " failed" : ""}`,
      );
    }
    this.spinner.label =
      tool?.status === "started" ? `running ${tool.name ?? "tool"}` : stateLabel(update.status?.state);
    if (this.atLineStart) this.spinner.start();
  }

  /** Text on a line of its own. */
  private line(text: string): void {
    if (!text) return;
    this.spinner.stop();
    if (!this.atLineStart) this.write("\n");
    this.write(`${text}\n`);
  }

  private write(text: string): void {
    this.out.write(text);
    this.atLineStart = text.endsWith("\n");
  }
}
