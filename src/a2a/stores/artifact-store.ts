// Stores artifact payloads produced by tools under <artifact-dir>/<id>/<name>
// and describes them the seed's way: a file:// URL plus mediaType, byteSize
// and sha256.
import { createHash, randomUUID } from "node:crypto";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { ArtifactPayload } from "../../runtime/seam.js";
import { ensureDir, writeFileAtomic } from "../../runtime/fs-util.js";
import { isStrictBase64 } from "../../server/base64.js";
import { portableFileName } from "../../server/file-names.js";

export interface StoredArtifact {
  artifactId: string;
  filename: string;
  mediaType: string;
  byteSize: number;
  sha256: string;
  /** file:// URL of the stored copy. */
  url: string;
}

export class ArtifactError extends Error {}

/** A bare, portable file name, or ArtifactError("Unsafe artifact filename"). */
export function sanitizeArtifactFilename(name: string): string {
  const portable = portableFileName(name);
  if (!portable) throw new ArtifactError("Unsafe artifact filename");
  return portable;
}

export interface ArtifactStore {
  save(payload: ArtifactPayload): Promise<StoredArtifact>;
}

export class FileArtifactStore implements ArtifactStore {
  constructor(private readonly dir: string) {}

  async save(payload: ArtifactPayload): Promise<StoredArtifact> {
    const filename = sanitizeArtifactFilename(payload.filename);
    let bytes: Buffer;
    if (typeof payload.content === "string") bytes = Buffer.from(payload.content, "utf8");
    else if (typeof payload.base64 === "string" && isStrictBase64(payload.base64)) {
      bytes = Buffer.from(payload.base64, "base64");
    } else throw new ArtifactError("Invalid artifact payload");
    const artifactId = randomUUID();
    const file = path.join(this.dir, artifactId, filename);
    await ensureDir(path.dirname(file));
    await writeFileAtomic(file, bytes, { mode: 0o600 });
    return {
      artifactId,
      filename,
      mediaType: (payload.mediaType || "application/octet-stream").toLowerCase(),
      byteSize: bytes.byteLength,
      sha256: createHash("sha256").update(bytes).digest("hex"),
      url: pathToFileURL(file).href,
    };
  }
}
