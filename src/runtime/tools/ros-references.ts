// The references of a ROS template, checked against what it declares: Ref
// (parameters, resources, pseudo parameters), Fn::GetAtt (resources), Fn::Sub
// variables (also its own local variables), Fn::FindInMap (mappings) and
// Condition inside Conditions. The validator (ros-validator.ts) walks the
// sections in which references may appear.

const PSEUDO_PARAMETERS = new Set([
  "ALIYUN::StackName",
  "ALIYUN::StackId",
  "ALIYUN::Region",
  "ALIYUN::AccountId",
  "ALIYUN::TenantId",
  "ALIYUN::NoValue",
  "ALIYUN::Index",
]);

export interface KnownNames {
  parameterNames: Set<string>;
  resourceNames: Set<string>;
  conditionNames: Set<string>;
  mappingNames: Set<string>;
}

/** Reports a reference error at a path (the validator adds the line). */
export type ErrorAt = (path: (string | number)[], message: string) => void;

/** Checks every reference under `node` against the names the template declares. */
export function checkReferences(
  node: unknown,
  path: (string | number)[],
  names: KnownNames,
  error: ErrorAt,
): void {
  if (Array.isArray(node)) {
    node.forEach((item, i) => checkReferences(item, [...path, i], names, error));
    return;
  }
  if (node === null || typeof node !== "object") return;
  const map = node as Record<string, unknown>;
  const keys = Object.keys(map);
  if (keys.length === 1) {
    const [fn] = keys;
    const arg = map[fn];
    const at = [...path, fn];
    if (fn === "Ref") {
      if (typeof arg !== "string") error(at, "Ref takes the name of a parameter or resource.");
      else if (
        !names.parameterNames.has(arg) &&
        !names.resourceNames.has(arg) &&
        !PSEUDO_PARAMETERS.has(arg)
      ) {
        error(at, `Ref target "${arg}" is not a parameter, resource or pseudo parameter of this template.`);
      }
      return;
    }
    if (fn === "Fn::GetAtt") {
      let resource: unknown;
      if (Array.isArray(arg) && arg.length === 2 && typeof arg[1] === "string") resource = arg[0];
      else if (typeof arg === "string" && arg.includes(".")) resource = arg.slice(0, arg.indexOf("."));
      else {
        error(at, "Fn::GetAtt takes [ResourceName, AttributeName].");
        return;
      }
      if (typeof resource === "string" && !names.resourceNames.has(resource)) {
        error(at, `Fn::GetAtt target "${resource}" is not a resource of this template.`);
      } else if (typeof resource !== "string") {
        checkReferences(resource, [...at, 0], names, error);
      }
      return;
    }
    if (fn === "Fn::Sub") {
      checkSub(arg, at, names, error);
      return;
    }
    if (fn === "Fn::FindInMap" && Array.isArray(arg) && typeof arg[0] === "string") {
      if (!names.mappingNames.has(arg[0]))
        error(at, `Fn::FindInMap map "${arg[0]}" is not declared in Mappings.`);
    }
    if (fn === "Condition" && typeof arg === "string" && path[0] === "Conditions") {
      if (!names.conditionNames.has(arg)) error(at, `Condition "${arg}" is not declared in Conditions.`);
      return;
    }
  }
  for (const key of keys) checkReferences(map[key], [...path, key], names, error);
}

function checkSub(arg: unknown, at: (string | number)[], names: KnownNames, error: ErrorAt): void {
  let template: unknown = arg;
  let locals = new Set<string>();
  if (Array.isArray(arg)) {
    template = arg[0];
    const variables: unknown = arg[1];
    if (variables !== null && typeof variables === "object" && !Array.isArray(variables)) {
      locals = new Set(Object.keys(variables));
      checkReferences(variables, [...at, 1], names, error);
    }
  }
  if (typeof template !== "string") {
    error(at, "Fn::Sub takes a string or [string, {variables}].");
    return;
  }
  for (const match of template.matchAll(/\$\{([^}!][^}]*)\}/g)) {
    const variable = match[1].trim();
    if (locals.has(variable) || PSEUDO_PARAMETERS.has(variable)) continue;
    const base = variable.includes(".") ? variable.slice(0, variable.indexOf(".")) : variable;
    if (
      variable.includes(".")
        ? names.resourceNames.has(base)
        : names.parameterNames.has(base) || names.resourceNames.has(base)
    ) {
      continue;
    }
    error(at, `Fn::Sub variable "\${${variable}}" names no parameter, resource or local variable.`);
  }
}
