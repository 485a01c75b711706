// Paths as users write them in config files, environment variables and
// requests: a leading ~ and $VAR / ${VAR} are expanded. The iac-code config
// directory is resolved here once, so the A2A server, the AG-UI adapter and
// the runtime always agree on it.
import os from "node:os";
import path from "node:path";

/** Expands ~ and environment variables (unset ones become empty); the result is absolute. */
export function expandPath(value: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(expandUserPath(value, env));
}

/** Expands ~ and environment variables, leaving a relative result relative (for "must be absolute" checks). */
export function expandUserPath(value: string, env: NodeJS.ProcessEnv = process.env): string {
  const home = env.HOME ?? os.homedir();
  let out = value
    .trim()
    .replace(
      /\$\{(\w+)\}|\$(\w+)/g,
      (_m, a: string | undefined, b: string | undefined) => env[a ?? b ?? ""] ?? "",
    );
  if (out === "~") out = home;
  else if (out.startsWith("~/")) out = path.join(home, out.slice(2));
  return out;
}

/** IAC_CODE_CONFIG_DIR (expanded), else ~/.iac-code. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.IAC_CODE_CONFIG_DIR?.trim();
  return configured ? expandPath(configured, env) : path.join(env.HOME ?? os.homedir(), ".iac-code");
}
