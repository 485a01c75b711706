// The cloud resource selectors the adapter can check an answer against
// (agui-iaccode.md §5.6): a selector's profile id (`<product>.<resource>`, the
// A2A request's selector.id) names the kind of resource, and a typed or chosen
// value must look like that resource's id before it is sent. Whether the
// resource exists is for the runtime to say.

export interface SelectorProfile {
  /** What an acceptable value looks like, shown in the rejection (e.g. "vpc-…"). */
  shape: string;
  pattern: RegExp;
}

/** Alibaba Cloud ids: a prefix, then lowercase letters and digits (the simulated endpoint's too). */
const idOf = (prefix: string): SelectorProfile => ({
  shape: `${prefix}-…`,
  pattern: new RegExp(`^${prefix}-[a-z0-9][a-z0-9-]{0,63}$`),
});

export const SELECTOR_PROFILES: Readonly<Record<string, SelectorProfile>> = {
  "vpc.vpc": idOf("vpc"),
  "vswitch.vswitch": idOf("vsw"),
  "ecs.security_group": idOf("sg"),
  "ecs.instance": idOf("i"),
};

/** The profile of a selector id, if the adapter knows it. */
export function selectorProfile(id: string): SelectorProfile | undefined {
  return Object.hasOwn(SELECTOR_PROFILES, id) ? SELECTOR_PROFILES[id] : undefined;
}
