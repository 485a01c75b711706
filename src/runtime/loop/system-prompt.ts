// The system prompt of a normal-mode turn: identity, rules, environment,
// cloud configuration, the skills the `skill` tool loads, and the
// workspace's own instructions (AGENTS.md).
import os from "node:os";
import path from "node:path";
import { readFileIfChangedAsync } from "../file-cache.js";

const MAX_INSTRUCTIONS = 20_000;

export async function buildSystemPrompt(args: {
  cwd: string;
  provider: string;
  model: string;
  regionId?: string;
  cloudTools: boolean;
  /** Names of the turn's skills (the `skill` tool's description has the details). */
  skills?: string[];
}): Promise<string> {
  // Read again only when it changed: a turn stats AGENTS.md, it does not read it.
  const text = (await readFileIfChangedAsync(path.join(args.cwd, "AGENTS.md"))) ?? "";
  const instructions = text.length > MAX_INSTRUCTIONS ? text.slice(0, MAX_INSTRUCTIONS) : text;
  const sections = [
    "You are IaC Code, an Infrastructure-as-Code assistant for Alibaba Cloud. You write, explain, review, " +
      "validate, price and deploy Resource Orchestration Service (ROS) templates and Terraform configurations.",
    [
      "# Rules",
      "- Work inside the workspace only; paths are relative to it.",
      "- Write templates to files with write_file, then check them with ros_validate_template and fix every error it reports.",
      "- ROS templates use ROSTemplateFormatVersion: '2015-09-01' and resource types such as ALIYUN::ECS::VPC.",
      "- Never invent credentials, account ids or resource ids. Ask with ask_user_question when a choice is the user's.",
      "- Creating or deleting cloud resources costs money: explain what will happen before calling ros_stack.",
      "- To deploy a Terraform configuration through ROS, package its directory with terraform_package_ros_template; do not rewrite the HCL.",
      "- When a tool is denied, do not retry it; tell the user what was not done.",
      "- Answer in the language the user writes in.",
    ].join("\n"),
    [
      "# Environment",
      `- Workspace: ${args.cwd}`,
      `- Platform: ${os.platform()}`,
      `- Date: ${new Date().toISOString().slice(0, 10)}`,
      `- Model: ${args.model} (${args.provider})`,
      args.cloudTools
        ? `- Alibaba Cloud credentials are configured; default region ${args.regionId ?? "cn-hangzhou"}. ros_get_template_parameter_constraints gives the values a template parameter may take; aliyun_api reads cloud state (Describe*/List*/Get*).`
        : "- No Alibaba Cloud credentials are configured: ROS API tools are unavailable; validation is local only.",
    ].join("\n"),
  ];
  if (args.skills && args.skills.length > 0) {
    sections.push(
      [
        "# Skills",
        `Skills available through the skill tool: ${args.skills.join(", ")}.`,
        "Before a task a skill covers (writing, converting, validating, pricing or deploying templates), " +
          "load it with the skill tool and follow its instructions.",
      ].join("\n"),
    );
  }
  if (instructions.trim()) sections.push(`# Project instructions (AGENTS.md)\n${instructions.trim()}`);
  return sections.join("\n\n");
}
