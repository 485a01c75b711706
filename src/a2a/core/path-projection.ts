// Safe mode's path projection (IAC_CODE_A2A_SAFE_MODE): at every wire boundary,
// an absolute path or file:// URI under a known server root becomes [PATH], in
// string values and in mapping keys (keys that collide after projection become
// [PATH#2], [PATH#3], ...). Path-only: secrets are not this module's business.
// Values are copied only where something changes.
import { escapeRegExp } from "./sanitize.js";

const MAX_KNOWN_ROOTS = 4096;

/** A root without its trailing separator; the filesystem root itself is never one (it would take every path). */
function normaliseRoot(root: string): string | undefined {
  const trimmed = root.replace(/[/\\]+$/, "");
  return trimmed.length > 1 && /^(\/|[A-Za-z]:[\\/]|\\\\)/.test(trimmed) ? trimmed : undefined;
}

export class PathProjector {
  private readonly roots = new Set<string>();
  private pattern: RegExp | undefined;

  constructor(roots: Iterable<string>) {
    for (const root of roots) this.addRoot(root);
  }

  /** Adds a known root (a context's workspace); the set is bounded, the static roots stay. */
  addRoot(root: string): void {
    const normal = normaliseRoot(root);
    if (!normal || this.roots.has(normal)) return;
    if (this.roots.size >= MAX_KNOWN_ROOTS) return;
    this.roots.add(normal);
    this.pattern = undefined;
  }

  /** Every path under a known root in the text, as [PATH]. */
  projectText(text: string): string {
    if (this.roots.size === 0 || (!text.includes("/") && !text.includes("\\"))) return text;
    this.pattern ??= this.compile();
    return text.replace(this.pattern, "[PATH]");
  }

  addRoots(roots: Iterable<string>): void {
    for (const root of roots) this.addRoot(root);
  }

  /** The value with its strings and keys projected (the same value when nothing changes). */
  project<T>(value: T): T {
    return this.walk(value, 0) as T;
  }

  private compile(): RegExp {
    // Longest roots first, so /a/b wins over /a; a root matches only whole segments.
    const alternatives = [...this.roots]
      .sort((a, b) => b.length - a.length)
      .map((root) => escapeRegExp(root));
    // The path runs to whitespace, a quote or a bracket; a trailing full stop is the sentence's.
    const tail = `[^\\s"'<>\`,;()\\[\\]{}]`;
    return new RegExp(
      `(?:file://)?(?:${alternatives.join("|")})(?=$|[/\\\\\\s"'<>\`,;()\\[\\]{}.])(?:${tail}*(?<!\\.))?`,
      "g",
    );
  }

  private walk(value: unknown, depth: number): unknown {
    if (typeof value === "string") return this.projectText(value);
    // Bytes and other typed arrays carry no text to project; the depth bound guards the stack.
    if (value === null || typeof value !== "object" || ArrayBuffer.isView(value) || depth > 200) return value;
    if (Array.isArray(value)) {
      const list = value as unknown[];
      let copy: unknown[] | undefined;
      list.forEach((item, i) => {
        const projected = this.walk(item, depth + 1);
        if (projected !== item) (copy ??= [...list])[i] = projected;
      });
      return copy ?? list;
    }
    const source = value as Record<string, unknown>;
    let changed = false;
    const entries: Array<[string, unknown]> = [];
    const taken = new Set<string>();
    for (const [key, item] of Object.entries(source)) {
      const projectedOnce = this.projectText(key);
      let projectedKey = projectedOnce;
      if (projectedKey !== key) {
        for (let n = 2; taken.has(projectedKey) || Object.hasOwn(source, projectedKey); n++)
          projectedKey = projectedOnce.replace("[PATH]", `[PATH#${n}]`);
      }
      taken.add(projectedKey);
      const projected = this.walk(item, depth + 1);
      if (projectedKey !== key || projected !== item) changed = true;
      entries.push([projectedKey, projected]);
    }
    if (!changed) return value;
    // Same prototype: a protobuf-es message stays one (its $typeName is copied with the fields).
    return Object.assign(
      Object.create(Object.getPrototypeOf(source) as object | null) as object,
      Object.fromEntries(entries),
    );
  }
}
