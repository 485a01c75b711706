// Strict standard base64 (padding required), checked without a backtracking
// regex so multi-MiB payloads cannot blow the stack.
export function isStrictBase64(value: string): boolean {
  if (value.length % 4 !== 0) return false;
  return /^[A-Za-z0-9+/]*={0,2}$/.test(value);
}
