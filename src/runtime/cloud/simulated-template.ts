// What demo mode's simulated ROS endpoint reads from a template: its
// resources with their properties, which of them a stack creates (a
// resource whose Condition is false is left out, as ROS does: Fn::Equals,
// Fn::Not, Fn::And, Fn::Or over parameter values), how many ECS instances
// each one asks for (the simulated quota counts them) and whether it has
// deletion protection on (the simulated DeleteStack then fails, as ROS does).
import YAML from "yaml";

export interface SimulatedResource {
  logicalId: string;
  type: string;
  properties: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

function parse(body: string): Record<string, unknown> | undefined {
  try {
    const template: unknown = YAML.parse(body);
    return isObject(template) ? template : undefined;
  } catch {
    return undefined;
  }
}

/** Every resource of a template (no condition is evaluated). */
export function resourcesOf(body: string): SimulatedResource[] {
  const template = parse(body);
  const resources = isObject(template?.Resources) ? template.Resources : {};
  return Object.entries(resources).map(([logicalId, r]) => ({
    logicalId,
    type: isObject(r) && typeof r.Type === "string" ? r.Type : "UNKNOWN",
    properties: isObject(r) && isObject(r.Properties) ? r.Properties : {},
  }));
}

/** Parameter values of a call: the given ones, else the template's defaults. */
function parameterValues(
  template: Record<string, unknown>,
  given: Record<string, string>,
): Record<string, unknown> {
  const declared = isObject(template.Parameters) ? template.Parameters : {};
  const values: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(declared)) {
    if (name in given) values[name] = given[name];
    else if (isObject(spec) && "Default" in spec) values[name] = spec.Default;
  }
  return values;
}

/** A condition's value; anything this small evaluator does not know counts as true. */
function evaluate(
  expr: unknown,
  values: Record<string, unknown>,
  conditions: Record<string, unknown>,
  depth = 0,
): unknown {
  if (depth > 16) return true;
  if (!isObject(expr)) return expr;
  const [fn, arg] = Object.entries(expr)[0] ?? [];
  const sub = (e: unknown) => evaluate(e, values, conditions, depth + 1);
  switch (fn) {
    case "Ref":
      return typeof arg === "string" && arg in values ? values[arg] : expr;
    case "Condition":
      return typeof arg === "string" ? sub(conditions[arg]) !== false : true;
    case "Fn::Equals":
      return Array.isArray(arg) && arg.length === 2
        ? JSON.stringify(sub(arg[0])) === JSON.stringify(sub(arg[1]))
        : true;
    case "Fn::Not":
      return Array.isArray(arg) ? sub(arg[0]) === false : true;
    case "Fn::And":
      return Array.isArray(arg) ? arg.every((a) => sub(a) !== false) : true;
    case "Fn::Or":
      return Array.isArray(arg) ? arg.some((a) => sub(a) !== false) : true;
    default:
      return true;
  }
}

/** The resources a stack of this template creates with these parameter values. */
export function createdResources(body: string, given: Record<string, string>): SimulatedResource[] {
  const template = parse(body);
  if (!template) return [];
  const values = parameterValues(template, given);
  const conditions = isObject(template.Conditions) ? template.Conditions : {};
  const resources = isObject(template.Resources) ? template.Resources : {};
  return resourcesOf(body).filter((r) => {
    const condition = (resources[r.logicalId] as Record<string, unknown>).Condition;
    return typeof condition !== "string" || evaluate(conditions[condition], values, conditions) !== false;
  });
}

/** Parameters of a ROS call ([{ParameterKey, ParameterValue}]) as a map. */
export function givenParameters(list: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!Array.isArray(list)) return out;
  for (const item of list) {
    if (isObject(item) && typeof item.ParameterKey === "string")
      out[item.ParameterKey] =
        typeof item.ParameterValue === "string"
          ? item.ParameterValue
          : JSON.stringify(item.ParameterValue ?? "");
  }
  return out;
}

const count = (value: unknown, fallback: number): number => {
  const n = typeof value === "number" ? value : typeof value === "string" ? Number(value) : NaN;
  return Number.isInteger(n) && n >= 0 ? n : fallback;
};

/** ECS instances a resource asks for (the simulated quota counts them). */
export function instancesOf(resource: SimulatedResource): number {
  switch (resource.type) {
    case "ALIYUN::ECS::Instance":
      return 1;
    case "ALIYUN::ECS::InstanceGroup":
    case "ALIYUN::ECS::InstanceGroupClone":
      return count(resource.properties.MaxAmount, 1);
    default:
      return 0;
  }
}

/** Deletion protection as the ECS, SLB and RDS properties spell it (true, Enable, on). */
export function hasDeletionProtection(resource: SimulatedResource): boolean {
  const value = resource.properties.DeletionProtection;
  return value === true || (typeof value === "string" && /^(true|enable|enabled|on)$/i.test(value));
}
