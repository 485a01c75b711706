// Reading untyped JSON from the wire (event values, interrupt metadata) by
// field, without trusting its shape: a wrong type reads as empty.

export type Json = Record<string, unknown>;

/** The value as an object ({} when it is not one). */
export const obj = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});

/** The value as text: a string as it is, a finite number in decimal, anything else "". */
export const str = (v: unknown): string =>
  typeof v === "string" ? v : typeof v === "number" && Number.isFinite(v) ? String(v) : "";

/** The value as a finite number, else undefined. */
export const num = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isFinite(v) ? v : undefined;

/** The value as a list of objects ([] when it is not a list). */
export const objects = (v: unknown): Json[] => (Array.isArray(v) ? v.map(obj) : []);

/** The value as a list of strings (other items dropped). */
export const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : [];
