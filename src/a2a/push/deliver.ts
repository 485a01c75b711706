// One delivery of one push job: the URL policy again (with the DNS lookup,
// every address public or allowlisted), the headers computed now from the
// sealed secrets (X-A2A-Notification-Token, Authorization per scheme, the
// event id), and a POST of the StreamResponse JSON to the pinned first
// address, with the original Host and TLS SNI, on a fresh connection, within
// the delivery timeout. Any 2xx is success; a failure is a DeliveryError that
// says whether a retry may help and carries no secret.
import http from "node:http";
import { inSpan, SpanKind } from "../../server/tracing/index.js";
import https from "node:https";
import { isIP } from "node:net";
import type { PushJob } from "../stores/state.js";
import type { PushSecrets } from "./configs.js";
import { KeyringError, type Keyring } from "./keyring.js";
import { DeliveryError, errorSummary, isTransientStatus } from "./retry.js";
import {
  CallbackUrlError,
  checkCallbackUrl,
  resolveCallback,
  type PrivateHostAllowlist,
  type Resolver,
} from "./url-policy.js";

/** The header that carries a stable id per event: the same on every delivery of it. */
export const EVENT_ID_HEADER = "X-IAC-Code-Event-Id";
export const TOKEN_HEADER = "X-A2A-Notification-Token";

export interface DeliveryDeps {
  keyring: Keyring;
  allow: PrivateHostAllowlist;
  resolve: Resolver;
  timeoutMs: number;
  /** Safe mode: the payload as sent (paths projected); the stored job keeps the original. */
  projectPayload?: (payload: string) => string;
}

/** The Authorization value for a scheme and its credentials (none when there are no credentials). */
export function authorizationHeader(scheme: string, credentials: string | undefined): string | undefined {
  if (!scheme || !credentials) return undefined;
  switch (scheme.toLowerCase()) {
    case "bearer":
      return `Bearer ${credentials}`;
    case "basic":
      return `Basic ${Buffer.from(credentials, "utf8").toString("base64")}`;
    default:
      return `${scheme} ${credentials}`;
  }
}

function secretsOf(job: PushJob, keyring: Keyring): PushSecrets {
  if (!job.sealedSecrets) return {};
  try {
    return JSON.parse(keyring.open(job.sealedSecrets)) as PushSecrets;
  } catch (error) {
    const message = error instanceof KeyringError ? error.message : "sealed secrets are not readable";
    throw new DeliveryError(errorSummary("KeyringError", message), false);
  }
}

export function deliver(job: PushJob, deps: DeliveryDeps): Promise<void> {
  // A root span per attempt (the worker runs outside any request): task, attempt, and the outcome.
  return inSpan(
    "iac-code.a2a",
    "push delivery",
    {
      kind: SpanKind.CLIENT,
      attributes: { "iac_code.task_id": job.taskId, "iac_code.push.attempt": job.attempt + 1 },
    },
    async (span) => {
      try {
        await deliverOnce(job, deps);
      } catch (error) {
        if (error instanceof DeliveryError) span?.setAttribute("iac_code.push.transient", error.transient);
        throw error;
      }
    },
  );
}

async function deliverOnce(job: PushJob, deps: DeliveryDeps): Promise<void> {
  let address: string;
  let target: ReturnType<typeof checkCallbackUrl>;
  try {
    target = checkCallbackUrl(job.url, deps.allow);
    address = await resolveCallback(target, deps.allow, deps.resolve);
  } catch (error) {
    if (error instanceof CallbackUrlError)
      throw new DeliveryError(errorSummary(error.name, error.message), false);
    // A failed lookup may be a passing DNS outage.
    const code = (error as NodeJS.ErrnoException).code ?? "DNSError";
    throw new DeliveryError(errorSummary("DNSError", `${code} looking up ${target!.hostname}`), true);
  }
  const secrets = secretsOf(job, deps.keyring);
  const body = Buffer.from(deps.projectPayload ? deps.projectPayload(job.payload) : job.payload, "utf8");
  const headers: http.OutgoingHttpHeaders = {
    Host: target.url.host,
    "Content-Type": "application/a2a+json",
    "Content-Length": body.length,
    [EVENT_ID_HEADER]: job.eventId,
  };
  if (secrets.token) headers[TOKEN_HEADER] = secrets.token;
  const authorization = authorizationHeader(job.scheme, secrets.credentials);
  if (authorization) headers.Authorization = authorization;
  const secure = target.url.protocol === "https:";
  const options: https.RequestOptions = {
    method: "POST",
    host: address,
    port: target.port,
    path: `${target.url.pathname}${target.url.search}`,
    headers,
    agent: false,
    // TLS checks the certificate against the name the URL gave, not the pinned address.
    ...(secure && isIP(target.hostname) === 0 ? { servername: target.hostname } : {}),
  };
  await new Promise<void>((resolve, reject) => {
    const request = (secure ? https : http).request(options, (response) => {
      response.resume();
      const status = response.statusCode ?? 0;
      response.once("end", () => {
        clearTimeout(timer);
        if (status >= 200 && status < 300) resolve();
        else
          reject(new DeliveryError(errorSummary("HTTPError", `HTTP ${status}`), isTransientStatus(status)));
      });
      response.once("error", () => {
        clearTimeout(timer);
        reject(
          new DeliveryError(errorSummary("ConnectionError", `answer cut off (${target.url.host})`), true),
        );
      });
    });
    // The whole exchange, answer included, within the timeout (a promise settles once).
    const timer = setTimeout(() => {
      reject(new DeliveryError(errorSummary("TimeoutError", `no answer within ${deps.timeoutMs} ms`), true));
      request.destroy();
    }, deps.timeoutMs);
    request.once("error", (error) => {
      clearTimeout(timer);
      const code = (error as NodeJS.ErrnoException).code ?? error.name;
      reject(new DeliveryError(errorSummary("ConnectionError", `${code} (${target.url.host})`), true));
    });
    request.end(body);
  });
}
