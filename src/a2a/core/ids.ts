// A2A task and context ids: non-empty, at most 128 characters of [A-Za-z0-9_.:-].
import { randomUUID } from "node:crypto";

const ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

export function isValidA2aId(id: string): boolean {
  return ID_PATTERN.test(id);
}

export function newId(): string {
  return randomUUID();
}
