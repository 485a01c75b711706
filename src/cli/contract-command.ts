// `iac-code contract ...`: validate payloads against the published contracts in
// a user's CI, list the contract names, export the contract files. Listing
// loads no validator; validate and export load what they need on use.
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { contractTitles } from "../contract/names.js";

function readInput(file: string): string {
  return file === "-" ? readFileSync(0, "utf8") : readFileSync(file, "utf8");
}

/** Exit status: 0 valid, 1 invalid (violations or not JSON), 2 unknown schema or unreadable file. */
export async function validateCommand(
  schemaName: string,
  file: string,
  out = process.stdout,
): Promise<number> {
  if (!Object.hasOwn(contractTitles, schemaName)) {
    process.stderr.write(
      `Unknown schema "${schemaName}". Run \`iac-code contract list\` to see the names.\n`,
    );
    return 2;
  }
  let text: string;
  try {
    text = readInput(file);
  } catch (error) {
    process.stderr.write(`Cannot read ${file}: ${(error as Error).message}\n`);
    return 2;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    out.write(`INVALID ${file}: not JSON (${(error as Error).message})\n`);
    return 1;
  }
  const { schemaIndex, violations } = await import("../contract/validators.js");
  const entry = schemaIndex[schemaName as keyof typeof schemaIndex];
  if (entry.validate(value)) {
    out.write(`OK ${file} is a valid ${schemaName}\n`);
    return 0;
  }
  out.write(`INVALID ${file} is not a valid ${schemaName}:\n`);
  for (const v of violations(entry.validate)) out.write(`  ${v.path}: ${v.message} [${v.keyword}]\n`);
  return 1;
}

/**
 * Output piped into a reader that stops early (`contract list | head`): the
 * next write fails with EPIPE, which ends the command quietly instead of with
 * a stack trace.
 */
function endQuietlyOnClosedPipe(): void {
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    process.exit(process.exitCode ?? 0);
  });
}

export function registerContractCommand(program: Command): void {
  const contract = program
    .command("contract")
    .description("Validate payloads against, list and export the contracts")
    .hook("preAction", endQuietlyOnClosedPipe);
  contract
    .command("validate")
    .description(
      "Validate a JSON file (or - for stdin) against a named contract; exit 0 when valid, 1 when not",
    )
    .argument("<schema-name>", "contract name, see `iac-code contract list`")
    .argument("<file>", "JSON file, or - for standard input")
    .action(async (schemaName: string, file: string) => {
      process.exitCode = await validateCommand(schemaName, file);
    });
  contract
    .command("list")
    .description("List the contract names")
    .action(() => {
      for (const [name, title] of Object.entries(contractTitles)) process.stdout.write(`${name}\t${title}\n`);
    });
  contract
    .command("export")
    .description("Write the JSON Schemas, OpenAPI documents and protos (with their imports) to a directory")
    .argument("<dir>", "output directory")
    .option("--force", "overwrite an earlier export in <dir>")
    .action(async (dir: string, options: { force?: boolean }) => {
      const { exportContracts } = await import("../contract/export.js");
      try {
        const protos = exportContracts(dir, { force: options.force });
        process.stdout.write(`Exported schemas, OpenAPI and ${protos.length} proto files to ${dir}\n`);
      } catch (error) {
        process.stderr.write(`Cannot export the contracts: ${(error as Error).message}\n`);
        process.exitCode = 2;
      }
    });
}
