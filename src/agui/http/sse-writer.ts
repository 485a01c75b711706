// The SSE side of a run: one `data:` line per AG-UI event, LF-only `\n\n`
// separators (the official client splits on exactly that), and a `: heartbeat`
// comment after each quiet interval so proxies and fetch body timeouts keep the
// connection open. Notices client disconnects. Events sent in one tick leave in
// one write of one string: one chunk and one syscall per burst, not per event
// (a write per event costs four buffers of chunked encoding each).
import type { ServerResponse } from "node:http";
import type { AguiEvent } from "../events.js";
import { sseComment, sseJsonFrame } from "../../server/sse.js";

export const HEARTBEAT_MS = 15_000;

export class SseWriter {
  private timer: NodeJS.Timeout | undefined;
  /** When the last bytes went out: the heartbeat timer is armed once per interval, not per event. */
  private lastWrite = 0;
  /** The frames sent in this tick, written when it ends. */
  private pending = "";
  private closedByClient = false;
  private ended = false;
  private readonly onClose: Array<() => void> = [];

  constructor(
    private readonly res: ServerResponse,
    private readonly heartbeatMs: number = HEARTBEAT_MS,
  ) {
    res.on("close", () => {
      if (!this.ended) {
        this.closedByClient = true;
        this.stopHeartbeat();
        for (const fn of this.onClose) fn();
      }
    });
  }

  open(): void {
    this.res.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache",
      "X-Accel-Buffering": "no",
      Connection: "keep-alive",
    });
    // No flushHeaders(): RUN_STARTED follows in this tick and leaves with them, in one write.
    this.lastWrite = Date.now();
    this.armHeartbeat();
  }

  get disconnected(): boolean {
    return this.closedByClient;
  }

  /** Runs fn when the client goes away before the stream ended. */
  onDisconnect(fn: () => void): void {
    if (this.closedByClient) fn();
    else this.onClose.push(fn);
  }

  send(event: AguiEvent): void {
    if (this.ended || this.closedByClient) return;
    if (this.pending === "") process.nextTick(this.flush);
    this.pending += sseJsonFrame(JSON.stringify(event));
  }

  end(): void {
    if (this.ended) return;
    this.flush();
    this.ended = true;
    this.stopHeartbeat();
    if (!this.closedByClient) this.res.end();
  }

  private readonly flush = (): void => {
    if (this.pending === "") return;
    if (!this.ended && !this.closedByClient) this.res.write(this.pending);
    this.pending = "";
    this.lastWrite = Date.now();
  };

  /** A heartbeat goes out when nothing was written for heartbeatMs. */
  private armHeartbeat(delay = this.heartbeatMs): void {
    this.stopHeartbeat();
    if (this.ended || this.closedByClient) return;
    this.timer = setTimeout(() => {
      if (this.ended || this.closedByClient) return;
      const quiet = Date.now() - this.lastWrite;
      if (quiet < this.heartbeatMs) return this.armHeartbeat(this.heartbeatMs - quiet);
      this.res.write(sseComment("heartbeat"));
      this.lastWrite = Date.now();
      this.armHeartbeat();
    }, delay);
    this.timer.unref();
  }

  private stopHeartbeat(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
