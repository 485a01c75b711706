// The context index: which runtime session and workspace an A2A contextId is
// bound to, and who owns it. Survives restarts so that a context continues
// with the same session.
import path from "node:path";
import { fileStem, readJsonDir, writeFileAtomic, WriteQueue, type CorruptFileReport } from "./atomic-file.js";

export interface ContextRecord {
  contextId: string;
  sessionId: string;
  cwd: string;
  owner: string;
  updatedAt: number;
}

export interface ContextStore {
  get(contextId: string): Promise<ContextRecord | undefined>;
  put(record: ContextRecord): Promise<void>;
  flush(): Promise<void>;
}

function isContextRecord(value: unknown): value is ContextRecord {
  const v = value as Partial<ContextRecord> | null;
  return (
    !!v &&
    typeof v.contextId === "string" &&
    typeof v.sessionId === "string" &&
    typeof v.cwd === "string" &&
    typeof v.owner === "string" &&
    typeof v.updatedAt === "number"
  );
}

/** Context records in memory, mirrored to <dir>/contexts/<stem>.json. */
export class FileContextStore implements ContextStore {
  private readonly contexts = new Map<string, ContextRecord>();
  private readonly writes = new WriteQueue();

  private constructor(private readonly dir: string) {}

  static async open(
    persistenceDir: string,
    onCorrupt: (r: CorruptFileReport) => void,
  ): Promise<FileContextStore> {
    const store = new FileContextStore(path.join(persistenceDir, "contexts"));
    for (const { file, value } of await readJsonDir(store.dir, onCorrupt)) {
      if (isContextRecord(value)) store.contexts.set(value.contextId, { ...value });
      else onCorrupt({ file, reason: "not a context record" });
    }
    return store;
  }

  get(contextId: string): Promise<ContextRecord | undefined> {
    const record = this.contexts.get(contextId);
    return Promise.resolve(record && { ...record });
  }

  put(record: ContextRecord): Promise<void> {
    const copy = { ...record };
    this.contexts.set(copy.contextId, copy);
    const file = path.join(this.dir, `${fileStem(copy.contextId)}.json`);
    return this.writes.enqueue(file, () => writeFileAtomic(file, JSON.stringify(copy)));
  }

  flush(): Promise<void> {
    return this.writes.flush();
  }
}
