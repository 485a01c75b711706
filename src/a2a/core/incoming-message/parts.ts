// Turns the parts of an A2A user message into the runtime's turn input:
// text-like parts go into the prompt, multimodal parts become a manifest
// (filename, media type, byte size, sha256, source). Limits and messages
// follow the A2A seed. Every rejection is an InvalidParams A2AError.
import { createHash } from "node:crypto";
import { openSync, readSync, closeSync, fstatSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { toJson, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { pb } from "../../../contract/index.js";
import type { TurnImage } from "../../../runtime/seam.js";
import { invalidParams } from "../request/errors.js";
import { isInside } from "../../../server/workspace-roots.js";
import { isStrictBase64 } from "../../../server/base64.js";

export const MiB = 1024 * 1024;
export const LIMITS = {
  data: MiB,
  raw: MiB,
  fileText: MiB,
  multimodalInline: 5 * MiB,
  multimodalFile: 25 * MiB,
} as const;

export const BASE_TEXT_TYPES = [
  "text/plain",
  "application/json",
  "text/markdown",
  "text/yaml",
  "application/yaml",
  "application/x-yaml",
];
export const BASE_MULTIMODAL_TYPES = [
  "image/png",
  "image/jpeg",
  "image/webp",
  "image/gif",
  "audio/mpeg",
  "audio/wav",
  "audio/ogg",
  "application/octet-stream",
];
const TRUE_IMAGES = new Set(["image/png", "image/jpeg", "image/webp", "image/gif"]);

export interface MediaTypes {
  text: string[];
  multimodal: string[];
}

function extraTypes(raw: string | string[] | undefined): string[] {
  return (Array.isArray(raw) ? raw : (raw ?? "").split(/[,;]/))
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s.length > 0)
    .sort();
}

/**
 * Base sets plus the configured extras (text-mime-types /
 * multimodal-mime-types), else IACCODE_A2A_TEXT_MIME_TYPES /
 * IACCODE_A2A_MULTIMODAL_MIME_TYPES of `env`.
 */
export function mediaTypesFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  configured: { text?: string[]; multimodal?: string[] } = {},
): MediaTypes {
  const uniq = (list: string[]) => [...new Set(list)];
  return {
    text: uniq([...BASE_TEXT_TYPES, ...extraTypes(configured.text ?? env.IACCODE_A2A_TEXT_MIME_TYPES)]),
    multimodal: uniq([
      ...BASE_MULTIMODAL_TYPES,
      ...extraTypes(configured.multimodal ?? env.IACCODE_A2A_MULTIMODAL_MIME_TYPES),
    ]),
  };
}

export interface IngestOptions {
  cwd: string;
  roots: readonly string[];
  mediaTypes: MediaTypes;
}

export interface IngestedInput {
  text: string;
  images: TurnImage[];
}

const MSG = {
  unsupportedMedia: "A2A part has unsupported media type.",
  dataMustBeJson: "A2A data parts must use application/json media type.",
  dataTooLarge: "A2A data part content is too large.",
  binaryDataObject: "A2A binary data parts must contain an object.",
  binaryDataBytes: "A2A binary data parts must include base64 bytes.",
  binaryDataBase64: "A2A binary data part bytes must be valid base64.",
  binaryDataTooLarge: "A2A binary data part content is too large.",
  rawTooLarge: "A2A raw part content is too large.",
  rawUtf8: "A2A raw parts must contain valid UTF-8.",
  binaryRawTooLarge: "A2A binary raw part content is too large.",
  fileLocal: "A2A file URL parts must use local file:// URLs.",
  fileOutside: "A2A file URL part is outside the allowed workspace.",
  fileMissing: "A2A file URL part must reference an existing file.",
  fileTooLarge: "A2A file URL part content is too large.",
  fileUtf8: "A2A file URL parts must contain valid UTF-8.",
  binaryFileTooLarge: "A2A binary file URL part content is too large.",
  noContent: "A2A server supports text, JSON data, raw text, or workspace file URL parts only.",
} as const;

/** Compact JSON with sorted object keys. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value as Record<string, unknown>)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

function decodeUtf8(bytes: Uint8Array, message: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw invalidParams(message);
  }
}

function safeFilename(candidate: unknown, fallback: string): string {
  if (typeof candidate !== "string" || candidate === "") return fallback;
  if (
    candidate !== path.basename(candidate) ||
    candidate.includes("\\") ||
    candidate === "." ||
    candidate === ".."
  ) {
    return "attachment";
  }
  return candidate;
}

function manifest(filename: string, mediaType: string, bytes: Uint8Array, source: string): string {
  const sha = createHash("sha256").update(bytes).digest("hex");
  return [
    "A2A multimodal attachment:",
    `- filename=${filename}`,
    `- mediaType=${mediaType}`,
    `- byteSize=${bytes.byteLength}`,
    `- sha256=${sha}`,
    `- source=${source}`,
  ].join("\n");
}

/** Reads at most limit+1 bytes, so oversized files are refused without loading them. */
function readBounded(file: string, limit: number, tooLarge: string): Buffer {
  const fd = openSync(file, "r");
  try {
    if (fstatSync(fd).size > limit) throw invalidParams(tooLarge);
    const buf = Buffer.alloc(limit + 1);
    let total = 0;
    for (;;) {
      const n = readSync(fd, buf, total, buf.length - total, null);
      if (n === 0) break;
      total += n;
      if (total > limit) throw invalidParams(tooLarge);
    }
    return buf.subarray(0, total);
  } finally {
    closeSync(fd);
  }
}

function resolveFileUrl(url: string, options: IngestOptions): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidParams(MSG.fileLocal);
  }
  if (parsed.protocol !== "file:" || parsed.host !== "" || !url.toLowerCase().startsWith("file:///")) {
    throw invalidParams(MSG.fileLocal);
  }
  let logical: string;
  try {
    logical = fileURLToPath(parsed);
  } catch {
    throw invalidParams(MSG.fileLocal);
  }
  let real: string;
  try {
    real = realpathSync(logical);
  } catch {
    // A missing file outside the workspace still reports "outside" first.
    const parentOk = isInside(path.resolve(logical), options.cwd);
    throw invalidParams(parentOk ? MSG.fileMissing : MSG.fileOutside);
  }
  if (!isInside(real, options.cwd) || !options.roots.some((root) => isInside(real, root))) {
    throw invalidParams(MSG.fileOutside);
  }
  if (!statSync(real).isFile()) throw invalidParams(MSG.fileMissing);
  return real;
}

/** Converts every part; throws InvalidParams on the first bad one. */
export function ingestParts(parts: readonly pb.Part[], options: IngestOptions): IngestedInput {
  const texts: string[] = [];
  const images: TurnImage[] = [];
  const isText = (mt: string) => options.mediaTypes.text.includes(mt);
  const isMultimodal = (mt: string) => options.mediaTypes.multimodal.includes(mt);
  const addImage = (mediaType: string, bytes: Uint8Array, filename: string) => {
    if (TRUE_IMAGES.has(mediaType))
      images.push({ mediaType, data: Buffer.from(bytes).toString("base64"), filename });
  };

  for (const part of parts) {
    const declared = part.mediaType.trim().toLowerCase();
    const content = part.content;
    switch (content.case) {
      case "text": {
        const mediaType = declared || "text/plain";
        if (!isText(mediaType)) throw invalidParams(MSG.unsupportedMedia);
        if (content.value.trim() !== "") texts.push(content.value);
        break;
      }
      case "data": {
        const mediaType = declared || "application/json";
        const value: JsonValue = toJson(ValueSchema, content.value);
        if (isMultimodal(mediaType)) {
          if (!value || typeof value !== "object" || Array.isArray(value))
            throw invalidParams(MSG.binaryDataObject);
          const encoded = value.bytes ?? value.base64;
          if (typeof encoded !== "string") throw invalidParams(MSG.binaryDataBytes);
          if (!isStrictBase64(encoded)) throw invalidParams(MSG.binaryDataBase64);
          // 4 base64 chars carry 3 bytes: refuse before decoding something huge.
          if (Math.floor((encoded.length * 3) / 4) - 2 > LIMITS.multimodalInline)
            throw invalidParams(MSG.binaryDataTooLarge);
          const bytes = Buffer.from(encoded, "base64");
          if (bytes.byteLength > LIMITS.multimodalInline) throw invalidParams(MSG.binaryDataTooLarge);
          const filename = safeFilename(value.filename ?? (part.filename || undefined), "inline");
          texts.push(manifest(filename, mediaType, bytes, "data"));
          addImage(mediaType, bytes, filename);
          break;
        }
        if (mediaType !== "application/json") throw invalidParams(MSG.dataMustBeJson);
        const json = canonicalJson(value);
        if (Buffer.byteLength(json, "utf8") > LIMITS.data) throw invalidParams(MSG.dataTooLarge);
        texts.push(json);
        break;
      }
      case "raw": {
        const mediaType = declared || "text/plain";
        const bytes = content.value;
        if (isText(mediaType)) {
          if (bytes.byteLength > LIMITS.raw) throw invalidParams(MSG.rawTooLarge);
          const text = decodeUtf8(bytes, MSG.rawUtf8);
          if (text.trim() !== "") texts.push(text);
        } else if (isMultimodal(mediaType)) {
          if (bytes.byteLength > LIMITS.multimodalInline) throw invalidParams(MSG.binaryRawTooLarge);
          const filename = safeFilename(part.filename || undefined, "inline");
          texts.push(manifest(filename, mediaType, bytes, "inline"));
          addImage(mediaType, bytes, filename);
        } else {
          throw invalidParams(MSG.unsupportedMedia);
        }
        break;
      }
      case "url": {
        const mediaType = declared || "text/plain";
        if (!isText(mediaType) && !isMultimodal(mediaType)) {
          // Still refuse remote URLs with the clearer message.
          if (!content.value.toLowerCase().startsWith("file:")) throw invalidParams(MSG.fileLocal);
          throw invalidParams(MSG.unsupportedMedia);
        }
        const file = resolveFileUrl(content.value, options);
        if (isText(mediaType)) {
          const bytes = readBounded(file, LIMITS.fileText, MSG.fileTooLarge);
          const text = decodeUtf8(bytes, MSG.fileUtf8);
          if (text.trim() !== "") texts.push(text);
        } else {
          const bytes = readBounded(file, LIMITS.multimodalFile, MSG.binaryFileTooLarge);
          const filename = safeFilename(part.filename || path.basename(file), "attachment");
          texts.push(manifest(filename, mediaType, bytes, content.value));
          addImage(mediaType, bytes, filename);
        }
        break;
      }
      default:
        throw invalidParams(MSG.noContent);
    }
  }
  return { text: texts.join("\n"), images };
}
