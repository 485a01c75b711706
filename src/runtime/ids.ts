// Identifier helpers. Ids that name files on disk are validated here so a
// caller-supplied session id can never point outside the sessions directory.
import { randomUUID } from "node:crypto";

const SAFE_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

export function isSafeId(value: string): boolean {
  return SAFE_ID.test(value) && value !== "." && value !== "..";
}

/**
 * A version 7 UUID: the time in ms, then 74 random bits. Ids made in the
 * same moments sort together, so the rows of a state store keyed by them
 * (tasks, contexts, sessions) land on the same few B-tree pages instead of a
 * random page each: a commit writes (and syncs) fewer pages.
 */
export function newTimeOrderedId(): string {
  // xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx: keep randomUUID's random digits after its version digit.
  const u = randomUUID();
  const time = Date.now().toString(16).padStart(12, "0");
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${u.slice(15)}`;
}

export function newSessionId(): string {
  return newTimeOrderedId();
}

/**
 * n random hex digits (up to 30), from randomUUID: it draws from a pool of
 * entropy refilled in batches, where randomBytes makes a call per id.
 */
function randomHex(n: number): string {
  const u = randomUUID();
  // xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx: skip the version digit and the variant's fixed bits.
  return (u.slice(0, 8) + u.slice(9, 13) + u.slice(15, 18) + u.slice(20, 23) + u.slice(24, 36)).slice(0, n);
}

export function newMessageId(): string {
  return `msg_${randomHex(24)}`;
}

/** permission-<32 hex>, the stable id of a permission input request. */
export function newPermissionInputId(): string {
  return `permission-${randomHex(30)}${randomHex(2)}`;
}

export function askInputId(toolUseId: string): string {
  return `ask-${toolUseId}`;
}

export function newErrorId(): string {
  return `err_${randomHex(16)}`;
}

export function newToolUseId(): string {
  return `toolu_${randomHex(24)}`;
}
