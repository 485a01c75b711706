// terraform_package_ros_template: packages a Terraform directory of the
// workspace into a ROS Terraform-type template (Transform
// Aliyun::OpenTofu-v1.8, Workspace = relative file path → content), which
// ROS validates and deploys like any template. It does not rewrite HCL into
// ROS resources. ROS Parameters come from the root module's simple
// `variable` blocks, Outputs from its `output` blocks. The template is
// checked by the local validator before it is returned or written.
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import YAML from "yaml";
import { t } from "../../i18n/index.js";
import { ToolError } from "../errors.js";
import { ensureDir, writeFileAtomic } from "../fs-util.js";
import { displayPath, readOnlyDescription } from "./describe.js";
import { templateArtifact } from "./files.js";
import { walkFiles } from "./glob.js";
import { blockAttributes, literalValue, topLevelBlocks } from "./hcl-blocks.js";
import { formatReport, validateRosTemplate } from "./ros-validator.js";
import type { Tool, ToolContext } from "./types.js";
import type { Workspace } from "./workspace.js";

export const OPENTOFU_TRANSFORM = "Aliyun::OpenTofu-v1.8";
const MAX_FILES = 200;
/** ROS accepts template bodies up to 512 KiB. */
const MAX_TEMPLATE_BYTES = 512 * 1024;
/** Files a Terraform configuration is made of; state and tfvars (often secret) are left out. */
const PACKAGED = /\.(?:tf|tf\.json|tftpl)$/;
const SKIPPED_SEGMENT = /^\.|^terraform\.tfstate/;

interface PackageInput {
  directory: string;
  output_path?: string;
  description?: string;
}

interface RosParameter {
  Type: string;
  Description?: string;
  Default?: string | number | boolean;
  NoEcho?: boolean;
}

/** ROS parameter type of a Terraform type expression; undefined when it is not simple. */
function parameterType(typeExpr: string | undefined, defaultValue: unknown): string | undefined {
  const type = typeExpr?.replace(/\s+/g, "");
  if (type === "string") return "String";
  if (type === "number") return "Number";
  if (type === "bool") return "Boolean";
  if (type !== undefined) return undefined;
  if (typeof defaultValue === "string") return "String";
  if (typeof defaultValue === "number") return "Number";
  if (typeof defaultValue === "boolean") return "Boolean";
  return "String";
}

interface RootModule {
  parameters: Record<string, RosParameter>;
  outputs: Record<string, { Value: null; Description?: string }>;
  skipped: string[];
}

function readRootModule(files: Array<{ rel: string; content: string }>): RootModule {
  const root: RootModule = { parameters: {}, outputs: {}, skipped: [] };
  for (const file of files) {
    if (file.rel.includes("/") || !file.rel.endsWith(".tf")) continue;
    for (const block of topLevelBlocks(file.content)) {
      const name = block.labels[0];
      if (block.labels.length !== 1 || !name) continue;
      const attrs = blockAttributes(block.body);
      const description = literalValue(attrs.get("description"));
      if (block.type === "variable") {
        const hasDefault = attrs.has("default");
        const def = literalValue(attrs.get("default"));
        const type = parameterType(attrs.get("type"), def);
        // Complex types, or a default that is an expression, stay Terraform's own business.
        if (!type || (hasDefault && def === undefined)) {
          root.skipped.push(name);
          continue;
        }
        root.parameters[name] = {
          Type: type,
          ...(typeof description === "string" ? { Description: description } : {}),
          ...(def !== undefined ? { Default: def } : {}),
          ...(literalValue(attrs.get("sensitive")) === true ? { NoEcho: true } : {}),
        };
      } else if (block.type === "output") {
        root.outputs[name] = {
          Value: null,
          ...(typeof description === "string" ? { Description: description } : {}),
        };
      }
    }
  }
  return root;
}

/** The real path of the directory argument; errors name the field. */
async function resolveDirectory(workspace: Workspace, directory: string): Promise<string> {
  let base: string;
  try {
    base = await workspace.resolveExisting(directory);
  } catch (error) {
    throw error instanceof ToolError ? new ToolError(`directory: ${error.message}`) : error;
  }
  if (!(await stat(base)).isDirectory())
    throw new ToolError(`directory: ${workspace.relative(base)} is not a directory.`);
  return base;
}

async function packagedFiles(
  ctx: ToolContext,
  directory: string,
): Promise<{ base: string; files: Array<{ rel: string; content: string }> }> {
  const base = await resolveDirectory(ctx.workspace, directory);
  // walkFiles does not follow symbolic links, so nothing outside the workspace is read.
  const entries = (await walkFiles(base, 5000, ctx.signal)).filter(
    (e) => PACKAGED.test(e.relative) && !e.relative.split("/").some((part) => SKIPPED_SEGMENT.test(part)),
  );
  if (entries.length === 0)
    throw new ToolError(`directory: ${ctx.workspace.relative(base)} holds no .tf file to package.`);
  if (entries.length > MAX_FILES)
    throw new ToolError(
      `directory: ${entries.length} Terraform files; at most ${MAX_FILES} can be packaged.`,
    );
  const total = entries.reduce((sum, e) => sum + e.size, 0);
  if (total > MAX_TEMPLATE_BYTES)
    throw new ToolError(
      `directory: the Terraform files add up to ${total} bytes; a ROS template holds at most 512 KiB.`,
    );
  entries.sort((a, b) => (a.relative < b.relative ? -1 : a.relative > b.relative ? 1 : 0));
  const files = await Promise.all(
    entries.map(async (e) => {
      const buffer = await readFile(e.absolute);
      if (buffer.subarray(0, 8192).includes(0))
        throw new ToolError(`directory: ${e.relative} is a binary file, not Terraform.`);
      return { rel: e.relative, content: buffer.toString("utf8") };
    }),
  );
  return { base, files };
}

export const terraformPackageTool: Tool<PackageInput> = {
  name: "terraform_package_ros_template",
  description: `Package a Terraform (OpenTofu) directory of the workspace into a ROS Terraform-type template: Transform ${OPENTOFU_TRANSFORM}, Workspace mapping each .tf file's relative path to its content, ROS Parameters from the root module's simple variable blocks (string, number, bool) and Outputs from its output blocks. The HCL is not rewritten. The template is checked by the local ROS validator; with output_path it is written to that file (YAML), otherwise returned. .tfvars and state files are never packaged.`,
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["directory"],
    properties: {
      directory: {
        type: "string",
        minLength: 1,
        description: "Terraform directory, relative to the workspace.",
      },
      output_path: {
        type: "string",
        minLength: 1,
        description: "Where to write the template (e.g. ros-template.yaml).",
      },
      description: { type: "string", maxLength: 1024, description: "Description of the template." },
    },
  },
  supportsBlanketAllow: true,
  isFileEdit: true,
  isReadOnly: (input) => input.output_path === undefined,
  isConcurrencySafe: (input) => input.output_path === undefined,
  ruleContent: (input) => input.output_path ?? input.directory,
  describe: (input, lang) => {
    if (input.output_path === undefined)
      return readOnlyDescription("terraform_package_ros_template", lang, displayPath(input.directory));
    const target = displayPath(input.output_path);
    return {
      title: t(lang, "runtime.tool.writeFile.title", { target }),
      purpose: t(lang, "runtime.tool.writeFile.purpose"),
      effect: "file_change",
      target,
    };
  },
  // Both paths are checked before anyone is asked to approve the write.
  precheck: async (input, workspace) => {
    await resolveDirectory(workspace, input.directory);
    if (input.output_path !== undefined) await workspace.resolveForWrite(input.output_path);
  },
  async run(input, ctx) {
    const { base, files } = await packagedFiles(ctx, input.directory);
    const root = readRootModule(files);
    const template: Record<string, unknown> = {
      ROSTemplateFormatVersion: "2015-09-01",
      Transform: OPENTOFU_TRANSFORM,
      ...(input.description ? { Description: input.description } : {}),
      ...(Object.keys(root.parameters).length > 0 ? { Parameters: root.parameters } : {}),
      ...(Object.keys(root.outputs).length > 0 ? { Outputs: root.outputs } : {}),
      Workspace: Object.fromEntries(files.map((f) => [f.rel, f.content])),
    };
    const body = YAML.stringify(template, { blockQuote: "literal", lineWidth: 0 });
    if (Buffer.byteLength(body) > MAX_TEMPLATE_BYTES)
      throw new ToolError("The packaged template is larger than ROS accepts (512 KiB).");
    const report = validateRosTemplate(body);
    if (!report.valid)
      throw new ToolError(`The packaged template does not pass validation:\n${formatReport(report)}`);
    const summary = {
      directory: ctx.workspace.relative(base),
      transform: OPENTOFU_TRANSFORM,
      files: files.map((f) => f.rel),
      parameters: Object.keys(root.parameters),
      skippedVariables: root.skipped,
      outputs: Object.keys(root.outputs),
    };
    const skippedNote =
      root.skipped.length > 0
        ? `\nVariables left to Terraform (complex type or computed default): ${root.skipped.join(", ")}.`
        : "";
    if (input.output_path === undefined) {
      return {
        content: `${formatReport(report)}${skippedNote}\n\n${body}`,
        data: { ...summary, template: body },
      };
    }
    const absolute = await ctx.workspace.resolveForWrite(input.output_path);
    const rel = ctx.workspace.relative(absolute);
    if ((await stat(absolute).catch(() => undefined))?.isDirectory())
      throw new ToolError(`${rel} is a directory.`);
    await ensureDir(path.dirname(absolute), 0o755);
    await writeFileAtomic(absolute, body, { signal: ctx.signal });
    const artifact = templateArtifact(rel, body);
    return {
      content: `Wrote ${rel} (${Buffer.byteLength(body)} bytes) from ${files.length} Terraform files. ${formatReport(report)}${skippedNote}`,
      data: { ...summary, path: rel },
      ...(artifact ? { artifact } : {}),
    };
  },
};
