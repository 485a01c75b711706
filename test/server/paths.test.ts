import { expect } from "chai";
import path from "node:path";
import { configDir, expandPath, expandUserPath } from "../../src/server/paths.js";

describe("paths", () => {
  const env = { HOME: "/home/u", WORK: "/srv/work" };

  it("expands ~ and $VAR / ${VAR}; unset variables become empty", () => {
    expect(expandPath("~/a", env)).to.equal("/home/u/a");
    expect(expandPath("$WORK/b", env)).to.equal("/srv/work/b");
    expect(expandPath("${WORK}/c$NOPE", env)).to.equal("/srv/work/c");
    expect(expandPath("rel", env)).to.equal(path.resolve("rel"));
  });

  it("keeps a relative path relative for absoluteness checks", () => {
    expect(expandUserPath("rel/x", env)).to.equal("rel/x");
    expect(expandUserPath(" ~ ", env)).to.equal("/home/u");
  });

  it("resolves the config dir the same way for every component", () => {
    expect(configDir(env)).to.equal("/home/u/.iac-code");
    expect(configDir({ ...env, IAC_CODE_CONFIG_DIR: "~/cfg" })).to.equal("/home/u/cfg");
    expect(configDir({ ...env, IAC_CODE_CONFIG_DIR: "$WORK/cfg" })).to.equal("/srv/work/cfg");
  });
});
