// The push worker: one loop per server process that claims a due job from the
// queue, delivers it, and acks it, schedules a retry (transient failure,
// attempts left) or moves it to the dead letters (permanent failure, or
// attempts exhausted). One loop keeps a task's events in order while its
// receiver answers. Delivery is at least once: a job whose ack is lost (a
// crash, a failed ack) is delivered again once its lease is over, with the same
// event id.
import type { Logger } from "pino";
import type { PushJob, PushOutbox } from "../stores/state.js";
import { deliver, type DeliveryDeps } from "./deliver.js";
import { Loop } from "./loop.js";
import { backoffMs, DeliveryError, errorSummary, MAX_ATTEMPTS, publicUrl } from "./retry.js";

/** A job handed to this worker; `receipt` is what the queue needs to settle it. */
export interface ClaimedJob {
  job: PushJob;
  receipt: string;
}

/** What the worker needs of a queue (local outbox or Redis Streams). */
export interface PushQueue {
  /** A due job leased to this worker, or undefined when none is due now. */
  claim(): Promise<ClaimedJob | undefined>;
  ack(claimed: ClaimedJob): Promise<void>;
  /** Puts the job (its attempt, nextAttemptAt and lastError updated) back for later. */
  retry(claimed: ClaimedJob, job: PushJob): Promise<void>;
  dead(claimed: ClaimedJob, job: PushJob): Promise<void>;
  close(): Promise<void>;
}

/** The local-file queue: the state database's outbox itself. */
export function localQueue(outbox: PushOutbox, leaseMs: number): PushQueue {
  return {
    claim: async () => {
      const job = await outbox.claim(leaseMs);
      return job && { job, receipt: job.jobId };
    },
    ack: (claimed) => outbox.ack(claimed.job.jobId),
    retry: (_claimed, job) => outbox.retry(job),
    dead: (_claimed, job) => outbox.dead(job),
    close: () => Promise.resolve(),
  };
}

/** How long the loop rests when no job is due. */
const IDLE_MS = 250;

export interface PushWorkerOptions {
  queue: PushQueue;
  delivery: DeliveryDeps;
  logger: Logger;
  idleMs?: number;
}

export class PushWorker extends Loop {
  constructor(private readonly options: PushWorkerOptions) {
    super();
  }

  /** Stops after the delivery in flight (bounded by the delivery timeout) and closes the queue. */
  override async stop(): Promise<void> {
    await super.stop();
    await this.options.queue.close();
  }

  protected async run(): Promise<void> {
    const { queue, logger } = this.options;
    while (!this.stopped) {
      let claimed: ClaimedJob | undefined;
      try {
        claimed = await queue.claim();
      } catch (error) {
        logger.warn({ err: error }, "push queue claim failed");
        await this.rest(1000);
        continue;
      }
      if (claimed) await this.process(claimed);
      else if (!this.stopped) await this.rest(this.options.idleMs ?? IDLE_MS);
    }
  }

  private async process(claimed: ClaimedJob): Promise<void> {
    const { queue, logger } = this.options;
    const { job } = claimed;
    const where = {
      jobId: job.jobId,
      eventId: job.eventId,
      taskId: job.taskId,
      configId: job.configId,
      url: publicUrl(job.url),
    };
    let failure: DeliveryError;
    try {
      await deliver(job, this.options.delivery);
      try {
        await queue.ack(claimed);
      } catch (error) {
        // Delivered: no retry, no dead letter; the lease running out delivers it again.
        logger.warn({ ...where, err: error }, "push delivered but not acknowledged in the queue");
      }
      logger.debug({ ...where, attempt: job.attempt + 1 }, "push delivered");
      return;
    } catch (error) {
      failure =
        error instanceof DeliveryError
          ? error
          : new DeliveryError(errorSummary("Error", "unexpected delivery failure"), true);
      if (!(error instanceof DeliveryError)) logger.error({ ...where, err: error }, "push delivery crashed");
    }
    const attempt = job.attempt + 1;
    const next: PushJob = { ...job, attempt, lastError: failure.summary };
    try {
      if (failure.transient && attempt < MAX_ATTEMPTS) {
        next.nextAttemptAt = Date.now() + backoffMs(attempt);
        await queue.retry(claimed, next);
        logger.warn({ ...where, attempt, error: failure.summary }, "push delivery failed; will retry");
      } else {
        await queue.dead(claimed, next);
        logger.error({ ...where, attempt, error: failure.summary }, "push delivery failed; dead letter");
      }
    } catch (error) {
      logger.warn({ ...where, err: error }, "push job not settled in the queue; its lease will expire");
    }
  }
}
