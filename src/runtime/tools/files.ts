// Workspace file tools: read_file, write_file, edit_file, list_files, glob, grep.
import { readFile, readdir, lstat, stat } from "node:fs/promises";
import path from "node:path";
import { t, type Language } from "../../i18n/index.js";
import { ToolError } from "../errors.js";
import { writeFileAtomic, ensureDir } from "../fs-util.js";
import type { ArtifactPayload } from "../seam.js";
import { displayPath, readOnlyDescription, readOnlyPolicy } from "./describe.js";
import { globToRegExp, walkFiles } from "./glob.js";
import type { AnyTool, Tool, ToolContext, ToolDescription, ToolResult } from "./types.js";
import type { Workspace } from "./workspace.js";

const MAX_READ_BYTES = 10 * 1024 * 1024;
const MAX_READ_OUTPUT_CHARS = 100_000;
const MAX_ARTIFACT_BYTES = 1024 * 1024;
const MAX_LIST_ENTRIES = 1000;
const MAX_GLOB_RESULTS = 500;
const MAX_GREP_FILE_BYTES = 2 * 1024 * 1024;

const TEMPLATE_MEDIA_TYPES: Record<string, string> = {
  ".yaml": "application/yaml",
  ".yml": "application/yaml",
  ".json": "application/json",
  ".tf": "text/plain",
  ".tfvars": "text/plain",
  ".hcl": "text/plain",
};

/** A template-like text file written by a tool becomes an artifact the surfaces announce. */
export function templateArtifact(file: string, content: string): ArtifactPayload | undefined {
  const mediaType = TEMPLATE_MEDIA_TYPES[path.extname(file).toLowerCase()];
  if (!mediaType || Buffer.byteLength(content) > MAX_ARTIFACT_BYTES) return undefined;
  return { filename: path.basename(file), mediaType, content };
}

function isBinary(buffer: Buffer): boolean {
  return buffer.subarray(0, 8192).includes(0);
}

function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

async function readTextFile(absolute: string, rel: string): Promise<string> {
  const info = await stat(absolute);
  if (info.isDirectory()) throw new ToolError(`${rel} is a directory; use list_files.`);
  if (info.size > MAX_READ_BYTES) throw new ToolError(`${rel} is larger than ${MAX_READ_BYTES} bytes.`);
  const buffer = await readFile(absolute);
  if (isBinary(buffer)) throw new ToolError(`${rel} is a binary file (${buffer.length} bytes).`);
  return buffer.toString("utf8");
}

interface ReadFileInput {
  path: string;
  offset?: number;
  limit?: number;
}

export const readFileTool: Tool<ReadFileInput> = {
  name: "read_file",
  description:
    "Read a UTF-8 text file of the workspace. Optional offset (1-based first line) and limit (number of lines) select a range.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["path"],
    properties: {
      path: { type: "string", minLength: 1, description: "File path, relative to the workspace." },
      offset: { type: "integer", minimum: 1, description: "First line to read (1-based)." },
      limit: { type: "integer", minimum: 1, description: "Number of lines to read." },
    },
  },
  ...readOnlyPolicy,
  ruleContent: (input) => input.path,
  describe: (input, lang) => readOnlyDescription("read_file", lang, displayPath(input.path)),
  async run(input, ctx) {
    const absolute = await ctx.workspace.resolveExisting(input.path);
    const rel = ctx.workspace.relative(absolute);
    const lines = splitLines(await readTextFile(absolute, rel));
    const start = (input.offset ?? 1) - 1;
    const end = input.limit !== undefined ? Math.min(lines.length, start + input.limit) : lines.length;
    if (start >= lines.length && lines.length > 0) {
      throw new ToolError(`${rel} has ${lines.length} lines; offset ${input.offset} is past the end.`);
    }
    let text = lines.slice(start, end).join("\n");
    let truncated = false;
    if (text.length > MAX_READ_OUTPUT_CHARS) {
      text = text.slice(0, MAX_READ_OUTPUT_CHARS);
      truncated = true;
    }
    const note = truncated
      ? `\n\n[Output cut at ${MAX_READ_OUTPUT_CHARS} characters; read a smaller range with offset and limit.]`
      : "";
    return {
      content: text + note,
      data: { path: rel, startLine: start + 1, endLine: end, totalLines: lines.length, truncated },
    };
  },
};

function ruleRelative(input: unknown, workspace: Workspace): string | undefined {
  if (typeof input !== "string" || input.length === 0) return undefined;
  const absolute = path.isAbsolute(input) ? path.resolve(input) : path.resolve(workspace.cwd, input);
  const rel = path.relative(workspace.cwd, absolute);
  if (rel.startsWith("..") || path.isAbsolute(rel)) return undefined;
  return rel.split(path.sep).join("/") || ".";
}

/**
 * What write_file and edit_file share: file edits inside the workspace (asked
 * unless a rule or the accept_edits mode allows them), matched by rules on
 * their workspace-relative path, described with their own texts.
 */
function fileEdit(texts: "writeFile" | "editFile") {
  return {
    supportsBlanketAllow: true,
    isFileEdit: true,
    isReadOnly: () => false,
    isConcurrencySafe: () => false,
    ruleContent: (input: { path: string }, workspace: Workspace) => ruleRelative(input.path, workspace),
    describe: (input: { path: string }, lang: Language, workspace: Workspace): ToolDescription => {
      const target = ruleRelative(input.path, workspace) ?? displayPath(input.path);
      return {
        title: t(lang, `runtime.tool.${texts}.title`, { target }),
        purpose: t(lang, `runtime.tool.${texts}.purpose`),
        effect: "file_change",
        target,
      };
    },
  };
}

interface WriteFileInput {
  path: string;
  content: string;
}

export const writeFileTool: Tool<WriteFileInput> = {
  name: "write_file",
  description:
    "Create or overwrite a text file in the workspace with the given content. Parent directories are created.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["path", "content"],
    properties: {
      path: { type: "string", minLength: 1, description: "File path, relative to the workspace." },
      content: { type: "string", description: "The complete new file content." },
    },
  },
  ...fileEdit("writeFile"),
  rerunnable: true,
  precheck: async (input, workspace) => {
    await workspace.resolveForWrite(input.path);
  },
  async run(input, ctx) {
    const absolute = await ctx.workspace.resolveForWrite(input.path);
    const rel = ctx.workspace.relative(absolute);
    let created = true;
    let mode: number | undefined;
    try {
      const info = await stat(absolute);
      if (info.isDirectory()) throw new ToolError(`${rel} is a directory.`);
      created = false;
      mode = info.mode & 0o777;
    } catch (error) {
      if (error instanceof ToolError) throw error;
    }
    await ensureDir(path.dirname(absolute), 0o755);
    await writeFileAtomic(absolute, input.content, { signal: ctx.signal, mode });
    const bytes = Buffer.byteLength(input.content);
    const artifact = templateArtifact(rel, input.content);
    return {
      content: `${created ? "Created" : "Overwrote"} ${rel} (${bytes} bytes).`,
      data: { path: rel, bytes, created },
      ...(artifact ? { artifact } : {}),
    };
  },
};

interface EditFileInput {
  path: string;
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) count++;
  return count;
}

export const editFileTool: Tool<EditFileInput> = {
  name: "edit_file",
  description:
    "Replace an exact string in a workspace file. old_string must match exactly once unless replace_all is true.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["path", "old_string", "new_string"],
    properties: {
      path: { type: "string", minLength: 1 },
      old_string: { type: "string", minLength: 1, description: "Exact text to replace." },
      new_string: { type: "string", description: "Replacement text." },
      replace_all: { type: "boolean", description: "Replace every occurrence." },
    },
  },
  ...fileEdit("editFile"),
  precheck: async (input, workspace) => {
    await workspace.resolveExisting(input.path);
  },
  async run(input, ctx) {
    if (input.old_string === input.new_string)
      throw new ToolError("old_string and new_string are identical.");
    const absolute = await ctx.workspace.resolveExisting(input.path);
    const rel = ctx.workspace.relative(absolute);
    const before = await readTextFile(absolute, rel);
    const count = countOccurrences(before, input.old_string);
    if (count === 0) throw new ToolError(`old_string was not found in ${rel}.`);
    if (count > 1 && !input.replace_all) {
      throw new ToolError(
        `old_string matches ${count} times in ${rel}; add surrounding context to make it unique, or set replace_all.`,
      );
    }
    const after = input.replace_all
      ? before.split(input.old_string).join(input.new_string)
      : before.replace(input.old_string, () => input.new_string);
    const mode = (await stat(absolute)).mode & 0o777;
    await writeFileAtomic(absolute, after, { signal: ctx.signal, mode });
    const artifact = templateArtifact(rel, after);
    return {
      content: `Edited ${rel}: ${input.replace_all ? count : 1} replacement(s).`,
      data: { path: rel, replacements: input.replace_all ? count : 1 },
      ...(artifact ? { artifact } : {}),
    };
  },
};

interface ListFilesInput {
  path?: string;
}

export const listFilesTool: Tool<ListFilesInput> = {
  name: "list_files",
  description: "List the entries of a workspace directory (directories end with /).",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      path: { type: "string", minLength: 1, description: "Directory, default the workspace root." },
    },
  },
  ...readOnlyPolicy,
  ruleContent: (input) => input.path ?? ".",
  describe: (input, lang) => readOnlyDescription("list_files", lang, displayPath(input.path ?? ".")),
  async run(input, ctx) {
    const absolute = await ctx.workspace.resolveExisting(input.path ?? ".");
    const rel = ctx.workspace.relative(absolute);
    if (!(await stat(absolute)).isDirectory()) throw new ToolError(`${rel} is not a directory.`);
    const names = (await readdir(absolute)).sort();
    const entries: string[] = [];
    for (const name of names.slice(0, MAX_LIST_ENTRIES)) {
      const info = await lstat(path.join(absolute, name)).catch(() => undefined);
      entries.push(info?.isDirectory() ? `${name}/` : name);
    }
    const more = names.length > MAX_LIST_ENTRIES ? `\n[${names.length - MAX_LIST_ENTRIES} more entries]` : "";
    return {
      content: entries.length > 0 ? entries.join("\n") + more : `(${rel} is empty)`,
      data: { path: rel, entries, total: names.length },
    };
  },
};

interface GlobInput {
  pattern: string;
  path?: string;
}

export const globTool: Tool<GlobInput> = {
  name: "glob",
  description:
    "Find workspace files whose path (relative to `path`, default the workspace root) matches a glob such as **/*.yaml. Newest first.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["pattern"],
    properties: {
      pattern: { type: "string", minLength: 1 },
      path: { type: "string", minLength: 1 },
    },
  },
  ...readOnlyPolicy,
  ruleContent: (input) => input.pattern,
  describe: (input, lang) => readOnlyDescription("glob", lang, displayPath(input.pattern)),
  async run(input, ctx) {
    const base = await ctx.workspace.resolveExisting(input.path ?? ".");
    const regex = globToRegExp(input.pattern);
    const files = (await walkFiles(base, 50_000, ctx.signal)).filter((f) => regex.test(f.relative));
    files.sort((a, b) => b.mtimeMs - a.mtimeMs || a.relative.localeCompare(b.relative));
    const shown = files.slice(0, MAX_GLOB_RESULTS).map((f) => ctx.workspace.relative(f.absolute));
    const more = files.length > shown.length ? `\n[${files.length - shown.length} more matches]` : "";
    return {
      content: shown.length > 0 ? shown.join("\n") + more : "No files matched.",
      data: { matches: shown, total: files.length },
    };
  },
};

interface GrepInput {
  pattern: string;
  path?: string;
  glob?: string;
  ignore_case?: boolean;
  max_results?: number;
}

export const grepTool: Tool<GrepInput> = {
  name: "grep",
  description:
    "Search workspace text files for a regular expression (JavaScript syntax). Optional path (file or directory) and glob filter (matched against the file name when it has no /).",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["pattern"],
    properties: {
      pattern: { type: "string", minLength: 1 },
      path: { type: "string", minLength: 1 },
      glob: { type: "string", minLength: 1 },
      ignore_case: { type: "boolean" },
      max_results: { type: "integer", minimum: 1, maximum: 2000 },
    },
  },
  ...readOnlyPolicy,
  ruleContent: (input) => input.pattern,
  describe: (input, lang) => readOnlyDescription("grep", lang, displayPath(input.pattern)),
  async run(input, ctx) {
    let regex: RegExp;
    try {
      regex = new RegExp(input.pattern, input.ignore_case ? "i" : "");
    } catch (error) {
      throw new ToolError(`Invalid regular expression: ${(error as Error).message}`);
    }
    const base = await ctx.workspace.resolveExisting(input.path ?? ".");
    const info = await stat(base);
    const files = info.isDirectory()
      ? await walkFiles(base, 50_000, ctx.signal)
      : [{ absolute: base, relative: path.basename(base), mtimeMs: info.mtimeMs, size: info.size }];
    const filter = input.glob ? globToRegExp(input.glob) : undefined;
    const max = input.max_results ?? 200;
    const hits: string[] = [];
    let total = 0;
    for (const file of files) {
      if (ctx.signal.aborted) break;
      if (filter && !filter.test(input.glob?.includes("/") ? file.relative : path.basename(file.relative)))
        continue;
      if (file.size > MAX_GREP_FILE_BYTES) continue;
      const buffer = await readFile(file.absolute).catch(() => undefined);
      if (!buffer || isBinary(buffer)) continue;
      const rel = ctx.workspace.relative(file.absolute);
      for (const [i, line] of splitLines(buffer.toString("utf8")).entries()) {
        if (!regex.test(line)) continue;
        total++;
        if (hits.length < max)
          hits.push(`${rel}:${i + 1}: ${line.length > 300 ? `${line.slice(0, 300)}…` : line}`);
      }
    }
    const more = total > hits.length ? `\n[${total - hits.length} more matches]` : "";
    return { content: hits.length > 0 ? hits.join("\n") + more : "No matches.", data: { matches: total } };
  },
};

export const fileTools: AnyTool[] = [
  readFileTool,
  writeFileTool,
  editFileTool,
  listFilesTool,
  globTool,
  grepTool,
];

export type { ToolContext, ToolResult };
