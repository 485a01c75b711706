// Cloud resource selector profiles: for each kind of resource a user can
// pick for a template parameter (a selector id "<product>.<resource>"), the
// API that lists the candidates, how its answer becomes options, and which
// values an answer may carry (an id of that kind of resource, whether it was
// offered or typed by hand).
import type { InputOption } from "../seam.js";

export interface SelectorProfile {
  id: string;
  /** Product code of the aliyun_api table and the list action. */
  product: string;
  action: string;
  /** The ROS resource type chosen. */
  resourceType: string;
  /** The template parameter the value usually fills. */
  parameter: string;
  /** The options of a list answer (id = the resource's id). */
  options(answer: Record<string, unknown>): InputOption[];
  /** Why a value is not acceptable; undefined when it is. */
  refusal(value: string): string | undefined;
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v ? v : undefined);

/**
 * The ids of each kind of resource a selector may pick (Alibaba Cloud's: a
 * prefix, then 6 to 40 lower-case letters and digits; the simulated endpoint's
 * too). The AG-UI adapter checks answers against the same table before it
 * sends them, so both sides accept the same values.
 */
export const RESOURCE_ID_PATTERNS: Readonly<Record<string, { prefix: string; pattern: RegExp }>> = {
  "vpc.vpc": idOf("vpc"),
  "vswitch.vswitch": idOf("vsw"),
  "ecs.security_group": idOf("sg"),
  "ecs.instance": idOf("i"),
};

function idOf(prefix: string): { prefix: string; pattern: RegExp } {
  return { prefix, pattern: new RegExp(`^${prefix}-[a-z0-9]{6,40}$`) };
}

const VPC_ID = RESOURCE_ID_PATTERNS["vpc.vpc"].pattern;

const vpc: SelectorProfile = {
  id: "vpc.vpc",
  product: "vpc",
  action: "DescribeVpcs",
  resourceType: "ALIYUN::ECS::VPC",
  parameter: "VpcId",
  options(answer) {
    const holder = answer.Vpcs as { Vpc?: unknown } | undefined;
    const list = Array.isArray(holder?.Vpc) ? (holder.Vpc as Record<string, unknown>[]) : [];
    return list.flatMap((v) => {
      const id = str(v.VpcId);
      if (!id) return [];
      const name = str(v.VpcName) ?? id;
      const cidr = str(v.CidrBlock);
      return [{ id, label: cidr ? `${name} (${cidr})` : name }];
    });
  },
  refusal(value) {
    return VPC_ID.test(value)
      ? undefined
      : `${JSON.stringify(value.slice(0, 80))} is not a VPC id: a VPC id is "vpc-" followed by 6 to 40 lower-case letters and digits.`;
  },
};

const PROFILES = new Map<string, SelectorProfile>([[vpc.id, vpc]]);

export function selectorProfile(id: string): SelectorProfile | undefined {
  return PROFILES.get(id);
}

export const SELECTOR_IDS = [...PROFILES.keys()];
