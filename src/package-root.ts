// The package's root directory (package.json, bin/, schemas/, proto/), found
// from this module's place: src/ when the sources run through tsx, dist/src/
// when the compiled JavaScript runs.
import { existsSync } from "node:fs";
import path from "node:path";

function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const PACKAGE_ROOT = packageRoot(import.meta.dirname);
