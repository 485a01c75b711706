// Which callback URLs a push config may name, checked when the config is
// created and again before every delivery (the reference's texts, as invalid
// params). http/https only; `localhost`, `*.localhost` and literal addresses
// that are not public are refused; at delivery the host is resolved and every
// address must be public, and the request goes to the first one (pinned, so a
// second lookup cannot point it elsewhere). `push-allow-private-hosts` names
// the hostnames, addresses and CIDR ranges that may be private anyway (a
// receiver on the same machine or an internal network).
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { invalidParams } from "../core/request/errors.js";

export const MUST_BE_HTTP = "A2A push callback URL must be http or https";
export const MUST_NOT_TARGET_PRIVATE = "A2A push callback URL must not target private or local hosts";
export const MUST_NOT_RESOLVE_PRIVATE = "A2A push callback URL must not resolve to private or local hosts";
export const DID_NOT_RESOLVE = "A2A push callback URL host did not resolve to any addresses";

/** A refusal of the URL policy (the worker treats it as a permanent failure). */
export class CallbackUrlError extends Error {
  override readonly name = "CallbackUrlError";
}

/** Every address of a host name (the DNS seam: tests answer without a network). */
export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

/**
 * Addresses that are not public: private, loopback, link-local, multicast,
 * reserved, unspecified. One list per family: a BlockList matches IPv4
 * addresses against IPv6 rules too (as ::ffff:a.b.c.d), and ::/8 covers those.
 */
const NOT_PUBLIC_V4 = new BlockList();
const NOT_PUBLIC_V6 = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  NOT_PUBLIC_V4.addSubnet(network, prefix, "ipv4");
for (const [network, prefix] of [
  ["::", 8], // unspecified, loopback, IPv4-compatible and other reserved
  ["64:ff9b::", 96], // NAT64: the embedded IPv4 address decides, it is refused as a whole
  ["100::", 64],
  ["2001::", 23],
  ["2001:db8::", 32],
  ["2002::", 16],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
] as const)
  NOT_PUBLIC_V6.addSubnet(network, prefix, "ipv6");

/** The IPv4 address inside an IPv4-mapped IPv6 address (::ffff:a.b.c.d, any spelling). */
function mappedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:0{0,4}:){0,5}:?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const high = parseInt(hex[1], 16);
  const low = parseInt(hex[2], 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}

export function isPublicAddress(address: string): boolean {
  const mapped = mappedIpv4(address);
  if (mapped) return !NOT_PUBLIC_V4.check(mapped, "ipv4");
  const family = isIP(address);
  if (family === 4) return !NOT_PUBLIC_V4.check(address, "ipv4");
  return family === 6 && !NOT_PUBLIC_V6.check(address, "ipv6");
}

/** The allowlist of push-allow-private-hosts: hostnames, addresses and CIDR ranges. */
export class PrivateHostAllowlist {
  private readonly names = new Set<string>();
  private readonly ranges4 = new BlockList();
  private readonly ranges6 = new BlockList();

  /** Throws an Error naming the entry that is neither a hostname, an address nor a CIDR range. */
  constructor(entries: readonly string[]) {
    for (const raw of entries) {
      const entry = raw
        .trim()
        .toLowerCase()
        .replace(/^\[(.*)\]$/, "$1");
      const [network, prefix, extra] = entry.split("/");
      const family = isIP(network);
      if (prefix !== undefined) {
        const bits = Number(prefix);
        const max = family === 4 ? 32 : 128;
        if (family === 0 || extra !== undefined || !/^\d+$/.test(prefix) || bits > max)
          throw new Error(`'${raw}' is not a hostname, an IP address or a CIDR range`);
        if (family === 4) this.ranges4.addSubnet(network, bits, "ipv4");
        else this.ranges6.addSubnet(network, bits, "ipv6");
      } else if (family === 4) {
        this.ranges4.addAddress(network, "ipv4");
      } else if (family === 6) {
        this.ranges6.addAddress(network, "ipv6");
      } else if (/^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$/.test(entry)) {
        this.names.add(entry.replace(/\.$/, ""));
      } else {
        throw new Error(`'${raw}' is not a hostname, an IP address or a CIDR range`);
      }
    }
  }

  allowsName(hostname: string): boolean {
    return this.names.has(hostname);
  }

  allowsAddress(address: string): boolean {
    const mapped = mappedIpv4(address);
    if (mapped) return this.ranges4.check(mapped, "ipv4") || this.ranges6.check(address, "ipv6");
    const family = isIP(address);
    if (family === 4) return this.ranges4.check(address, "ipv4");
    return family === 6 && this.ranges6.check(address, "ipv6");
  }
}

/** A callback URL split for delivery: the host as written (for Host and SNI) and the lookup name. */
export interface CallbackTarget {
  url: URL;
  /** Lower-case host without brackets or a trailing dot: a name, or an address literal. */
  hostname: string;
  port: number;
}

/** Throws CallbackUrlError when the URL may not be a callback (create time: no DNS lookup). */
export function checkCallbackUrl(raw: string, allow: PrivateHostAllowlist): CallbackTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CallbackUrlError(MUST_BE_HTTP);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "")
    throw new CallbackUrlError(MUST_BE_HTTP);
  const hostname = url.hostname
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "");
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  const target = { url, hostname, port };
  if (allow.allowsName(hostname)) return target;
  if (isIP(hostname) !== 0) {
    if (isPublicAddress(hostname) || allow.allowsAddress(hostname)) return target;
    throw new CallbackUrlError(MUST_NOT_TARGET_PRIVATE);
  }
  if (hostname === "localhost" || hostname.endsWith(".localhost"))
    throw new CallbackUrlError(MUST_NOT_TARGET_PRIVATE);
  return target;
}

/** The same check as an A2A invalid-params error naming the field. */
export function checkCallbackUrlParam(raw: string, allow: PrivateHostAllowlist, field: string): void {
  try {
    checkCallbackUrl(raw, allow);
  } catch (error) {
    if (error instanceof CallbackUrlError) throw invalidParams(error.message, { field });
    throw error;
  }
}

/**
 * The address a delivery connects to: every address the host resolves to must
 * be public (or allowlisted, by name or by range); the first one is used.
 */
export async function resolveCallback(
  target: CallbackTarget,
  allow: PrivateHostAllowlist,
  resolve: Resolver,
): Promise<string> {
  if (isIP(target.hostname) !== 0) return target.hostname;
  const addresses = (await resolve(target.hostname)).map((a) => a.address);
  if (addresses.length === 0) throw new CallbackUrlError(DID_NOT_RESOLVE);
  if (!allow.allowsName(target.hostname)) {
    for (const address of addresses) {
      if (!isPublicAddress(address) && !allow.allowsAddress(address))
        throw new CallbackUrlError(MUST_NOT_RESOLVE_PRIVATE);
    }
  }
  return addresses[0];
}
