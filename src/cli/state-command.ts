// `iac-code state backup <dir>` / `iac-code state restore <dir>`: an operator's
// copy of the whole state database of an `iac-code a2a` server (store: sqlite),
// made with SQLite's online backup API, and its restore into a persistence dir.
// The server must be stopped (it holds its database exclusively). store: redis
// has its own procedure (docs/operations.md, "Backups"). Loaded only when run.
import type { Command } from "commander";
import type { StateCopyOptions } from "./state-copy.js";

const common = (command: Command): Command =>
  command
    .option("--config <path>", "the A2A server's config file (a2a-server.yml): its store settings")
    .option("--persistence-dir <dir>", "the server's persistence dir (default as the server resolves it)")
    .option("--store <kind>", "sqlite (default); redis is refused with a pointer to its procedure");

export function registerStateCommand(program: Command): void {
  const state = program
    .command("state")
    .description("Back up or restore the state database of a stopped iac-code A2A server");
  common(
    state
      .command("backup")
      .description(
        "Copy the server's state database (tasks, contexts, sessions, push configs) into <dir>/state.db with SQLite's online backup; exit 0, 1 on failure (a running server holds the database: stop it first)",
      )
      .argument("<dir>", "where to write the copy (created; an existing copy is replaced)"),
  ).action(async (dir: string, options: StateCopyOptions) => {
    const { stateBackup } = await import("./state-copy.js");
    process.exitCode = await stateBackup(dir, options);
  });
  common(
    state
      .command("restore")
      .description(
        "Put <dir>/state.db (made by `state backup`) back as the server's state database; exit 0, 1 on failure (refused while a server runs, or when a database is there without --force)",
      )
      .argument("<dir>", "the directory `state backup` wrote")
      .option("--force", "replace an existing state database"),
  ).action(async (dir: string, options: StateCopyOptions) => {
    const { stateRestore } = await import("./state-copy.js");
    process.exitCode = await stateRestore(dir, options);
  });
}
