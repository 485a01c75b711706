// The work of `iac-code sessions export`: open the server's state store with
// the server's own settings resolution, find the context's session, write its
// lines, close the store.
import { createWriteStream } from "node:fs";
import { once } from "node:events";
import type { Writable } from "node:stream";
import { openRedisStore, openStateStore } from "../a2a/server.js";
import type { RedisBackend } from "../a2a/replicas/redis-backend.js";
import type { StateStore } from "../a2a/stores/state.js";
import { exportSession } from "../runtime/store/session-export.js";
import { ConfigError, loadConfigFile, resolveSettings } from "../a2a/config/server-settings.js";
import { createLogger } from "../server/logger.js";
import type { CliValues } from "../server/settings.js";

/** The options of `iac-code sessions export` (sessions-command.ts). */
export interface SessionsExportOptions {
  config?: string;
  persistenceDir?: string;
  store?: string;
  redisUrl?: string;
  output?: string;
}

const fail = (message: string, code: number): number => {
  process.stderr.write(`${message}\n`);
  return code;
};

export async function sessionsExport(contextId: string, options: SessionsExportOptions): Promise<number> {
  let settings;
  try {
    const env = process.env;
    const configFile = options.config ?? (env.IACCODE_A2A_CONFIG || undefined);
    const cli: CliValues = {};
    if (options.persistenceDir !== undefined) cli["persistence-dir"] = options.persistenceDir;
    if (options.store !== undefined) cli.store = options.store;
    if (options.redisUrl !== undefined) cli["redis-url"] = options.redisUrl;
    settings = resolveSettings(configFile ? loadConfigFile(configFile) : {}, cli, env);
  } catch (error) {
    return fail(error instanceof ConfigError ? error.message : String(error), 1);
  }
  const logger = createLogger({ silent: true });
  let redis: RedisBackend | undefined;
  let state: StateStore;
  try {
    redis = settings.store === "redis" ? await openRedisStore(settings, logger) : undefined;
    state = await openStateStore(settings, redis, logger);
  } catch (error) {
    await redis?.close();
    return fail(`Cannot open the state store: ${(error as Error).message}`, 1);
  }
  try {
    const context = await state.contexts.get(contextId);
    if (!context) return fail(`Unknown context '${contextId}': the store has no such A2A context.`, 2);
    const out: Writable = options.output
      ? createWriteStream(options.output, { mode: 0o600 })
      : process.stdout;
    for await (const line of exportSession(state.runtime, { sessionId: context.sessionId, contextId })) {
      if (!out.write(`${line}\n`)) await once(out, "drain");
    }
    if (options.output) {
      out.end();
      await once(out, "finish");
    }
    return 0;
  } catch (error) {
    return fail(`Cannot export the session: ${(error as Error).message}`, 1);
  } finally {
    await state.close();
    await redis?.close();
  }
}
