// The cloud resource selectors the adapter can check an answer against
// (agui-iaccode.md §5.6): a selector's profile id (`<product>.<resource>`, the
// A2A request's selector.id) names the kind of resource, and a typed or chosen
// value must look like that resource's id before it is sent. Whether the
// resource exists is for the runtime to say.
import { RESOURCE_ID_PATTERNS } from "../../runtime/cloud/resource-selectors.js";

export interface SelectorProfile {
  /** What an acceptable value looks like, shown in the rejection (e.g. "vpc-…"). */
  shape: string;
  pattern: RegExp;
}

/** The runtime's table of resource ids, so that what the adapter lets through the runtime takes. */
export const SELECTOR_PROFILES: Readonly<Record<string, SelectorProfile>> = Object.fromEntries(
  Object.entries(RESOURCE_ID_PATTERNS).map(([id, { prefix, pattern }]) => [
    id,
    { shape: `${prefix}-…`, pattern },
  ]),
);

/** The profile of a selector id, if the adapter knows it. */
export function selectorProfile(id: string): SelectorProfile | undefined {
  return Object.hasOwn(SELECTOR_PROFILES, id) ? SELECTOR_PROFILES[id] : undefined;
}
