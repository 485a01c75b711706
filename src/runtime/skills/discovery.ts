// Where skills come from, and which one wins when two share a name. The
// reference loads <config-dir>/skills/, then the workspace's skills/ and
// .iac-code/skills/ from the git root down to the cwd, then the skills bundled
// with iac-code, a later place replacing an earlier one's skill of the same
// name: the bundled skills take precedence (a workspace cannot replace the
// playbook or a pipeline step's skill), then the nearest workspace directory
// (in it .iac-code/skills/ over skills/), then the config dir. Without a git
// root the workspace is the cwd alone.
// A skill is a directory <place>/<dir>/SKILL.md. Discovery runs at every
// turn but reads nothing unchanged: directory listings are kept while the
// directory's stat is the same, SKILL.md texts come from the file cache
// (stat-based), parses are kept while the text is the same, and the whole
// catalog of a (config dir, cwd) is trusted for a second. A SKILL.md that
// does not parse is logged once (per change) with its path and field, and
// skipped.
import { readdirSync, statSync, type Dirent } from "node:fs";
import path from "node:path";
import type { Logger } from "pino";
import { ConfigError } from "../errors.js";
import { readFileIfChanged } from "../file-cache.js";
import { parseSkillFile, SKILL_FILE, type Skill, type SkillParse, type SkillSource } from "./skill-file.js";

export const BUNDLED_SKILLS_DIR = path.join(import.meta.dirname, "bundled");

/** The skills of a turn, by name, in precedence order (the winner of each name only). */
export type SkillCatalog = ReadonlyMap<string, Skill>;

export interface SkillPlace {
  dir: string;
  source: SkillSource;
}

/** How long a stat (and a whole catalog) is trusted; the same as the file cache's. */
const RECHECK_MS = 1000;
const MAX_CACHED = 500;

function remember<K, V>(map: Map<K, V>, key: K, value: V): V {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_CACHED) map.delete(map.keys().next().value as K);
  return value;
}

const gitRoots = new Map<string, { root: string | undefined; at: number }>();

/** The nearest directory at or above `cwd` holding `.git` (a directory, or a worktree's file). */
export function gitRootOf(cwd: string): string | undefined {
  const known = gitRoots.get(cwd);
  if (known && Date.now() - known.at < RECHECK_MS) return known.root;
  let root: string | undefined;
  for (let dir = cwd; ; dir = path.dirname(dir)) {
    if (statSync(path.join(dir, ".git"), { throwIfNoEntry: false })) {
      root = dir;
      break;
    }
    if (path.dirname(dir) === dir) break;
  }
  remember(gitRoots, cwd, { root, at: Date.now() });
  return root;
}

/** The places of a workspace, in precedence order (the first place holding a name wins). */
export function skillPlaces(configDir: string, cwd: string): SkillPlace[] {
  const places: SkillPlace[] = [{ dir: BUNDLED_SKILLS_DIR, source: "bundled" }];
  const root = gitRootOf(cwd);
  for (let dir = cwd; ; dir = path.dirname(dir)) {
    places.push({ dir: path.join(dir, ".iac-code", "skills"), source: "workspace" });
    places.push({ dir: path.join(dir, "skills"), source: "workspace" });
    if (root === undefined || dir === root || path.dirname(dir) === dir) break;
  }
  places.push({ dir: path.join(configDir, "skills"), source: "config" });
  return places;
}

const listings = new Map<string, { key: string; names: string[]; at: number }>();

/** The sub-directories of a place (sorted), listed again only when the place's stat changed. */
function skillDirs(dir: string): string[] {
  const known = listings.get(dir);
  const now = Date.now();
  if (known && now - known.at < RECHECK_MS) return known.names;
  const stats = statSync(dir, { throwIfNoEntry: false });
  const key = stats?.isDirectory() ? `${stats.ino}:${stats.mtimeMs}` : "";
  if (known && known.key === key) {
    known.at = now;
    return known.names;
  }
  let names: string[] = [];
  if (key !== "") {
    try {
      names = readdirSync(dir, { withFileTypes: true })
        .filter((e: Dirent) => (e.isDirectory() || e.isSymbolicLink()) && !e.name.startsWith("."))
        .map((e) => e.name)
        .sort();
    } catch {
      names = [];
    }
  }
  return remember(listings, dir, { key, names, at: now }).names;
}

const parses = new Map<string, { text: string; parse: SkillParse }>();

/** How a refused SKILL.md is reported (once per change of the file). */
type Refusal = (message: string, fields: { skillFile: string; field: string }) => void;

/** The skill of one SKILL.md, or undefined (missing, or refused). */
function skillAt(file: string, source: SkillSource, refused: Refusal): Skill | undefined {
  const text = readFileIfChanged(file);
  if (text === undefined) return undefined;
  let known = parses.get(file);
  if (!known || known.text !== text) {
    known = remember(parses, file, { text, parse: parseSkillFile(text) });
    if (!known.parse.ok) {
      refused(`Skill skipped: ${file}: ${known.parse.field} ${known.parse.message}.`, {
        skillFile: file,
        field: known.parse.field,
      });
    }
  }
  return known.parse.ok ? { ...known.parse.skill, file, source } : undefined;
}

function discover(configDir: string, cwd: string, logger: Logger): SkillCatalog {
  const catalog = new Map<string, Skill>();
  for (const place of skillPlaces(configDir, cwd)) {
    for (const name of skillDirs(place.dir)) {
      const skill = skillAt(path.join(place.dir, name, SKILL_FILE), place.source, (message, fields) =>
        logger.warn(fields, message),
      );
      if (!skill) continue;
      const winner = catalog.get(skill.name);
      if (winner) {
        logger.debug({ skill: skill.name, kept: winner.file, shadowed: skill.file }, "skill shadowed");
        continue;
      }
      catalog.set(skill.name, skill);
    }
  }
  return catalog;
}

const catalogs = new Map<string, { catalog: SkillCatalog; at: number }>();

/** The skills a turn in `cwd` sees (see the top of this file for the order). */
export function discoverSkills(args: { configDir: string; cwd: string; logger: Logger }): SkillCatalog {
  const key = `${args.configDir}\0${args.cwd}`;
  const known = catalogs.get(key);
  if (known && Date.now() - known.at < RECHECK_MS) return known.catalog;
  return remember(catalogs, key, { catalog: discover(args.configDir, args.cwd, args.logger), at: Date.now() })
    .catalog;
}

/**
 * The skills that ship with iac-code, for checks that must not depend on a
 * workspace; a bundled SKILL.md that does not parse is a packaging error.
 */
export function bundledSkills(): SkillCatalog {
  const catalog = new Map<string, Skill>();
  const refused = (message: string): never => {
    throw new ConfigError(message);
  };
  for (const name of skillDirs(BUNDLED_SKILLS_DIR)) {
    const skill = skillAt(path.join(BUNDLED_SKILLS_DIR, name, SKILL_FILE), "bundled", refused);
    if (skill && !catalog.has(skill.name)) catalog.set(skill.name, skill);
  }
  return catalog;
}
