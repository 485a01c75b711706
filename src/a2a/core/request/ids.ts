// A2A task and context ids: non-empty, at most 128 characters of [A-Za-z0-9_.:-].
import { newTimeOrderedId } from "../../../runtime/ids.js";

const ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

export function isValidA2aId(id: string): boolean {
  return ID_PATTERN.test(id);
}

/** Time-ordered (UUID v7): the state store's rows of one moment share pages (runtime/ids.ts). */
export function newId(): string {
  return newTimeOrderedId();
}
