// Loaded by mocha before the tests (.mocharc.json "require"): every CLI a test
// spawns (bin/iac-code.mjs, the managed A2A child) runs the TypeScript sources
// through tsx, so tests never depend on a stale dist/. test/e2e/built-cli.test.ts
// runs the compiled dist/ on purpose.
import process from "node:process";

process.env.IAC_CODE_FROM_SOURCE ??= "1";
