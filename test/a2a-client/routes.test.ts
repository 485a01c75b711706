// Route specs, the router, route-preview (with --save-routes) and call over a
// named route or one chosen by the prompt's words.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { EXIT } from "../../src/a2a/client/errors.js";
import { parseRouteSpec } from "../../src/cli/a2a-client/routes.js";
import { startSdkServer, type SdkServer } from "./fixtures/sdk-server.js";
import { runClient } from "./harness.js";

const ROUTES = [
  "--route",
  "ros=http://ros.example:41242;skills=iac_generation,iac_review;tags=ros,vpc",
  "--route",
  "tf=http://tf.example:41242;skills=terraform_ros_conversion;tags=terraform,hcl",
];

async function preview(...args: string[]) {
  return runClient(["route-preview", ...args]);
}

describe("a2a-client: route specs", () => {
  it("reads name=url;skills=…;tags=… and the legacy positional form, trimming and dropping empty items", () => {
    expect(parseRouteSpec(" ros = http://a ; skills = iac, gen ;tags=,ros,, vpc ")).to.deep.equal({
      name: "ros",
      url: "http://a",
      skills: ["iac", "gen"],
      tags: ["ros", "vpc"],
    });
    expect(parseRouteSpec("ros=http://a;iac_generation;ros,vpc")).to.deep.equal({
      name: "ros",
      url: "http://a",
      skills: ["iac_generation"],
      tags: ["ros", "vpc"],
    });
  });

  it("refuses malformed specs with the reference's messages", async () => {
    const cases: Array<[string, string]> = [
      ["ros", "A2A route must start with name=url."],
      ["=http://a", "A2A route name and URL are required."],
      ["ros=", "A2A route name and URL are required."],
      ["ros=http://a;owner=me", "Unknown A2A route segment 'owner'. Expected skills or tags."],
    ];
    for (const [spec, message] of cases) {
      const run = await preview("--route", spec, "--name", "ros");
      expect(run.code, spec).to.equal(EXIT.error);
      expect(run.stderr, spec).to.equal(`${message}\n`);
    }
  });
});

describe("a2a-client route-preview", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "iac-routes-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("resolves by name, then skill, then the prompt's words against tags and names", async () => {
    const byName = await preview(...ROUTES, "--name", "tf");
    expect(byName.stdout).to.equal(
      `${JSON.stringify({ name: "tf", skills: ["terraform_ros_conversion"], tags: ["terraform", "hcl"], url: "http://tf.example:41242" }, null, 2)}\n`,
    );
    expect(JSON.parse((await preview(...ROUTES, "--skill", "iac_review")).stdout)).to.have.property(
      "name",
      "ros",
    );
    const byPrompt = await preview(...ROUTES, "--prompt", "Convert this Terraform, please.");
    expect(JSON.parse(byPrompt.stdout)).to.have.property("name", "tf");
    expect(JSON.parse((await preview(...ROUTES, "--prompt", "ask TF now")).stdout)).to.have.property(
      "name",
      "tf",
    );
  });

  it("names unknown, ambiguous and unmatched routes", async () => {
    const errors: Array<[string[], string]> = [
      [["--name", "nope"], "Unknown A2A route 'nope'. Known routes: ros, tf"],
      [["--prompt", "ros or terraform."], "Ambiguous A2A route. Candidates: ros, tf"],
      [["--prompt", "hello there"], "No A2A route matched. Known routes: ros, tf"],
      [["--skill", "cooking"], "No A2A route matched. Known routes: ros, tf"],
    ];
    for (const [args, message] of errors) {
      const run = await preview(...ROUTES, ...args);
      expect(run.code).to.equal(EXIT.error);
      expect(run.stderr).to.equal(`${message}\n`);
    }
    const none = await preview("--name", "ros");
    expect(none.stderr).to.equal("At least one --route is required.\n");
  });

  it("saves the route set with --save-routes (a directory alone also saves), owner-only", async () => {
    const refused = await preview(...ROUTES, "--name", "ros", "--save-routes");
    expect(refused.code).to.equal(EXIT.error);
    expect(refused.stderr).to.equal("--route-state-dir is required with --save-routes.\n");

    const target = path.join(dir, "state");
    expect(
      (await preview(...ROUTES, "--name", "ros", "--save-routes", "--route-state-dir", target)).code,
    ).to.equal(0);
    const file = path.join(target, "routes.json");
    expect(JSON.parse(readFileSync(file, "utf8"))).to.deep.equal({
      routes: [
        {
          name: "ros",
          url: "http://ros.example:41242",
          skills: ["iac_generation", "iac_review"],
          tags: ["ros", "vpc"],
        },
        {
          name: "tf",
          url: "http://tf.example:41242",
          skills: ["terraform_ros_conversion"],
          tags: ["terraform", "hcl"],
        },
      ],
    });
    expect(statSync(file).mode & 0o777).to.equal(0o600);

    const other = path.join(dir, "alias");
    expect(
      (await preview("--route", "only=http://x", "--name", "only", "--persistence-dir", other)).code,
    ).to.equal(0);
    expect(
      (JSON.parse(readFileSync(path.join(other, "routes.json"), "utf8")) as { routes: unknown[] }).routes,
    ).to.have.length(1);
  });
});

describe("a2a-client call over routes", function () {
  this.timeout(30_000);
  let s: SdkServer;
  let dir: string;
  before(async () => {
    s = await startSdkServer();
    dir = mkdtempSync(path.join(os.tmpdir(), "iac-routes-call-"));
  });
  after(async () => {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("calls the route named by --route-name", async () => {
    const run = await runClient([
      "call",
      "--route",
      `echo=${s.base};tags=echo`,
      "--route",
      "other=http://127.0.0.1:9;tags=x",
      "--route-name",
      "echo",
      "-p",
      "via route",
    ]);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.equal("echo: via route\n");
  });

  it("picks the config file's route whose tag is a word of the prompt, and names the problem otherwise", async () => {
    const file = path.join(dir, "routes.yml");
    writeFileSync(
      file,
      `routes:\n  - name: echo\n    url: ${s.base}\n    tags: [echo, repeat]\n  - other=http://127.0.0.1:9;skills=x;tags=deploy\n`,
    );
    const run = await runClient(["--config", file, "call", "-p", "please repeat this"]);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.equal("echo: please repeat this\n");
    const unmatched = await runClient(["--config", file, "call", "-p", "hello"]);
    expect(unmatched.stderr).to.equal("No A2A route matched. Known routes: echo, other\n");
    const unknown = await runClient(["--config", file, "call", "-p", "hello", "--route-name", "nope"]);
    expect(unknown.stderr).to.equal("Unknown A2A route 'nope'. Known routes: echo, other\n");
  });
});
