// iac-code command line entry.
import { buildProgram } from "./program.js";

await buildProgram().parseAsync(process.argv);
