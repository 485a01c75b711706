// The products `aliyun_api` may call: an explicit, offline table of RPC-style
// Alibaba Cloud OpenAPIs (product code → API version and endpoint). Nothing
// is resolved at run time from api.aliyun.com, and the endpoint is never
// taken from the model: a signed request (and an STS token) only goes to an
// *.aliyuncs.com host of this table, or to an operator's override.
import { ConfigError } from "../errors.js";
import { DEFAULT_ROS_ENDPOINT, ROS_API_VERSION } from "./ros-client.js";

export interface AliyunProduct {
  /** Lower-case product code, as in `aliyun_api(<product>:<Action>)` rules. */
  code: string;
  name: string;
  version: string;
  /** Whether its actions take a RegionId parameter (filled in from the credentials' region). */
  takesRegionId: boolean;
  /** Host for a region; central products ignore the region. */
  host(regionId: string): string;
}

function central(host: string) {
  return () => host;
}

function regional(prefix: string) {
  return (regionId: string) => `${prefix}.${regionId}.aliyuncs.com`;
}

const rosHost = new URL(DEFAULT_ROS_ENDPOINT).host;

export const ALIYUN_PRODUCTS: readonly AliyunProduct[] = [
  {
    code: "ros",
    name: "Resource Orchestration Service",
    version: ROS_API_VERSION,
    takesRegionId: true,
    host: central(rosHost),
  },
  {
    code: "ecs",
    name: "Elastic Compute Service",
    version: "2014-05-26",
    takesRegionId: true,
    host: regional("ecs"),
  },
  {
    code: "vpc",
    name: "Virtual Private Cloud",
    version: "2016-04-28",
    takesRegionId: true,
    host: regional("vpc"),
  },
  {
    code: "slb",
    name: "Server Load Balancer (CLB)",
    version: "2014-05-15",
    takesRegionId: true,
    host: regional("slb"),
  },
  {
    code: "rds",
    name: "ApsaraDB RDS",
    version: "2014-08-15",
    takesRegionId: true,
    host: central("rds.aliyuncs.com"),
  },
  {
    code: "ram",
    name: "Resource Access Management",
    version: "2015-05-01",
    takesRegionId: false,
    host: central("ram.aliyuncs.com"),
  },
  {
    code: "sts",
    name: "Security Token Service",
    version: "2015-04-01",
    takesRegionId: false,
    host: central("sts.aliyuncs.com"),
  },
];

const BY_CODE = new Map(ALIYUN_PRODUCTS.map((p) => [p.code, p]));

export function aliyunProduct(code: string): AliyunProduct | undefined {
  return BY_CODE.get(code.toLowerCase());
}

/** Region ids go into host names: letters, digits and dashes only. */
export const REGION_ID = /^[a-z]{2}(?:-[a-z0-9]+)+$/;
/** An OpenAPI action name, e.g. DescribeInstances. */
export const ACTION_NAME = /^[A-Z][A-Za-z0-9]{1,99}$/;

const READ_PREFIXES = ["Describe", "List", "Get", "Query", "Validate"];

/**
 * Read-only actions are auto-allowed: the Describe/List/Get/Query/Validate
 * prefixes, and ROS PreviewStack (which creates nothing). Everything else is
 * treated as a write.
 */
export function isReadOnlyAction(product: string, action: string): boolean {
  if (product.toLowerCase() === "ros" && action === "PreviewStack") return true;
  return READ_PREFIXES.some((p) => action.startsWith(p) && /^[A-Z]/.test(action.slice(p.length)));
}

/** Checks endpoint overrides (product code → http(s) base URL); a ConfigError names the bad entry. */
export function checkEndpointOverrides(
  endpoints: Readonly<Record<string, string>> | undefined,
): Readonly<Record<string, string>> | undefined {
  if (endpoints === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [code, url] of Object.entries(endpoints)) {
    const product = aliyunProduct(code);
    if (!product)
      throw new ConfigError(
        `cloudEndpoints.${code}: unknown product (${ALIYUN_PRODUCTS.map((p) => p.code).join(", ")}).`,
      );
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== "https:" && parsed.protocol !== "http:"))
      throw new ConfigError(`cloudEndpoints.${code}: expected an http(s) URL.`);
    out[product.code] = url;
  }
  return out;
}
