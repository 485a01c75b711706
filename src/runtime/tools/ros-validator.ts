// A local static validator for ROS templates (YAML or JSON). It checks the
// structure ROS itself rejects first (format version, resource types,
// parameter and output shapes, DependsOn and Condition targets) and every
// reference (Ref, Fn::GetAtt, Fn::Sub variables: ros-references.ts) against
// what the template declares. Each finding names its path and, when known,
// its line.
import YAML, { isMap, LineCounter, type Document } from "yaml";
import { checkReferences } from "./ros-references.js";

export interface Finding {
  severity: "error" | "warning";
  /** Slash-separated path, e.g. Resources/VSwitch/Properties/VpcId. */
  path: string;
  line?: number;
  message: string;
}

export interface ValidationReport {
  valid: boolean;
  findings: Finding[];
  resourceCount: number;
  parameterNames: string[];
  outputNames: string[];
  /** Terraform-type templates: the number of .tf files in the Workspace. */
  terraformFiles?: number;
}

const FORMAT_VERSION = "2015-09-01";
const TOP_LEVEL_KEYS = new Set([
  "ROSTemplateFormatVersion",
  "Description",
  "Metadata",
  "Parameters",
  "Mappings",
  "Conditions",
  "Resources",
  "Outputs",
  "Rules",
  "Transform",
  "Workspace",
  "Locals",
  "Hooks",
]);
const RESOURCE_KEYS = new Set([
  "Type",
  "Properties",
  "DependsOn",
  "DeletionPolicy",
  "Condition",
  "Metadata",
  "Count",
  "UpdatePolicy",
  "Description",
]);
const PARAMETER_TYPES = new Set([
  "String",
  "Number",
  "CommaDelimitedList",
  "Json",
  "Boolean",
  "ALIYUN::OOS::Parameter::Value",
  "ALIYUN::OOS::SecretParameter::Value",
]);
/** ROS Terraform-type templates: Transform names the engine, Workspace holds the files. */
const TERRAFORM_TRANSFORM = /^Aliyun::(?:Terraform|OpenTofu)-v\d+(?:\.\d+)*$/;
const RESOURCE_TYPE = /^(?:ALIYUN|DATASOURCE|MODULE)::[A-Za-z0-9]+::[A-Za-z0-9]+$|^Custom::[A-Za-z0-9_]+$/;

type Json = unknown;

function isObject(value: Json): value is Record<string, Json> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

class Collector {
  readonly findings: Finding[] = [];

  constructor(
    private readonly doc: Document | undefined,
    private readonly lines: LineCounter,
  ) {}

  private lineOf(path: (string | number)[]): number | undefined {
    if (!this.doc) return undefined;
    // The key's position is more useful than the value's for mappings.
    const node = this.doc.getIn(path, true) as { range?: [number, number, number] } | undefined;
    const offset = node?.range?.[0];
    return offset === undefined ? undefined : this.lines.linePos(offset).line;
  }

  add(severity: Finding["severity"], path: (string | number)[], message: string): void {
    const line = this.lineOf(path);
    this.findings.push({
      severity,
      path: path.length > 0 ? path.join("/") : "/",
      ...(line !== undefined ? { line } : {}),
      message,
    });
  }
}

export function validateRosTemplate(text: string): ValidationReport {
  const lines = new LineCounter();
  const docs = YAML.parseAllDocuments(text, { lineCounter: lines });
  const empty: ValidationReport = {
    valid: false,
    findings: [],
    resourceCount: 0,
    parameterNames: [],
    outputNames: [],
  };
  if (!Array.isArray(docs) || docs.length !== 1) {
    empty.findings.push({
      severity: "error",
      path: "/",
      message: "The template must be exactly one YAML or JSON document.",
    });
    return empty;
  }
  const doc = docs[0];
  const collector = new Collector(doc, lines);
  if (doc.errors.length > 0) {
    for (const error of doc.errors.slice(0, 5)) {
      const line = error.linePos?.[0]?.line;
      collector.findings.push({
        severity: "error",
        path: "/",
        ...(line !== undefined ? { line } : {}),
        message: `Syntax error: ${error.message.split("\n")[0]}`,
      });
    }
    return { ...empty, findings: collector.findings };
  }
  const root: Json = doc.toJS({ maxAliasCount: 100 });
  if (!isMap(doc.contents) || !isObject(root)) {
    collector.add("error", [], "The template must be a mapping (an object) at the top level.");
    return { ...empty, findings: collector.findings };
  }
  return validateTree(root, collector);
}

function validateTree(root: Record<string, Json>, c: Collector): ValidationReport {
  for (const key of Object.keys(root)) {
    if (!TOP_LEVEL_KEYS.has(key)) c.add("warning", [key], `Unknown top-level section ${key}.`);
  }
  const version = root.ROSTemplateFormatVersion;
  if (version === undefined) {
    c.add("error", [], `ROSTemplateFormatVersion is missing; it must be "${FORMAT_VERSION}".`);
  } else if (version !== FORMAT_VERSION) {
    c.add("error", ["ROSTemplateFormatVersion"], `ROSTemplateFormatVersion must be "${FORMAT_VERSION}".`);
  }

  const terraform = checkTerraform(root, c);
  const parameters = sectionMap(root, "Parameters", c);
  const resources = sectionMap(root, "Resources", c);
  const outputs = sectionMap(root, "Outputs", c);
  const conditions = sectionMap(root, "Conditions", c);
  const mappings = sectionMap(root, "Mappings", c);
  if (root.Resources === undefined && !terraform)
    c.add("error", [], "Resources is missing; a template declares at least one resource.");
  else if (resources && Object.keys(resources).length === 0)
    c.add("error", ["Resources"], "Resources is empty.");

  const parameterNames = new Set(Object.keys(parameters ?? {}));
  const resourceNames = new Set(Object.keys(resources ?? {}));
  const conditionNames = new Set(Object.keys(conditions ?? {}));
  const mappingNames = new Set(Object.keys(mappings ?? {}));
  for (const name of parameterNames) {
    if (resourceNames.has(name))
      c.add("error", ["Parameters", name], `${name} is both a parameter and a resource.`);
  }

  for (const [name, param] of Object.entries(parameters ?? {})) checkParameter(name, param, c);
  for (const [name, resource] of Object.entries(resources ?? {})) {
    checkResource(name, resource, resourceNames, conditionNames, c);
  }
  for (const [name, output] of Object.entries(outputs ?? {})) {
    const path = ["Outputs", name];
    if (!isObject(output)) {
      c.add("error", path, `Output ${name} must be a mapping with a Value.`);
      continue;
    }
    if (!("Value" in output)) c.add("error", path, `Output ${name} has no Value.`);
    for (const key of Object.keys(output)) {
      if (!["Value", "Description", "Condition", "Label"].includes(key)) {
        c.add("warning", [...path, key], `Unknown key ${key} in output ${name}.`);
      }
    }
    if (typeof output.Condition === "string" && !conditionNames.has(output.Condition)) {
      c.add(
        "error",
        [...path, "Condition"],
        `Condition "${output.Condition}" is not declared in Conditions.`,
      );
    }
  }

  const refs = { parameterNames, resourceNames, conditionNames, mappingNames };
  for (const section of ["Resources", "Outputs", "Conditions", "Rules"] as const) {
    if (root[section] !== undefined)
      checkReferences(root[section], [section], refs, (path, message) => c.add("error", path, message));
  }

  const errors = c.findings.filter((f) => f.severity === "error").length;
  return {
    valid: errors === 0,
    findings: c.findings,
    resourceCount: resourceNames.size,
    ...(terraform ? { terraformFiles: terraform.files } : {}),
    parameterNames: [...parameterNames],
    outputNames: Object.keys(outputs ?? {}),
  };
}

/**
 * A Terraform-type template (Transform Aliyun::Terraform-v… or
 * Aliyun::OpenTofu-v…) has no ROS Resources: its Workspace maps relative
 * file paths to their contents, with at least one .tf file. Returns the
 * number of .tf files, or undefined for a plain ROS template.
 */
function checkTerraform(root: Record<string, Json>, c: Collector): { files: number } | undefined {
  const transform = root.Transform;
  const isTerraform = typeof transform === "string" && TERRAFORM_TRANSFORM.test(transform);
  if (
    transform !== undefined &&
    typeof transform === "string" &&
    /terraform|opentofu/i.test(transform) &&
    !isTerraform
  ) {
    c.add(
      "error",
      ["Transform"],
      `Transform "${transform}" is not a ROS Terraform engine (e.g. Aliyun::OpenTofu-v1.8).`,
    );
  }
  if (!isTerraform) {
    if (root.Workspace !== undefined)
      c.add(
        "error",
        ["Workspace"],
        "Workspace belongs to Terraform-type templates; set Transform (e.g. Aliyun::OpenTofu-v1.8).",
      );
    return undefined;
  }
  const workspace = root.Workspace;
  if (!isObject(workspace)) {
    c.add(
      "error",
      workspace === undefined ? [] : ["Workspace"],
      "A Terraform-type template needs a Workspace mapping file paths to file contents.",
    );
    return { files: 0 };
  }
  let files = 0;
  for (const [file, content] of Object.entries(workspace)) {
    const isText = typeof content === "string";
    const isRelative = !file.startsWith("/") && !file.split("/").some((part) => part === ".." || part === "");
    if (!isText)
      c.add("error", ["Workspace", file], `Workspace file ${file} must be a string (the file's content).`);
    if (!isRelative)
      c.add("error", ["Workspace", file], `Workspace path ${file} must be relative, without "..".`);
    if (isText && isRelative && (file.endsWith(".tf") || file.endsWith(".tf.json"))) files++;
  }
  if (files === 0) c.add("error", ["Workspace"], "Workspace has no .tf file.");
  if (root.Resources !== undefined)
    c.add(
      "warning",
      ["Resources"],
      "Resources is ignored in a Terraform-type template; resources belong in the Workspace files.",
    );
  return { files };
}

function sectionMap(root: Record<string, Json>, key: string, c: Collector): Record<string, Json> | undefined {
  const value = root[key];
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) {
    c.add("error", [key], `${key} must be a mapping.`);
    return undefined;
  }
  return value;
}

function checkParameter(name: string, param: Json, c: Collector): void {
  const path = ["Parameters", name];
  if (!isObject(param)) {
    c.add("error", path, `Parameter ${name} must be a mapping with a Type.`);
    return;
  }
  if (typeof param.Type !== "string") {
    c.add("error", path, `Parameter ${name} has no Type.`);
  } else if (!PARAMETER_TYPES.has(param.Type) && !param.Type.startsWith("ALIYUN::")) {
    c.add("error", [...path, "Type"], `Parameter ${name} has an unknown Type "${param.Type}".`);
  }
  if (param.AllowedValues !== undefined && !Array.isArray(param.AllowedValues)) {
    c.add("error", [...path, "AllowedValues"], `AllowedValues of ${name} must be a list.`);
  }
  if (
    Array.isArray(param.AllowedValues) &&
    param.Default !== undefined &&
    !param.AllowedValues.some((v) => String(v) === String(param.Default))
  ) {
    c.add("error", [...path, "Default"], `Default of ${name} is not one of its AllowedValues.`);
  }
  if (param.Type === "Number" && param.Default !== undefined && Number.isNaN(Number(param.Default))) {
    c.add("error", [...path, "Default"], `Default of ${name} is not a number.`);
  }
}

function checkResource(
  name: string,
  resource: Json,
  resourceNames: Set<string>,
  conditionNames: Set<string>,
  c: Collector,
): void {
  const path = ["Resources", name];
  if (!isObject(resource)) {
    c.add("error", path, `Resource ${name} must be a mapping with a Type.`);
    return;
  }
  if (typeof resource.Type !== "string") {
    c.add("error", path, `Resource ${name} has no Type.`);
  } else if (!RESOURCE_TYPE.test(resource.Type)) {
    c.add(
      "error",
      [...path, "Type"],
      `Resource ${name} has type "${resource.Type}"; ROS types look like ALIYUN::ECS::VPC (or DATASOURCE::…, MODULE::…, Custom::…).`,
    );
  }
  for (const key of Object.keys(resource)) {
    if (!RESOURCE_KEYS.has(key)) c.add("warning", [...path, key], `Unknown key ${key} in resource ${name}.`);
  }
  if (resource.Properties !== undefined && !isObject(resource.Properties)) {
    c.add("error", [...path, "Properties"], `Properties of ${name} must be a mapping.`);
  }
  const dependsOn = resource.DependsOn;
  if (dependsOn !== undefined) {
    const targets = Array.isArray(dependsOn) ? dependsOn : [dependsOn];
    targets.forEach((target, i) => {
      const where = Array.isArray(dependsOn) ? [...path, "DependsOn", i] : [...path, "DependsOn"];
      if (typeof target !== "string") c.add("error", where, `DependsOn of ${name} must name resources.`);
      else if (!resourceNames.has(target))
        c.add("error", where, `DependsOn target "${target}" is not a resource.`);
      else if (target === name) c.add("error", where, `Resource ${name} depends on itself.`);
    });
  }
  if (resource.Condition !== undefined) {
    if (typeof resource.Condition !== "string" || !conditionNames.has(resource.Condition)) {
      c.add(
        "error",
        [...path, "Condition"],
        `Condition ${JSON.stringify(resource.Condition)} is not declared in Conditions.`,
      );
    }
  }
}

/** One line per finding, for the model. */
export function formatReport(report: ValidationReport): string {
  if (report.findings.length === 0 && report.terraformFiles !== undefined) {
    return `The Terraform-type template is valid (${report.terraformFiles} .tf files, ${report.parameterNames.length} parameters, ${report.outputNames.length} outputs).`;
  }
  if (report.findings.length === 0) {
    return `The template is valid (${report.resourceCount} resources, ${report.parameterNames.length} parameters, ${report.outputNames.length} outputs).`;
  }
  const head = report.valid ? "The template is valid, with warnings:" : "The template has errors:";
  const lines = report.findings.map(
    (f) => `- ${f.severity}${f.line !== undefined ? ` (line ${f.line})` : ""} at ${f.path}: ${f.message}`,
  );
  return [head, ...lines].join("\n");
}
