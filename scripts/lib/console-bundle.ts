// The browser console's bundle: console/src/main.ts with @ag-ui/client into one
// ES module by esbuild, next to the page and its stylesheet, in dist/console
// (served at GET /console). scripts/build.ts runs it after type-checking the
// console; the console tests run it too, so they never test a stale bundle.
import { cpSync, mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";

export async function bundleConsole(root: string): Promise<string> {
  const source = path.join(root, "console");
  const out = path.join(root, "dist", "console");
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  await build({
    entryPoints: { app: path.join(source, "src", "main.ts") },
    outdir: out,
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    legalComments: "none",
    logLevel: "warning",
  });
  for (const file of ["index.html", "app.css", "favicon.svg"])
    cpSync(path.join(source, file), path.join(out, file));
  return out;
}
