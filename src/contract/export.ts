// Writes the public contracts to a directory so other teams can generate SDKs
// or validate payloads without this repository: JSON Schemas (with the A2A
// ProtoJSON schema they reference), OpenAPI documents and .proto files together
// with every imported google/* proto that protoc needs.
import { cpSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { PACKAGE_ROOT as ROOT } from "../package-root.js";

function googleProtoRoot(): string {
  const require = createRequire(import.meta.url);
  return path.dirname(require.resolve("google-proto-files/package.json"));
}

function importsOf(file: string): string[] {
  return [...readFileSync(file, "utf8").matchAll(/^import\s+(?:public\s+)?"([^"]+)";/gm)].map((m) => m[1]);
}

/** Copies each imported proto (transitively) from the googleapis tree into outProto. */
function copyImports(entryFiles: string[], outProto: string): string[] {
  const google = googleProtoRoot();
  const copied: string[] = [];
  const queue = entryFiles.flatMap(importsOf);
  const seen = new Set<string>();
  while (queue.length > 0) {
    const rel = queue.shift()!;
    if (seen.has(rel)) continue;
    seen.add(rel);
    const source = path.join(google, rel);
    if (!existsSync(source)) throw new Error(`Cannot find imported proto ${rel}`);
    mkdirSync(path.dirname(path.join(outProto, rel)), { recursive: true });
    cpSync(source, path.join(outProto, rel));
    copied.push(rel);
    queue.push(...importsOf(source));
  }
  return copied.sort();
}

const OWN_PROTOS = ["lf/a2a/v1/a2a.proto", "iac_code/a2a/transports/proto/a2a_jsonrpc.proto"];
// Error details travel in gRPC trailers (grpc-status-details-bin) and REST error bodies.
const ERROR_PROTOS = ["google/rpc/status.proto", "google/rpc/error_details.proto"];

/** A reason the export cannot go where it was asked to (one line for the CLI). */
export class ExportError extends Error {}

/** What the export writes at the top of its directory. */
const ENTRIES = ["schemas", "generated", "proto", "README.md"];

/** Refuses a file, or a directory holding an earlier export unless `force`. */
function checkTarget(out: string, force: boolean): void {
  const stat = statSync(out, { throwIfNoEntry: false });
  if (!stat) return;
  if (!stat.isDirectory()) throw new ExportError(`${out} exists and is not a directory.`);
  const taken = ENTRIES.find((entry) => existsSync(path.join(out, entry)));
  if (taken && !force) {
    throw new ExportError(`${path.join(out, taken)} already exists; use --force to overwrite the export.`);
  }
}

export function exportContracts(outDir: string, options: { force?: boolean } = {}): string[] {
  const out = path.resolve(outDir);
  checkTarget(out, options.force ?? false);
  mkdirSync(out, { recursive: true });
  cpSync(path.join(ROOT, "schemas"), path.join(out, "schemas"), { recursive: true });
  cpSync(path.join(ROOT, "generated/jsonschema"), path.join(out, "generated/jsonschema"), {
    recursive: true,
  });
  const protoOut = path.join(out, "proto");
  for (const rel of OWN_PROTOS) {
    mkdirSync(path.dirname(path.join(protoOut, rel)), { recursive: true });
    cpSync(path.join(ROOT, "proto", rel), path.join(protoOut, rel));
  }
  const google = googleProtoRoot();
  for (const rel of ERROR_PROTOS) {
    mkdirSync(path.dirname(path.join(protoOut, rel)), { recursive: true });
    cpSync(path.join(google, rel), path.join(protoOut, rel));
  }
  const imports = copyImports(
    [...OWN_PROTOS.map((p) => path.join(protoOut, p)), ...ERROR_PROTOS.map((p) => path.join(protoOut, p))],
    protoOut,
  );
  writeFileSync(
    path.join(out, "README.md"),
    [
      "# iac-code contracts",
      "",
      "- `schemas/`: JSON Schemas (draft 2020-12), OpenAPI 3.1 documents (`schemas/openapi/`), the error",
      "  catalogues (`schemas/errors/catalogue/`) and labelled examples (`schemas/examples/`).",
      "- `generated/jsonschema/a2a-protojson.json`: the A2A ProtoJSON wire form, derived from the proto.",
      "- `proto/`: `lf/a2a/v1/a2a.proto` (A2A 1.0), the iac-code gRPC JSON-RPC envelope, and every",
      "  google/* proto they import. `protoc -I proto ...` needs nothing else.",
      "",
      "Examples:",
      "",
      "    mkdir -p out && protoc -I proto --python_out=out --pyi_out=out proto/lf/a2a/v1/a2a.proto",
      "    quicktype --src-lang schema --lang go -o agui.go schemas/agui/run-agent-input.json",
      "",
    ].join("\n"),
  );
  return [...OWN_PROTOS, ...ERROR_PROTOS, ...imports];
}
