// Every contract has labelled examples; valid ones must pass and invalid ones
// must fail with the expected keyword at the expected path.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { schemaIndex, violations, type SchemaName } from "../../src/contract/index.js";

const EXAMPLES = path.resolve(import.meta.dirname, "../../schemas/examples");

interface Expectation {
  keyword: string;
  path: string;
}

function jsonFiles(dir: string): string[] {
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith(".json") && !f.startsWith("_"))
        .sort()
    : [];
}

function readJson(file: string): unknown {
  return JSON.parse(readFileSync(file, "utf8"));
}

describe("contract examples", () => {
  for (const name of Object.keys(schemaIndex) as SchemaName[]) {
    const dir = path.join(EXAMPLES, name);
    const { validate } = schemaIndex[name];

    describe(name, () => {
      const valid = jsonFiles(path.join(dir, "valid"));
      const invalid = jsonFiles(path.join(dir, "invalid"));

      it("has at least one valid and one invalid example", () => {
        expect(valid, `schemas/examples/${name}/valid`).to.not.be.empty;
        expect(invalid, `schemas/examples/${name}/invalid`).to.not.be.empty;
      });

      for (const file of valid) {
        it(`accepts valid/${file}`, () => {
          const ok = validate(readJson(path.join(dir, "valid", file)));
          expect(ok, JSON.stringify(validate.errors, null, 2)).to.equal(true);
        });
      }

      const expectedFile = path.join(dir, "invalid", "_expected.json");
      const expected = (existsSync(expectedFile) ? readJson(expectedFile) : {}) as Record<
        string,
        Expectation
      >;
      for (const file of invalid) {
        it(`rejects invalid/${file} with the expected violation`, () => {
          expect(validate(readJson(path.join(dir, "invalid", file)))).to.equal(false);
          const want = expected[file];
          expect(want, `no expectation for invalid/${file} in _expected.json`).to.exist;
          const got = violations(validate);
          expect(
            got.some((v) => v.keyword === want.keyword && v.path === want.path),
            JSON.stringify(got, null, 2),
          ).to.be.true;
        });
      }
    });
  }
});
