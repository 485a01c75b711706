// Just enough HCL reading to package a Terraform directory: the top-level
// blocks of a file (`variable "name" { ... }`, `output "name" { ... }`) and
// the top-level attributes of a block body, with strings, heredocs and
// comments skipped correctly. Expressions are kept as text; only literals
// (strings without interpolation, numbers, booleans) are ever interpreted.

export interface HclBlock {
  type: string;
  labels: string[];
  body: string;
}

/** Index just past a quoted string starting at i (text[i] === '"'). */
function skipString(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length && text[j] !== '"' && text[j] !== "\n") j += text[j] === "\\" ? 2 : 1;
  return j + 1;
}

/** Index just past a heredoc starting at i (text at i is "<<"), or undefined if it is not one. */
function skipHeredoc(text: string, i: number): number | undefined {
  const head = /^<<-?([A-Za-z_][A-Za-z0-9_]*)[ \t]*\r?\n/.exec(text.slice(i, i + 200));
  if (!head) return undefined;
  const end = new RegExp(`^[ \\t]*${head[1]}[ \\t]*$`, "m");
  const rest = text.slice(i + head[0].length);
  const match = end.exec(rest);
  return match ? i + head[0].length + match.index + match[0].length : text.length;
}

/** Index just past a comment starting at i, or undefined if none starts there. */
function skipComment(text: string, i: number): number | undefined {
  if (text[i] === "#" || (text[i] === "/" && text[i + 1] === "/")) {
    const nl = text.indexOf("\n", i);
    return nl === -1 ? text.length : nl;
  }
  if (text[i] === "/" && text[i + 1] === "*") {
    const close = text.indexOf("*/", i + 2);
    return close === -1 ? text.length : close + 2;
  }
  return undefined;
}

/** Index just past whatever non-bracket token starts at i (string, heredoc, comment), or undefined. */
function skipOpaque(text: string, i: number): number | undefined {
  if (text[i] === '"') return skipString(text, i);
  if (text[i] === "<" && text[i + 1] === "<") return skipHeredoc(text, i);
  return skipComment(text, i);
}

/** Index of the bracket closing the one at `open`, or -1. */
function matchBracket(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length;) {
    const skipped = skipOpaque(text, i);
    if (skipped !== undefined) {
      i = skipped;
      continue;
    }
    const ch = text[i];
    if (ch === "{" || ch === "[" || ch === "(") depth++;
    else if (ch === "}" || ch === "]" || ch === ")") {
      depth--;
      if (depth === 0) return i;
    }
    i++;
  }
  return -1;
}

const BLOCK_HEAD = /^([A-Za-z_][A-Za-z0-9_-]*)((?:[ \t]+(?:"[^"\n]*"|[A-Za-z_][A-Za-z0-9_-]*))*)[ \t]*\{/;

/** The top-level blocks of an HCL file, in order. */
export function topLevelBlocks(text: string): HclBlock[] {
  const blocks: HclBlock[] = [];
  let i = 0;
  while (i < text.length) {
    const skipped = skipComment(text, i);
    if (skipped !== undefined) {
      i = skipped;
      continue;
    }
    if (/\s/.test(text[i])) {
      i++;
      continue;
    }
    const head = BLOCK_HEAD.exec(text.slice(i, i + 500));
    if (head) {
      const open = i + head[0].length - 1;
      const close = matchBracket(text, open);
      if (close === -1) break;
      const labels = [...head[2].matchAll(/"([^"\n]*)"|([A-Za-z_][A-Za-z0-9_-]*)/g)].map((m) => m[1] ?? m[2]);
      blocks.push({ type: head[1], labels, body: text.slice(open + 1, close) });
      i = close + 1;
      continue;
    }
    // Not a block (a stray attribute or junk): skip to the next line.
    const nl = text.indexOf("\n", i);
    i = nl === -1 ? text.length : nl + 1;
  }
  return blocks;
}

/** The top-level `name = expression` attributes of a block body (nested blocks are skipped). */
export function blockAttributes(body: string): Map<string, string> {
  const out = new Map<string, string>();
  let i = 0;
  while (i < body.length) {
    const skipped = skipComment(body, i);
    if (skipped !== undefined) {
      i = skipped;
      continue;
    }
    if (/\s/.test(body[i])) {
      i++;
      continue;
    }
    const attr = /^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*=(?!=)[ \t]*/.exec(body.slice(i, i + 200));
    if (attr) {
      let j = i + attr[0].length;
      const start = j;
      // The expression runs to the end of the line, brackets, strings and heredocs included.
      while (j < body.length && body[j] !== "\n") {
        const opaque = skipOpaque(body, j);
        if (opaque !== undefined && !(body[j] === "#" || body[j] === "/")) {
          j = opaque;
          continue;
        }
        if (opaque !== undefined) break; // a trailing comment ends the expression
        if ("{[(".includes(body[j])) {
          const close = matchBracket(body, j);
          j = close === -1 ? body.length : close + 1;
          continue;
        }
        j++;
      }
      out.set(attr[1], body.slice(start, j).trim());
      i = j;
      continue;
    }
    const head = BLOCK_HEAD.exec(body.slice(i, i + 500));
    if (head) {
      const close = matchBracket(body, i + head[0].length - 1);
      i = close === -1 ? body.length : close + 1;
      continue;
    }
    const nl = body.indexOf("\n", i);
    i = nl === -1 ? body.length : nl + 1;
  }
  return out;
}

export type HclLiteral = string | number | boolean;

/** A literal expression's value: a string without interpolation, a number or a boolean. */
export function literalValue(expression: string | undefined): HclLiteral | undefined {
  if (expression === undefined) return undefined;
  const text = expression.trim();
  if (text === "true") return true;
  if (text === "false") return false;
  if (/^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(text)) return Number(text);
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"') && skipString(text, 0) === text.length) {
    const inner = text.slice(1, -1);
    if (/\$\{|%\{/.test(inner)) return undefined;
    try {
      return JSON.parse(text) as string;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
