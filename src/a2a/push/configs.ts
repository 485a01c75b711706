// Push notification configs as the A2A methods see them: checked (ids, the
// callback URL policy, header-safe secrets), stored with the token and the
// credentials sealed by the keyring, read back and listed in id order with
// page tokens. Answers never carry the token or the credentials: what a
// client gave us as a secret is not echoed (the house rule on secrets).
import { create } from "@bufbuild/protobuf";
import { pb } from "../../contract/index.js";
import type { PushConfigStore, StoredPushConfig } from "../stores/state.js";
import { invalidParams } from "../core/request/errors.js";
import { isValidA2aId } from "../core/request/ids.js";
import {
  decodePageToken,
  DEFAULT_PAGE_SIZE,
  encodePageToken,
  MAX_PAGE_SIZE,
} from "../core/request/list-tasks.js";
import type { Keyring } from "./keyring.js";
import { checkCallbackUrlParam, type PrivateHostAllowlist } from "./url-policy.js";

const MAX_URL_CHARS = 2048;
const MAX_SECRET_CHARS = 4096;
/** An HTTP auth scheme is a header token (RFC 9110). */
const SCHEME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
/** Header values may not hold control characters (no header injection). */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const CONTROL = /[\u0000-\u001f\u007f]/;

/** What the sealed secrets of a config hold. */
export interface PushSecrets {
  token?: string;
  credentials?: string;
}

function checkSecret(value: string, field: string): void {
  if (value.length > MAX_SECRET_CHARS)
    throw invalidParams(`${field} must be at most ${MAX_SECRET_CHARS} characters`, { field });
  if (CONTROL.test(value)) throw invalidParams(`${field} must not contain control characters`, { field });
}

export class PushConfigs {
  constructor(
    private readonly store: PushConfigStore,
    private readonly keyring: Keyring,
    private readonly allow: PrivateHostAllowlist,
  ) {}

  /**
   * Checks a config from a request; `prefix` names where it sits in the
   * params (for SendMessage: configuration.taskPushNotificationConfig.).
   */
  check(config: pb.TaskPushNotificationConfig, prefix = ""): void {
    if (config.id && !isValidA2aId(config.id))
      throw invalidParams("Invalid A2A id", { field: `${prefix}id` });
    if (!config.url) throw invalidParams(`${prefix}url is required`, { field: `${prefix}url` });
    if (config.url.length > MAX_URL_CHARS)
      throw invalidParams(`${prefix}url must be at most ${MAX_URL_CHARS} characters`, {
        field: `${prefix}url`,
      });
    checkCallbackUrlParam(config.url, this.allow, `${prefix}url`);
    checkSecret(config.token, `${prefix}token`);
    const auth = config.authentication;
    if (auth) {
      if (!SCHEME.test(auth.scheme))
        throw invalidParams(`${prefix}authentication.scheme must be an HTTP auth scheme name`, {
          field: `${prefix}authentication.scheme`,
        });
      checkSecret(auth.credentials, `${prefix}authentication.credentials`);
    }
  }

  /** Stages a checked config of a task the caller owns; the id defaults to the task id. */
  save(owner: string, taskId: string, config: pb.TaskPushNotificationConfig): pb.TaskPushNotificationConfig {
    const secrets: PushSecrets = {};
    if (config.token) secrets.token = config.token;
    if (config.authentication?.credentials) secrets.credentials = config.authentication.credentials;
    const stored: StoredPushConfig = {
      taskId,
      id: config.id || taskId,
      owner,
      url: config.url,
      scheme: config.authentication?.scheme ?? "",
      sealedSecrets: Object.keys(secrets).length ? this.keyring.seal(JSON.stringify(secrets)) : "",
    };
    this.store.save(stored);
    return publicConfig(stored);
  }

  async get(owner: string, taskId: string, id: string): Promise<pb.TaskPushNotificationConfig | undefined> {
    const stored = await this.store.get(owner, taskId, id);
    return stored && publicConfig(stored);
  }

  async list(
    owner: string,
    request: pb.ListTaskPushNotificationConfigsRequest,
  ): Promise<pb.ListTaskPushNotificationConfigsResponse> {
    const pageSize = request.pageSize || DEFAULT_PAGE_SIZE;
    if (pageSize < 1) throw invalidParams("minimum page size is 1", { field: "pageSize" });
    if (pageSize > MAX_PAGE_SIZE) throw invalidParams("maximum page size is 100", { field: "pageSize" });
    let startId: string | undefined;
    try {
      startId = request.pageToken ? decodePageToken(request.pageToken) : undefined;
    } catch {
      throw invalidParams(`Invalid page token: ${request.pageToken.slice(0, 200)}`, { field: "pageToken" });
    }
    const rows = await this.store.list(owner, request.taskId, startId, pageSize + 1);
    const next = rows.length > pageSize ? rows[pageSize] : undefined;
    return create(pb.ListTaskPushNotificationConfigsResponseSchema, {
      configs: rows.slice(0, pageSize).map(publicConfig),
      nextPageToken: next ? encodePageToken(next.id) : "",
    });
  }

  remove(owner: string, taskId: string, id: string): void {
    this.store.remove(owner, taskId, id);
  }
}

/** A config as answers show it: no token, no credentials. */
function publicConfig(stored: StoredPushConfig): pb.TaskPushNotificationConfig {
  return create(pb.TaskPushNotificationConfigSchema, {
    id: stored.id,
    taskId: stored.taskId,
    url: stored.url,
    authentication: stored.scheme ? { scheme: stored.scheme } : undefined,
  });
}
