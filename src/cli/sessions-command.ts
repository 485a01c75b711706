// `iac-code sessions export <contextId>`: one session as JSON lines, read from
// the state store an `iac-code a2a` server writes (the SQLite database in its
// persistence dir, or the Redis of store: redis), found the way the server
// finds its settings (--config, IACCODE_A2A_* variables, flags). The store is
// loaded only when the command runs.
import type { Command } from "commander";
import type { SessionsExportOptions } from "./sessions-export.js";

export function registerSessionsCommand(program: Command): void {
  const sessions = program
    .command("sessions")
    .description("Read the runtime sessions an iac-code A2A server keeps (its state store)");
  sessions
    .command("export")
    .description(
      "Write a session as JSON lines: its identity, then each part (the session, its pipeline, each step attempt's transcript) with every log row (conversation, usage, permission audit, pipeline journal, tool log) and document; exit 0, 1 when the store cannot be read, 2 for an unknown context",
    )
    .argument("<contextId>", "the A2A context (task.contextId) whose session to export")
    .option("--config <path>", "the A2A server's config file (a2a-server.yml): its store settings")
    .option("--persistence-dir <dir>", "store sqlite: the server's persistence dir (stop the server first)")
    .option("--store <kind>", "sqlite (default) or redis")
    .option("--redis-url <url>", "store redis: the Redis the replicas share (a running server is fine)")
    .option("-o, --output <file>", "write to this file instead of stdout")
    .action(async (contextId: string, options: SessionsExportOptions) => {
      const { sessionsExport } = await import("./sessions-export.js");
      process.exitCode = await sessionsExport(contextId, options);
    });
}
