// Where tasks live between requests and across restarts. The interface is
// async so that a Redis implementation can slot in later.
import path from "node:path";
import { pb, decodeProtoJson } from "../../contract/index.js";
import { encodeFast } from "../core/fast-json.js";
import { fileStem, readJsonDir, writeFileAtomic, WriteQueue, type CorruptFileReport } from "./atomic-file.js";

export interface StoredTask {
  task: pb.Task;
  /** Auth principal that created the task; other owners never see it. */
  owner: string;
  /** Epoch milliseconds of the last save. */
  updatedAt: number;
}

export interface TaskStore {
  get(id: string): Promise<StoredTask | undefined>;
  /** Saves a snapshot (the task object is cloned; later mutations are not seen). */
  put(record: StoredTask): Promise<void>;
  listByOwner(owner: string): Promise<StoredTask[]>;
  /** Resolves when every pending write is durable. */
  flush(): Promise<void>;
}

const FORMAT_VERSION = 1;

interface TaskFile {
  formatVersion: number;
  owner: string;
  updatedAt: number;
  task: unknown;
}

function cloneTask(task: pb.Task): pb.Task {
  return structuredClone(task);
}

/** Tasks kept in memory and mirrored to <dir>/tasks/<stem>.json. */
export class FileTaskStore implements TaskStore {
  private readonly tasks = new Map<string, StoredTask>();
  private readonly writes = new WriteQueue();

  private constructor(private readonly dir: string) {}

  static async open(
    persistenceDir: string,
    onCorrupt: (r: CorruptFileReport) => void,
  ): Promise<FileTaskStore> {
    const store = new FileTaskStore(path.join(persistenceDir, "tasks"));
    for (const { file, value } of await readJsonDir(store.dir, onCorrupt)) {
      try {
        const data = value as Partial<TaskFile>;
        if (
          data.formatVersion !== FORMAT_VERSION ||
          typeof data.owner !== "string" ||
          typeof data.updatedAt !== "number"
        ) {
          throw new Error("not a task snapshot");
        }
        const task = decodeProtoJson(pb.TaskSchema, data.task);
        if (!task.id) throw new Error("task without id");
        store.tasks.set(task.id, { task, owner: data.owner, updatedAt: data.updatedAt });
      } catch (error) {
        onCorrupt({ file, reason: error instanceof Error ? error.message : String(error) });
      }
    }
    return store;
  }

  get(id: string): Promise<StoredTask | undefined> {
    const record = this.tasks.get(id);
    return Promise.resolve(record && { ...record, task: cloneTask(record.task) });
  }

  put(record: StoredTask): Promise<void> {
    const snapshot: StoredTask = { ...record, task: cloneTask(record.task) };
    this.tasks.set(snapshot.task.id, snapshot);
    const body: TaskFile = {
      formatVersion: FORMAT_VERSION,
      owner: snapshot.owner,
      updatedAt: snapshot.updatedAt,
      task: encodeFast(pb.TaskSchema, snapshot.task),
    };
    const file = path.join(this.dir, `${fileStem(snapshot.task.id)}.json`);
    return this.writes.enqueue(file, () => writeFileAtomic(file, JSON.stringify(body)));
  }

  listByOwner(owner: string): Promise<StoredTask[]> {
    return Promise.resolve(
      [...this.tasks.values()]
        .filter((r) => r.owner === owner)
        .map((r) => ({ ...r, task: cloneTask(r.task) })),
    );
  }

  flush(): Promise<void> {
    return this.writes.flush();
  }
}
