// The pipeline's context: the conclusions of its steps, one field each, with
// a version and a history. Setting a field (or rolling back to the step that
// produces it) marks every field derived from it stale, following the
// context_dependencies graph breadth-first.

export interface FieldVersion {
  version: number;
  value: unknown;
  stepId: string;
  attempt: number;
  setAt: string;
}

export interface ContextField {
  value: unknown;
  version: number;
  stale: boolean;
  history: FieldVersion[];
}

export interface ContextSnapshot {
  fields: Record<string, ContextField>;
}

/** How many earlier values of a field are kept. */
const HISTORY_LIMIT = 5;

export class PipelineContext {
  private readonly fields: Record<string, ContextField>;
  /** field -> the fields derived from it. */
  private readonly dependents = new Map<string, string[]>();

  constructor(dependencies: Record<string, string[] | undefined>, snapshot?: ContextSnapshot) {
    this.fields = structuredClone(snapshot?.fields ?? {});
    for (const [field, sources] of Object.entries(dependencies)) {
      for (const source of sources ?? []) {
        this.dependents.set(source, [...(this.dependents.get(source) ?? []), field]);
      }
    }
  }

  get(field: string): unknown {
    return this.fields[field]?.value;
  }

  has(field: string): boolean {
    return this.fields[field] !== undefined && !this.fields[field].stale;
  }

  isStale(field: string): boolean {
    return this.fields[field]?.stale === true;
  }

  /** Records a conclusion; returns the fields this made stale. */
  set(field: string, value: unknown, stepId: string, attempt: number): string[] {
    const current = this.fields[field];
    const version = (current?.version ?? 0) + 1;
    const entry: FieldVersion = { version, value, stepId, attempt, setAt: new Date().toISOString() };
    this.fields[field] = {
      value,
      version,
      stale: false,
      history: [...(current?.history ?? []), entry].slice(-HISTORY_LIMIT),
    };
    return this.markStale(this.derivedFrom(field));
  }

  /** Marks the field and everything derived from it stale (a rollback to the step producing it). */
  invalidate(field: string): string[] {
    return this.markStale([field, ...this.derivedFrom(field)]);
  }

  /** Every field derived from `field`, transitively, in breadth-first order. */
  derivedFrom(field: string): string[] {
    const seen = new Set<string>([field]);
    const order: string[] = [];
    const queue = [...(this.dependents.get(field) ?? [])];
    while (queue.length > 0) {
      const next = queue.shift() as string;
      if (seen.has(next)) continue;
      seen.add(next);
      order.push(next);
      queue.push(...(this.dependents.get(next) ?? []));
    }
    return order;
  }

  /** Marks the fields that hold a value stale; returns those that changed. */
  private markStale(fields: string[]): string[] {
    const changed: string[] = [];
    for (const field of fields) {
      const entry = this.fields[field];
      if (!entry || entry.stale) continue;
      entry.stale = true;
      changed.push(field);
    }
    return changed;
  }

  /** The current (not stale) values of some fields, for a step's prompt or the handoff. */
  values(fields: readonly string[]): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const field of fields) if (this.has(field)) out[field] = this.fields[field].value;
    return out;
  }

  staleFields(): string[] {
    return Object.keys(this.fields)
      .filter((f) => this.fields[f].stale)
      .sort();
  }

  snapshot(): ContextSnapshot {
    return { fields: structuredClone(this.fields) };
  }
}
