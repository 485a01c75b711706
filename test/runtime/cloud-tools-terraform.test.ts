// terraform_package_ros_template: a Terraform directory of the workspace
// becomes a ROS Terraform-type template (Transform Aliyun::OpenTofu-v1.8,
// Workspace of files) that the local validator accepts; bad input gets a
// clear error. Also the validator's Terraform-type rules and the HCL reader.
import { expect } from "chai";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import YAML from "yaml";
import { blockAttributes, literalValue, topLevelBlocks } from "../../src/runtime/tools/hcl-blocks.js";
import { validateRosTemplate } from "../../src/runtime/tools/ros-validator.js";
import { terraformPackageTool } from "../../src/runtime/tools/terraform-package.js";
import type { ToolContext } from "../../src/runtime/tools/types.js";
import { Workspace } from "../../src/runtime/tools/workspace.js";
import { removeTempDirs, tempDir } from "./helpers.js";

const MAIN_TF = `terraform {
  required_providers {
    alicloud = { source = "aliyun/alicloud" }
  }
}

module "vpc" {
  source = "./modules/vpc"
  name   = var.vpc_name
}

resource "alicloud_vswitch" "vsw" {
  vpc_id     = module.vpc.vpc_id
  cidr_block = "172.16.\${var.subnet}.0/24" # not a block: } {
  zone_id    = var.zone_id
}
`;

const VARIABLES_TF = `variable "vpc_name" {
  type        = string
  default     = "tf-vpc"
  description = "Name of the VPC"
}

variable "subnet" {
  type    = number
  default = 1
}

variable "zone_id" {
  description = <<EOT
Zone of the VSwitch }
EOT
}

variable "db_password" {
  type      = string
  sensitive = true
}

variable "tags" {
  type    = map(string)
  default = { env = "dev" }
}

variable "computed" {
  default = "prefix-\${local.x}"
}

/* variable "commented" { type = string } */
`;

const OUTPUTS_TF = `output "vswitch_id" {
  value       = alicloud_vswitch.vsw.id
  description = "VSwitch ID"
}
`;

const MODULE_TF = `variable "name" {
  type = string
}
resource "alicloud_vpc" "this" {
  vpc_name   = var.name
  cidr_block = "172.16.0.0/12"
}
output "vpc_id" {
  value = alicloud_vpc.this.id
}
`;

async function workspaceWithTerraform(): Promise<{ cwd: string; ctx: ToolContext }> {
  const cwd = await tempDir("iac-tf-");
  const tf = path.join(cwd, "infra");
  await mkdir(path.join(tf, "modules", "vpc"), { recursive: true });
  await mkdir(path.join(tf, ".terraform", "modules"), { recursive: true });
  await writeFile(path.join(tf, "main.tf"), MAIN_TF);
  await writeFile(path.join(tf, "variables.tf"), VARIABLES_TF);
  await writeFile(path.join(tf, "outputs.tf"), OUTPUTS_TF);
  await writeFile(path.join(tf, "modules", "vpc", "main.tf"), MODULE_TF);
  // Never packaged: variable values (often secrets), state, provider caches, notes.
  await writeFile(path.join(tf, "terraform.tfvars"), 'db_password = "hunter2-secret"\n');
  await writeFile(path.join(tf, "terraform.tfstate"), "{}");
  await writeFile(path.join(tf, ".terraform", "modules", "cached.tf"), "# cache\n");
  await writeFile(path.join(tf, "README.md"), "notes\n");
  const ctx: ToolContext = {
    workspace: await Workspace.open(cwd),
    signal: new AbortController().signal,
    toolUseId: "t",
    language: "en",
    progress: () => undefined,
    askUser: () => Promise.reject(new Error("no questions")),
  };
  return { cwd, ctx };
}

describe("runtime: terraform_package_ros_template", () => {
  afterEach(removeTempDirs);

  it("packages a Terraform directory into an OpenTofu-type template the validator accepts", async () => {
    const { ctx } = await workspaceWithTerraform();
    const result = await terraformPackageTool.run(
      { directory: "infra", description: "VPC and VSwitch" },
      ctx,
    );
    const data = result.data as Record<string, unknown> & { template: string };
    expect(data).to.deep.include({
      directory: "infra",
      transform: "Aliyun::OpenTofu-v1.8",
      files: ["main.tf", "modules/vpc/main.tf", "outputs.tf", "variables.tf"],
      parameters: ["vpc_name", "subnet", "zone_id", "db_password"],
      skippedVariables: ["tags", "computed"],
      outputs: ["vswitch_id"],
    });
    const template = YAML.parse(data.template) as Record<string, unknown>;
    expect(template).to.deep.include({
      ROSTemplateFormatVersion: "2015-09-01",
      Transform: "Aliyun::OpenTofu-v1.8",
      Description: "VPC and VSwitch",
    });
    expect(template.Parameters).to.deep.equal({
      vpc_name: { Type: "String", Description: "Name of the VPC", Default: "tf-vpc" },
      subnet: { Type: "Number", Default: 1 },
      zone_id: { Type: "String" },
      db_password: { Type: "String", NoEcho: true },
    });
    expect(template.Outputs).to.deep.equal({ vswitch_id: { Value: null, Description: "VSwitch ID" } });
    // File contents travel byte for byte.
    expect(template.Workspace).to.deep.equal({
      "main.tf": MAIN_TF,
      "modules/vpc/main.tf": MODULE_TF,
      "outputs.tf": OUTPUTS_TF,
      "variables.tf": VARIABLES_TF,
    });
    expect(data.template).not.to.include("hunter2-secret");
    const report = validateRosTemplate(data.template);
    expect(report.valid, JSON.stringify(report.findings)).to.equal(true);
    expect(report.findings).to.deep.equal([]);
    expect(result.content).to.match(
      /^The Terraform-type template is valid \(4 \.tf files, 4 parameters, 1 outputs\)\.\nVariables left to Terraform \(complex type or computed default\): tags, computed\.\n\nROSTemplateFormatVersion/,
    );
  });

  it("writes the template to output_path (a file edit) and announces it as an artifact", async () => {
    const { cwd, ctx } = await workspaceWithTerraform();
    expect(terraformPackageTool.isReadOnly({ directory: "infra" })).to.equal(true);
    expect(terraformPackageTool.isReadOnly({ directory: "infra", output_path: "out/ros.yaml" })).to.equal(
      false,
    );
    const result = await terraformPackageTool.run({ directory: "infra", output_path: "out/ros.yaml" }, ctx);
    const written = await readFile(path.join(cwd, "out", "ros.yaml"), "utf8");
    expect(result.content).to.match(
      /^Wrote out\/ros\.yaml \(\d+ bytes\) from 4 Terraform files\. The Terraform-type template is valid/,
    );
    expect(result.artifact).to.deep.include({
      filename: "ros.yaml",
      mediaType: "application/yaml",
      content: written,
    });
    expect((YAML.parse(written) as { Transform: string }).Transform).to.equal("Aliyun::OpenTofu-v1.8");
  });

  it("refuses a directory without .tf files, outside the workspace, or not a directory", async () => {
    const { cwd, ctx } = await workspaceWithTerraform();
    await mkdir(path.join(cwd, "empty"));
    await writeFile(path.join(cwd, "empty", "terraform.tfvars"), "a = 1\n");
    const outside = await tempDir("iac-outside-");
    await writeFile(path.join(outside, "main.tf"), 'resource "x" "y" {}\n');
    await symlink(outside, path.join(cwd, "linked"));
    const cases: Array<[Record<string, string>, string]> = [
      [{ directory: "empty" }, "directory: empty holds no .tf file to package."],
      [{ directory: "../x" }, "directory: The path is outside the workspace."],
      [{ directory: outside }, "directory: The path is outside the workspace."],
      [{ directory: "linked" }, "directory: The path leaves the workspace through a symbolic link."],
      [{ directory: "infra/main.tf" }, "directory: infra/main.tf is not a directory."],
      [{ directory: "missing" }, "directory: No such file or directory: missing"],
      [{ directory: "infra", output_path: "../escape.yaml" }, "The path is outside the workspace."],
    ];
    for (const [input, message] of cases) {
      const error = await terraformPackageTool
        .run(input as { directory: string }, ctx)
        .catch((e: unknown) => e);
      expect(error, JSON.stringify(input)).to.have.property("message", message);
    }
    // The same checks run before a write is put to the user.
    const precheck = await terraformPackageTool.precheck!(
      { directory: "../x", output_path: "ros.yaml" },
      ctx.workspace,
    ).catch((e: unknown) => e);
    expect(precheck).to.have.property("message", "directory: The path is outside the workspace.");
    // A symbolic link to a file outside is not followed either.
    await mkdir(path.join(cwd, "tf2"));
    await symlink(path.join(outside, "main.tf"), path.join(cwd, "tf2", "main.tf"));
    const linked = await terraformPackageTool.run({ directory: "tf2" }, ctx).catch((e: unknown) => e);
    expect(linked).to.have.property("message", "directory: tf2 holds no .tf file to package.");
  });

  it("validates Terraform-type templates: Transform, Workspace paths and files", () => {
    const findings = (text: string) =>
      validateRosTemplate(text).findings.map((f) => `${f.path}: ${f.message}`);
    expect(
      findings("ROSTemplateFormatVersion: '2015-09-01'\nTransform: Aliyun::OpenTofu-v1.8\n"),
    ).to.deep.equal(["/: A Terraform-type template needs a Workspace mapping file paths to file contents."]);
    expect(
      findings(
        "ROSTemplateFormatVersion: '2015-09-01'\nTransform: Aliyun::OpenTofu-v1.8\nWorkspace:\n  ../main.tf: x\n  notes.md: 1\n",
      ),
    ).to.deep.equal([
      'Workspace/../main.tf: Workspace path ../main.tf must be relative, without "..".',
      "Workspace/notes.md: Workspace file notes.md must be a string (the file's content).",
      "Workspace: Workspace has no .tf file.",
    ]);
    expect(
      findings(
        "ROSTemplateFormatVersion: '2015-09-01'\nWorkspace:\n  main.tf: x\nResources:\n  V:\n    Type: ALIYUN::ECS::VPC\n",
      ),
    ).to.deep.equal([
      "Workspace: Workspace belongs to Terraform-type templates; set Transform (e.g. Aliyun::OpenTofu-v1.8).",
    ]);
    expect(
      findings(
        "ROSTemplateFormatVersion: '2015-09-01'\nTransform: Aliyun::OpenTofu-latest\nWorkspace:\n  main.tf: x\n",
      ),
    ).to.include(
      'Transform: Transform "Aliyun::OpenTofu-latest" is not a ROS Terraform engine (e.g. Aliyun::OpenTofu-v1.8).',
    );
    expect(
      validateRosTemplate(
        "ROSTemplateFormatVersion: '2015-09-01'\nTransform: Aliyun::Terraform-v1.5\nWorkspace:\n  main.tf: x\n",
      ).valid,
    ).to.equal(true);
  });

  it("reads HCL blocks past strings, heredocs and comments", () => {
    const blocks = topLevelBlocks(VARIABLES_TF);
    expect(blocks.map((b) => `${b.type} ${b.labels.join(" ")}`)).to.deep.equal([
      "variable vpc_name",
      "variable subnet",
      "variable zone_id",
      "variable db_password",
      "variable tags",
      "variable computed",
    ]);
    expect(topLevelBlocks(MAIN_TF).map((b) => `${b.type} ${b.labels.join(" ")}`)).to.deep.equal([
      "terraform ",
      "module vpc",
      "resource alicloud_vswitch vsw",
    ]);
    const vsw = blockAttributes(topLevelBlocks(MAIN_TF)[2].body);
    expect(vsw.get("cidr_block")).to.equal('"172.16.${var.subnet}.0/24"');
    expect(literalValue(vsw.get("cidr_block"))).to.equal(undefined);
    expect(blockAttributes(blocks[2].body).get("description")).to.equal("<<EOT\nZone of the VSwitch }\nEOT");
    expect(literalValue('"a \\"quoted\\" value"')).to.equal('a "quoted" value');
    expect(literalValue("-1.5e2")).to.equal(-150);
    expect(literalValue("false")).to.equal(false);
    expect(literalValue("var.x")).to.equal(undefined);
  });
});
