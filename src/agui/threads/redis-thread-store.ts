// Thread state shared by several replicas of the AG-UI adapter (thread-store:
// redis): one hash per thread, iac-code:agui:thread:<threadId> {doc, rev}, the
// same document the file store writes (protocol mappings and digests only,
// never message text or secrets). A thread loaded here keeps its object (the
// adapter mutates it and saves it), refreshed in place when another replica
// saved a newer revision since.
import { ThreadCache } from "./thread-cache.js";
import type { Redis } from "ioredis";
import { LuaScript } from "../../server/redis.js";
import {
  serializeThreadDoc,
  StateUnavailableError,
  parseThreadDoc,
  type ThreadDoc,
  type ThreadStates,
} from "./thread-store.js";

export const THREAD_PREFIX = "iac-code:agui:thread:";

/** KEYS: thread. ARGV: doc. Writes the document under the next revision; returns it. */
const SAVE = new LuaScript(`
local rev = redis.call('HINCRBY', KEYS[1], 'rev', 1)
redis.call('HSET', KEYS[1], 'doc', ARGV[1])
return rev
`);

export class RedisThreadStore implements ThreadStates {
  private readonly cache = new ThreadCache<{ doc: ThreadDoc; rev: number }>();

  keepInUse(inUse: (doc: ThreadDoc) => boolean): void {
    this.cache.inUse = inUse;
  }

  constructor(private readonly redis: Redis) {}

  async load(threadId: string): Promise<ThreadDoc | undefined> {
    let stored: [string | null, string | null];
    try {
      stored = (await this.redis.hmget(`${THREAD_PREFIX}${threadId}`, "doc", "rev")) as [
        string | null,
        string | null,
      ];
    } catch (error) {
      throw new StateUnavailableError(threadId, (error as Error).message);
    }
    const [text, rev] = stored;
    const cached = this.cache.get(threadId);
    if (text === null) {
      // Saved here but not found (Redis lost it): the adapter's copy is all there is.
      return cached?.doc;
    }
    if (cached && cached.rev === Number(rev)) return cached.doc;
    const doc = parseThreadDoc(text, threadId);
    if (cached) {
      Object.assign(cached.doc, doc);
      cached.rev = Number(rev);
      return cached.doc;
    }
    this.cache.set(threadId, { doc, rev: Number(rev) });
    return doc;
  }

  forget(threadId: string): void {
    this.cache.delete(threadId);
  }

  async save(doc: ThreadDoc): Promise<void> {
    const rev = (await SAVE.run(
      this.redis,
      [`${THREAD_PREFIX}${doc.threadId}`],
      [serializeThreadDoc(doc)],
    )) as number;
    this.cache.set(doc.threadId, { doc, rev });
  }

  loaded(): ThreadDoc[] {
    return this.cache.docs();
  }
}
