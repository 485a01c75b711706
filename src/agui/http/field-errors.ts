// A rejected RunAgentInput named by field and reason: the contract's first
// violation under forwardedProps or tools (or of a top-level field) becomes one
// INVALID_INPUT whose localised text says which field and why. Deeper envelope
// violations (message unions) keep the generic envelope text.
import type { ContractViolation } from "../../contract/index.js";
import { AguiError, MSG, type MessageKey } from "../errors.js";

/** "/forwardedProps/iacCode/cwd" -> "forwardedProps.iacCode.cwd" ("/tools/0" -> "tools[0]"). */
export function fieldName(pointer: string): string {
  return pointer
    .split("/")
    .filter((s) => s !== "")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce((name, seg) => (/^\d+$/.test(seg) ? `${name}[${seg}]` : name ? `${name}.${seg}` : seg), "");
}

/** The pointer of the field a violation is about (a missing property included). */
function fieldPointer(v: ContractViolation): string {
  const missing = v.keyword === "required" ? v.params.missingProperty : undefined;
  const base = v.path === "/" ? "" : v.path;
  return typeof missing === "string" ? `${base}/${missing}` : base;
}

function list(values: unknown): string {
  return (Array.isArray(values) ? values : [values]).map((x) => JSON.stringify(x)).join(", ");
}

/** One violation as a field-naming error, or undefined when no specific text fits. */
function describe(v: ContractViolation): AguiError | undefined {
  const pointer = fieldPointer(v);
  const field = fieldName(pointer);
  const error = (key: MessageKey, params: Record<string, string> = {}) =>
    new AguiError("INVALID_INPUT", key, { field, ...params });
  if (pointer === "/tools" && v.keyword === "maxItems") return error(MSG.toolsNotSupported);
  if (pointer === "/forwardedProps/iacCode/cwd" && v.keyword === "pattern")
    return error(MSG.workspaceNotAbsolute);
  switch (v.keyword) {
    case "required":
      return error(MSG.fieldRequired);
    case "additionalProperties":
      return error(MSG.fieldUnknown);
    case "type":
      return error(MSG.fieldType, { type: list(v.params.type).replace(/"/g, "") });
    case "const":
      return error(MSG.fieldConst, { allowed: list(v.params.allowedValue) });
    case "enum":
      return error(MSG.fieldEnum, { allowed: list(v.params.allowedValues) });
    case "minLength":
      return error(MSG.fieldEmpty);
    case "maxLength":
      return error(MSG.fieldTooLong, { limit: String(v.params.limit) });
    case "minimum":
      return error(MSG.fieldMinimum, { limit: String(v.params.limit) });
    default:
      return pointer ? error(MSG.fieldInvalid) : undefined;
  }
}

const isPropsOrTools = (pointer: string): boolean => /^\/(forwardedProps|tools)(\/|$)/.test(pointer);

/** The specific error for a rejected envelope, if its violations allow one. */
export function fieldError(violations: ContractViolation[]): AguiError | undefined {
  const pointers = violations.map(fieldPointer);
  // forwardedProps and tools first (the iac-code extension); then a plain top-level field.
  const index = pointers.findIndex(isPropsOrTools);
  if (index >= 0) return describe(violations[index]);
  const top = pointers.findIndex((p) => p.split("/").length === 2);
  return top >= 0 && violations.every((v) => fieldPointer(v).split("/").length === 2)
    ? describe(violations[top])
    : undefined;
}
