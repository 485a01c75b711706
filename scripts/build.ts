// npm run build (also the prepare script, so `npm ci` builds): compiles src/
// and generated/ to dist/ with tsc, then copies the files the compiled code
// reads next to itself (the demo script, the i18n catalogs, the pipelines
// and their prompts, the standalone validators), so bin/iac-code.mjs starts without compiling TypeScript.
// Last, the browser console (console/): type-checked with its own tsconfig (DOM
// types), bundled by esbuild with @ag-ui/client into dist/console (served at /console).
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { bundleConsole } from "./lib/console-bundle.js";

const ROOT = path.resolve(import.meta.dirname, "..");
const DIST = path.join(ROOT, "dist");

execFileSync(
  process.execPath,
  [path.join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"],
  {
    cwd: ROOT,
    stdio: "inherit",
  },
);

/** Every non-TypeScript file under src/: the code reads catalogs, scripts and prompts next to itself. */
const ASSET = /^(?!.*\.ts$)/;
function copyAssets(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const from = path.join(dir, entry.name);
    if (entry.isDirectory()) copyAssets(from);
    else if (ASSET.test(entry.name)) {
      const to = path.join(DIST, path.relative(ROOT, from));
      mkdirSync(path.dirname(to), { recursive: true });
      cpSync(from, to);
    }
  }
}
copyAssets(path.join(ROOT, "src"));
cpSync(path.join(ROOT, "generated", "validators.cjs"), path.join(DIST, "generated", "validators.cjs"));

execFileSync(
  process.execPath,
  [
    path.join(ROOT, "node_modules", "typescript", "bin", "tsc"),
    "-p",
    path.join(ROOT, "console", "tsconfig.json"),
  ],
  { cwd: ROOT, stdio: "inherit" },
);
await bundleConsole(ROOT);
