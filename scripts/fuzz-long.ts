// A longer fuzz run for humans: the CI fuzz suite (test/fuzz/endpoints.test.ts)
// with N times more cases per endpoint and a fresh seed per round, until a
// round fails or the rounds run out. A failure prints the seed to replay:
//   IAC_CODE_FUZZ_SEED=<seed> npx mocha test/fuzz/endpoints.test.ts
// Usage: npx tsx scripts/fuzz-long.ts [--scale 20] [--rounds 5]
import { spawnSync } from "node:child_process";
import { randomInt } from "node:crypto";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..");
const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const scale = arg("scale", 20);
const rounds = arg("rounds", 5);

for (let round = 1; round <= rounds; round++) {
  const seed = randomInt(2 ** 31);
  console.log(`round ${round}/${rounds}: seed ${seed}, scale ${scale}`);
  const result = spawnSync(
    process.execPath,
    [
      path.join(ROOT, "node_modules", "mocha", "bin", "mocha.js"),
      "--no-config",
      "--node-option",
      "import=tsx",
      "--require",
      "./test/source-mode.mjs",
      "--timeout",
      "0",
      "--exit",
      "test/fuzz/endpoints.test.ts",
    ],
    {
      cwd: ROOT,
      stdio: "inherit",
      env: { ...process.env, IAC_CODE_FUZZ_SEED: String(seed), IAC_CODE_FUZZ_SCALE: String(scale) },
    },
  );
  if (result.status !== 0) {
    console.log(`round ${round} failed; replay with IAC_CODE_FUZZ_SEED=${seed} IAC_CODE_FUZZ_SCALE=${scale}`);
    process.exit(1);
  }
}
console.log(`${rounds} rounds passed`);
