// The iac-code command tree (src/cli/main.ts runs it; tests read its options).
import { Command } from "commander";
import { registerContractCommand } from "./contract-command.js";
import { registerAguiCommand } from "./agui-command.js";
import { registerServeCommand } from "./serve-command.js";
import { registerA2aCommand } from "./a2a-command.js";
import { registerA2aClientCommand } from "./a2a-client/program.js";
import { registerSessionsCommand } from "./sessions-command.js";
import { registerStateCommand } from "./state-command.js";
import { VERSION } from "../version.js";
import { EXIT_USAGE } from "./exit-codes.js";

export function buildProgram(): Command {
  const program = new Command("iac-code")
    .description(
      "Infrastructure-as-Code agent server (Alibaba Cloud ROS, Terraform) behind A2A 1.0 and AG-UI",
    )
    .version(VERSION, "-V, --version")
    // One line, not the whole help, after a usage error (commander says "Did you mean --port?").
    .showHelpAfterError("(add --help for the options)")
    .configureOutput({ outputError: (text, write) => write(text) })
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : EXIT_USAGE));
  registerContractCommand(program);
  registerAguiCommand(program);
  registerServeCommand(program);
  registerA2aCommand(program);
  registerA2aClientCommand(program);
  registerSessionsCommand(program);
  registerStateCommand(program);
  program.on("command:*", (operands: string[]) => {
    process.stderr.write(`Unknown command: ${operands[0]}\n\n`);
    program.outputHelp({ error: true });
    process.exit(EXIT_USAGE);
  });
  return program;
}
