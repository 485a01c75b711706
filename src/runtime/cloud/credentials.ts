// Alibaba Cloud credential chain: the request's own credentials, then the
// ALIBABA_CLOUD_* environment, then <config>/.cloud-credentials.yml, then the
// aliyun CLI profile (~/.aliyun/config.json). Credentials live in memory only.
import path from "node:path";
import type { Logger } from "pino";
import YAML from "yaml";
import { readFileIfChanged } from "../file-cache.js";
import type { TurnOverrides } from "../seam.js";

export const DEFAULT_REGION = "cn-hangzhou";

export interface AlibabaCloudCredentials {
  accessKeyId: string;
  accessKeySecret: string;
  securityToken?: string;
  regionId: string;
  /** simulated: demo mode's simulated ROS endpoint (no real account). */
  source: "request" | "env" | "config_file" | "aliyun_cli" | "simulated";
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/** A credentials file's data; each turn resolves the chain, the file is read again only when it changed. */
function readData(file: string, logger: Logger): Record<string, unknown> | undefined {
  const raw = readFileIfChanged(file);
  if (raw === undefined) return undefined;
  try {
    const data: unknown = YAML.parse(raw);
    return data && typeof data === "object" ? (data as Record<string, unknown>) : undefined;
  } catch {
    logger.warn({ file: path.basename(file) }, "cloud credentials file is not valid YAML/JSON; ignored");
    return undefined;
  }
}

function fromProfile(
  profile: Record<string, unknown> | undefined,
  source: AlibabaCloudCredentials["source"],
  logger: Logger,
): AlibabaCloudCredentials | undefined {
  if (!profile) return undefined;
  const mode = (text(profile.mode) ?? "AK").toLowerCase();
  if (mode !== "ak" && mode !== "ststoken") {
    logger.warn({ mode, source }, "cloud credential mode not supported; ignored");
    return undefined;
  }
  const accessKeyId = text(profile.access_key_id) ?? text(profile.accessKeyId);
  const accessKeySecret = text(profile.access_key_secret) ?? text(profile.accessKeySecret);
  if (!accessKeyId || !accessKeySecret) return undefined;
  const securityToken =
    text(profile.sts_token) ?? text(profile.security_token) ?? text(profile.securityToken);
  return {
    accessKeyId,
    accessKeySecret,
    ...(securityToken ? { securityToken } : {}),
    regionId: text(profile.region_id) ?? text(profile.regionId) ?? DEFAULT_REGION,
    source,
  };
}

export function resolveCloudCredentials(args: {
  override?: TurnOverrides["alibabaCloud"];
  env: NodeJS.ProcessEnv;
  configDir: string;
  homeDir?: string;
  logger: Logger;
}): AlibabaCloudCredentials | undefined {
  const { override, env, logger } = args;
  const envRegion = text(env.ALIBABA_CLOUD_REGION_ID);
  const overrideId = text(override?.accessKeyId);
  const overrideSecret = text(override?.accessKeySecret);
  if (overrideId && overrideSecret) {
    const token = text(override?.securityToken);
    return {
      accessKeyId: overrideId,
      accessKeySecret: overrideSecret,
      ...(token ? { securityToken: token } : {}),
      regionId: text(override?.regionId) ?? envRegion ?? DEFAULT_REGION,
      source: "request",
    };
  }
  const envId = text(env.ALIBABA_CLOUD_ACCESS_KEY_ID);
  const envSecret = text(env.ALIBABA_CLOUD_ACCESS_KEY_SECRET);
  if (envId && envSecret) {
    const token = text(env.ALIBABA_CLOUD_SECURITY_TOKEN);
    return {
      accessKeyId: envId,
      accessKeySecret: envSecret,
      ...(token ? { securityToken: token } : {}),
      regionId: text(override?.regionId) ?? envRegion ?? DEFAULT_REGION,
      source: "env",
    };
  }
  const fileData = readData(path.join(args.configDir, ".cloud-credentials.yml"), logger);
  const fromFile = fromProfile(
    fileData?.aliyun as Record<string, unknown> | undefined,
    "config_file",
    logger,
  );
  if (fromFile) return withRegion(fromFile, text(override?.regionId) ?? envRegion);
  if (args.homeDir) {
    const cli = readData(path.join(args.homeDir, ".aliyun", "config.json"), logger);
    const profiles = Array.isArray(cli?.profiles) ? (cli.profiles as Record<string, unknown>[]) : [];
    const current = text(cli?.current) ?? "default";
    const profile = profiles.find((p) => p && p.name === current) ?? profiles[0];
    const fromCli = fromProfile(profile, "aliyun_cli", logger);
    if (fromCli) return withRegion(fromCli, text(override?.regionId) ?? envRegion);
  }
  return undefined;
}

function withRegion(
  credentials: AlibabaCloudCredentials,
  region: string | undefined,
): AlibabaCloudCredentials {
  return region ? { ...credentials, regionId: region } : credentials;
}

/** Secret strings of a credential set (redacted from anything logged). */
export function credentialSecrets(credentials: AlibabaCloudCredentials | undefined): string[] {
  if (!credentials) return [];
  return [credentials.accessKeySecret, credentials.securityToken ?? ""].filter((s) => s.length > 0);
}
