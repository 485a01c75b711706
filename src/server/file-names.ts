// Portable file names for anything a client names and the server stores or
// forwards (artifacts, image attachments): a bare name, no control or
// reserved characters, no trailing dot or space, no Windows device name.
const RESERVED = /^(CON|PRN|AUX|NUL|COM[0-9¹²³]|LPT[0-9¹²³])(\..*)?$/i;

/**
 * The portable form of a file name, or undefined when nothing safe is left
 * (POSIX paths, empty names, `.` and `..`). Windows paths are reduced to
 * their last segment; unsafe characters become `_`; device names get a `_`.
 */
export function portableFileName(name: string): string | undefined {
  if (name.includes("/")) return undefined;
  let base = (name.split("\\").pop() ?? "").replace(/^[A-Za-z]:/, "");
  // eslint-disable-next-line no-control-regex -- control characters are exactly what must go
  base = base.replace(/[\u0000-\u001f\u007f<>:"/\\|?*]/g, "_").replace(/[ .]+$/, "");
  if (base === "" || base === "." || base === "..") return undefined;
  return RESERVED.test(base) ? `_${base}` : base;
}

/** True when the name is already portable as given and at most 255 UTF-8 bytes. */
export function isPortableFileName(name: unknown): name is string {
  return (
    typeof name === "string" && Buffer.byteLength(name, "utf8") <= 255 && portableFileName(name) === name
  );
}
