/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- tests read free-form A2A JSON replies through `any` (AnyJson) */
// A2A server + real runtime over HTTP: the template a turn writes is announced
// as a TaskArtifactUpdateEvent whose file:// part points to a stored copy
// (sha256 and size match the workspace file), and a ROS template with a broken
// Ref gets the validator's precise finding in metadata.iac_code.tool.result.
import { expect } from "chai";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { resultOf, type AnyJson } from "../a2a/helpers.js";
import {
  answer,
  removeDir,
  sendUntilInput,
  startE2eServer,
  texts,
  toolTrace,
  type E2eServer,
} from "./helpers.js";

const sha256 = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");

describe("e2e: A2A + runtime, artifacts and the ROS validator", function () {
  this.timeout(60_000);
  let s: E2eServer;

  before(async () => {
    s = await startE2eServer({ script: "e2e-a2a.yaml" });
  });
  after(async () => {
    await s.close();
    removeDir(s.dir);
  });

  it("announces the written template as an artifact whose file:// copy matches byte for byte", async () => {
    const waiting = await sendUntilInput(s.url, "[WRITE] template please");
    const events = await answer(s.url, waiting, "allow_once");
    const updates = events
      .map((e) => resultOf(e).artifactUpdate as AnyJson | undefined)
      .filter((a): a is AnyJson => !!a);
    expect(updates).to.have.length(1);
    const update = updates[0];
    expect(update).to.deep.include({ taskId: waiting.taskId, contextId: waiting.contextId, lastChunk: true });
    const artifact = update.artifact;
    expect(artifact.name).to.equal("vpc.yaml");
    const [part] = artifact.parts;
    expect(part).to.deep.include({ filename: "vpc.yaml", mediaType: "application/yaml" });
    expect(part.url).to.match(/^file:\/\//);

    const stored = fileURLToPath(part.url as string);
    // The copy lives in the server's artifact store, not in the workspace.
    expect(stored.startsWith(path.join(s.persistDir, "artifacts") + path.sep)).to.equal(true);
    const copy = readFileSync(stored);
    const original = readFileSync(path.join(s.workspace, "vpc.yaml"));
    expect(copy.equals(original)).to.equal(true);
    expect(part.metadata).to.deep.equal({
      mediaType: "application/yaml",
      byteSize: original.length,
      sha256: sha256(original),
    });
    expect(artifact.metadata.iac_code.artifact).to.deep.include({
      artifactId: artifact.artifactId,
      filename: "vpc.yaml",
      sha256: sha256(copy),
      byteSize: copy.length,
      uri: part.url,
    });
    // The tool trace names the same artifact, without the body.
    const completed = toolTrace(events).find((t) => t.status === "completed" && t.name === "write_file");
    expect(completed?.artifact).to.deep.include({ artifactId: artifact.artifactId, sha256: sha256(copy) });
    expect(JSON.stringify(completed)).to.not.include("ROSTemplateFormatVersion");
  });

  it("a template with a broken Ref gets the validator's precise finding through A2A", async () => {
    const waiting = await sendUntilInput(s.url, "[BROKEN-REF]");
    expect(waiting.envelope.target).to.equal("broken.yaml");
    const events = await answer(s.url, waiting, "allow_once");
    const validation = toolTrace(events).find(
      (t) => t.name === "ros_validate_template" && (t.status === "failed" || t.status === "completed"),
    );
    expect(validation, JSON.stringify(toolTrace(events))).to.not.equal(undefined);
    expect(validation!.status).to.equal("failed");
    const result = validation!.result;
    expect(result).to.deep.include({ template: "broken.yaml", valid: false });
    expect(result.findings).to.deep.equal([
      {
        severity: "error",
        path: "Resources/VSwitch/Properties/VpcId/Ref",
        line: 11,
        message: 'Ref target "Vpcc" is not a parameter, resource or pseudo parameter of this template.',
      },
    ]);
    expect(result.remote).to.deep.equal({ checked: false });
    expect(texts(events)).to.include("Validation finished.");
  });
});
