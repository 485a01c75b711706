// Error hygiene at the client boundary: no local paths, secrets, tokens or
// provider details. Full details go to the server log only.
import os from "node:os";

const MAX_CLIENT_ERROR = 1000;

const SECRET_PATTERNS: Array<[RegExp, string]> = [
  [/\b(authorization|proxy-authorization)\s*[:=]\s*[^\s,;]+(\s+[^\s,;]+)?/gi, "$1: [REDACTED]"],
  [/\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}/gi, "$1 [REDACTED]"],
  [/\b(cookie|set-cookie)\s*[:=]\s*[^\n]+/gi, "$1: [REDACTED]"],
  [/\bsk-[A-Za-z0-9_-]{8,}/g, "[REDACTED]"],
  [/\b(AKIA|ASIA|LTAI)[A-Za-z0-9]{8,}/g, "[REDACTED]"],
  [/\bx-acs-[a-z-]+\s*[:=]\s*[^\s,;]+/gi, "x-acs-[REDACTED]"],
  [
    /\b([A-Za-z0-9_-]*(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|signature|credential)[A-Za-z0-9_-]*)(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s,;&]+)/gi,
    "$1$2[REDACTED]",
  ],
  [
    /([?&](?:sig|signature|token|x-amz-[a-z-]+|security-token|accesskeyid|expires)=)[^&\s]+/gi,
    "$1[REDACTED]",
  ],
];

export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

const PATH_PATTERNS: RegExp[] = [
  /file:\/\/[^\s"'<>]+/g,
  /[A-Za-z]:\\[^\s"'<>]*/g,
  /\\\\[^\s"'<>]+/g,
  // Absolute POSIX paths with at least two segments (keeps "a/b" fractions and lone "/").
  /(?<![A-Za-z0-9_.:-])\/(?:[^\s/"'<>:]+\/)+[^\s/"'<>:]*/g,
];

/** Redacts secrets and local paths; caps the length. */
export function sanitizeClientText(text: string, max = MAX_CLIENT_ERROR): string {
  let out = text;
  for (const [pattern, replacement] of SECRET_PATTERNS) out = out.replace(pattern, replacement);
  for (const root of [os.homedir(), os.tmpdir(), process.cwd()]) {
    if (root && root.length > 1)
      out = out.replace(new RegExp(escapeRegExp(root) + "[^\\s\"'<>]*", "g"), "[PATH]");
  }
  for (const pattern of PATH_PATTERNS) out = out.replace(pattern, "[PATH]");
  return out.length > max ? `${out.slice(0, max - 1)}…` : out;
}
