// The start-up warning for a server reachable from other machines without
// authentication: anyone who can reach the address can run the agent (which
// writes files and may call the cloud with the server's credentials).
import { isIP } from "node:net";

/** Whether `host` binds to loopback only (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (bare === "localhost" || bare === "::1") return true;
  if (isIP(bare) === 4) return bare.startsWith("127.");
  return bare.startsWith("::ffff:127.");
}

/** The warning line to print, or undefined when the bind is loopback-only or auth is on. */
export function exposureWarning(host: string, authenticated: boolean, howToAuth: string): string | undefined {
  if (authenticated || isLoopbackHost(host)) return undefined;
  return `Listening on ${host} without authentication: anyone who can reach this address can run the agent. Set ${howToAuth}, or bind 127.0.0.1 behind an authenticating proxy (docs/operations.md).`;
}
