// The push secret keyring: the notification token and callback credentials are
// sealed with AES-256-GCM (node:crypto) before they reach the database or a
// queue, and opened only to compute the headers of a delivery. The keyring is
// <persistence-dir>/push_keys.json (0600, created on first use; rotation adds
// a key and keeps the old ones, so what they sealed stays readable), or the
// JSON in IAC_CODE_A2A_PUSH_KEYRING (never written, not rotatable; every
// server of one Redis queue shares it to open each other's jobs).
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";

export const KEYRING_FILE = "push_keys.json";
export const KEYRING_ENV = "IAC_CODE_A2A_PUSH_KEYRING";

const ALGORITHM = "aes-256-gcm";
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Bound to every ciphertext: a sealed value of another purpose does not open here. */
const AAD = Buffer.from("iac-code:a2a:push:v1");

export class KeyringError extends Error {
  override readonly name = "KeyringError";
}

interface KeyEntry {
  id: string;
  /** 32 bytes, base64. */
  key: string;
  createdAt?: string;
}

interface KeyringJson {
  activeKeyId: string;
  keys: KeyEntry[];
}

/** What a sealed value looks like once serialised: the key that sealed it and iv|tag|ciphertext. */
interface Envelope {
  keyId: string;
  ciphertext: string;
}

function parseKeyring(text: string): KeyringJson {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new KeyringError("A2A push secret keyring is malformed");
  }
  const json = data as Partial<KeyringJson> | null;
  const keys = json?.keys;
  if (
    !json ||
    typeof json.activeKeyId !== "string" ||
    !Array.isArray(keys) ||
    !keys.every(
      (k: Partial<KeyEntry> | null) =>
        typeof k?.id === "string" &&
        typeof k.key === "string" &&
        Buffer.from(k.key, "base64").length === 32 &&
        (k.createdAt === undefined || typeof k.createdAt === "string"),
    )
  ) {
    throw new KeyringError("A2A push secret keyring is malformed");
  }
  if (!keys.some((k) => k.id === json.activeKeyId))
    throw new KeyringError("A2A push secret keyring does not contain its active key");
  return { activeKeyId: json.activeKeyId, keys };
}

function newKey(): KeyEntry {
  const id = `push-${Math.floor(Date.now() / 1000)}-${randomBytes(6).toString("hex")}`;
  return { id, key: randomBytes(32).toString("base64"), createdAt: new Date().toISOString() };
}

export class Keyring {
  private constructor(
    private json: KeyringJson,
    /** The file it is kept in; undefined when it comes from the environment. */
    private readonly file: string | undefined,
  ) {}

  /** The environment's keyring if set, else the persistence dir's file (created on first use). */
  static load(persistenceDir: string, env: NodeJS.ProcessEnv = process.env): Keyring {
    const fromEnv = env[KEYRING_ENV];
    if (fromEnv !== undefined && fromEnv.trim() !== "") return new Keyring(parseKeyring(fromEnv), undefined);
    const file = path.join(persistenceDir, KEYRING_FILE);
    if (existsSync(file)) return new Keyring(parseKeyring(readFileSync(file, "utf8")), file);
    const first = newKey();
    const keyring = new Keyring({ activeKeyId: first.id, keys: [first] }, file);
    keyring.write();
    return keyring;
  }

  get environmentManaged(): boolean {
    return this.file === undefined;
  }

  get activeKeyId(): string {
    return this.json.activeKeyId;
  }

  /** Adds a new active key; the old ones stay, so what they sealed still opens. */
  rotate(): string {
    if (!this.file)
      throw new KeyringError("A2A push secret keyring is environment-managed and cannot be rotated locally");
    const key = newKey();
    this.json = {
      activeKeyId: key.id,
      keys: [...this.json.keys, key].sort((a, b) => a.id.localeCompare(b.id)),
    };
    this.write();
    return key.id;
  }

  seal(plaintext: string): string {
    const entry = this.entry(this.json.activeKeyId);
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, Buffer.from(entry.key, "base64"), iv);
    cipher.setAAD(AAD);
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    const envelope: Envelope = {
      keyId: entry.id,
      ciphertext: Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64"),
    };
    return JSON.stringify(envelope);
  }

  open(sealed: string): string {
    let envelope: Partial<Envelope>;
    try {
      envelope = JSON.parse(sealed) as Partial<Envelope>;
    } catch {
      throw new KeyringError("A2A push secret ciphertext could not be decrypted");
    }
    if (typeof envelope.keyId !== "string" || typeof envelope.ciphertext !== "string")
      throw new KeyringError("A2A push secret ciphertext could not be decrypted");
    const entry = this.entry(envelope.keyId);
    const raw = Buffer.from(envelope.ciphertext, "base64");
    try {
      const decipher = createDecipheriv(
        ALGORITHM,
        Buffer.from(entry.key, "base64"),
        raw.subarray(0, IV_BYTES),
      );
      decipher.setAAD(AAD);
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
        "utf8",
      );
    } catch {
      throw new KeyringError("A2A push secret ciphertext could not be decrypted");
    }
  }

  private entry(keyId: string): KeyEntry {
    const entry = this.json.keys.find((k) => k.id === keyId);
    if (!entry) throw new KeyringError(`A2A push secret encryption key is not available: ${keyId}`);
    return entry;
  }

  /** Atomic replace, 0600 from the first byte. */
  private write(): void {
    const file = this.file!;
    const temp = `${file}.${randomBytes(4).toString("hex")}.tmp`;
    writeFileSync(temp, `${JSON.stringify(this.json, null, 2)}\n`, { mode: 0o600 });
    chmodSync(temp, 0o600);
    renameSync(temp, file);
  }
}
