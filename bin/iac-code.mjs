#!/usr/bin/env node
// Runs the compiled CLI in dist/ (built by `npm ci` through the prepare script,
// or `npm run build`). IAC_CODE_FROM_SOURCE=1 runs the TypeScript sources
// through tsx instead (the tests and development set it).
import process from "node:process";

if (process.env.IAC_CODE_FROM_SOURCE === "1") {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
} else {
  try {
    await import("../dist/src/cli/main.js");
  } catch (error) {
    if (error?.code !== "ERR_MODULE_NOT_FOUND" || !String(error.message).includes("dist/src/cli/main.js"))
      throw error;
    process.stderr.write(
      "iac-code is not built: run `npm run build` (npm ci does it), or set IAC_CODE_FROM_SOURCE=1.\n",
    );
    process.exit(1);
  }
}
