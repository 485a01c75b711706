// Identifier helpers. Ids that name files on disk are validated here so a
// caller-supplied session id can never point outside the sessions directory.
import { randomBytes, randomUUID } from "node:crypto";

const SAFE_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

export function isSafeId(value: string): boolean {
  return SAFE_ID.test(value) && value !== "." && value !== "..";
}

export function newSessionId(): string {
  return randomUUID();
}

export function newMessageId(): string {
  return `msg_${randomBytes(12).toString("hex")}`;
}

/** permission-<32 hex>, the stable id of a permission input request. */
export function newPermissionInputId(): string {
  return `permission-${randomBytes(16).toString("hex")}`;
}

export function askInputId(toolUseId: string): string {
  return `ask-${toolUseId}`;
}

export function newErrorId(): string {
  return `err_${randomBytes(8).toString("hex")}`;
}

export function newToolUseId(): string {
  return `toolu_${randomBytes(12).toString("hex")}`;
}
