// "Did you mean …?" for a name that is not known: the closest known name by
// edit distance (a swap of two letters counts as one edit), if close enough
// to be a typo rather than another word.

/** Optimal string alignment distance between a and b, compared case-insensitively. */
function distance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const rows = Array.from({ length: s.length + 1 }, (_, i) => [i, ...Array<number>(t.length).fill(0)]);
  for (let j = 1; j <= t.length; j++) rows[0][j] = j;
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1])
        rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  }
  return rows[s.length][t.length];
}

/**
 * The known name closest to `name`, when it is within a typo's reach (by
 * default a third of its length, at least 2; names sharing a long prefix pass
 * the length of the part that differs).
 */
export function closest(
  name: string,
  known: Iterable<string>,
  typedLength = name.length,
): string | undefined {
  const reach = Math.max(2, Math.floor(typedLength / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = distance(name, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return bestDistance <= reach ? best : undefined;
}
