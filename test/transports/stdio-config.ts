// The config and environment of a stdio server child on the client test script.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { CLIENT_SCRIPT } from "../a2a-client/harness.js";
import { cleanEnv } from "../e2e/helpers.js";

/** A config file for a stdio server on the client test script, in its own directory. */
export function stdioConfig(dir: string): string {
  const file = path.join(dir, "a2a-server.yml");
  writeFileSync(
    file,
    [
      "transport: stdio",
      "provider: scripted",
      `script: ${JSON.stringify(CLIENT_SCRIPT)}`,
      `persistence-dir: ${JSON.stringify(path.join(dir, "persist"))}`,
      "",
    ].join("\n"),
  );
  return file;
}

export const stdioEnv = (dir: string): NodeJS.ProcessEnv =>
  cleanEnv(dir, { IAC_CODE_CONFIG_DIR: path.join(dir, "config") });
