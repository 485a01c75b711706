// The command blocks of a Markdown document, for the test that runs them
// (test/e2e/doc-commands.test.ts). A command block is a fenced block tagged
// sh, bash, shell or console, or an untagged one (tag a listing `text`). Above
// its opening fence (blank lines between allowed) a block may carry `<!-- not-run: why -->` (it is
// not run; the reason is required); below its closing fence, any number
// of `<!-- expect: text -->` (the block's output, stdout and stderr, contains text) and one
// `<!-- exit: N ... -->` (the status it ends with; default 0).

export const COMMAND_LANGUAGES = new Set(["", "sh", "bash", "shell", "console"]);

export interface DocBlock {
  /** The document's path as given, and the 1-based line of the opening fence. */
  file: string;
  line: number;
  language: string;
  /** The block's text (a `console` block: its `$ ` lines without the prompt). */
  code: string;
  /** The reason it is not run, when marked. */
  notRun?: string;
  /** Fragments its output must contain. */
  expect: string[];
  exit: number;
}

const FENCE = /^(```+)\s*([\w-]*)\s*$/;
const NOT_RUN = /^<!--\s*not-run:\s*(.*?)\s*-->$/;
const EXPECT = /^<!--\s*expect:\s?(.*?)\s?-->$/;
const EXIT = /^<!--\s*exit:\s*(\d+)\b.*-->$/;

/** Every command block of the document, in order. Other fenced blocks are skipped. */
export function commandBlocks(text: string, file: string): DocBlock[] {
  const lines = text.split("\n");
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i].trimEnd() !== open[1]; i++) body.push(lines[i]);
    const language = open[2].toLowerCase();
    if (!COMMAND_LANGUAGES.has(language)) continue;
    let above = start - 1;
    while (above >= 0 && lines[above].trim() === "") above--;
    const before = lines[above]?.trim() ?? "";
    const notRun = NOT_RUN.exec(before)?.[1];
    const block: DocBlock = {
      file,
      line: start + 1,
      language,
      code: language === "console" ? consoleCommands(body) : body.join("\n"),
      expect: [],
      exit: 0,
      ...(notRun !== undefined ? { notRun } : {}),
    };
    for (let j = i + 1; j < lines.length; j++) {
      const after = lines[j].trim();
      if (after === "") continue;
      const fragment = EXPECT.exec(after);
      const exit = EXIT.exec(after);
      if (fragment) block.expect.push(fragment[1]);
      else if (exit) block.exit = Number(exit[1]);
      else break;
    }
    blocks.push(block);
  }
  return blocks;
}

/** The commands of a console transcript: `$ ` lines (and their `\` continuations). */
function consoleCommands(body: string[]): string {
  const out: string[] = [];
  let continued = false;
  for (const line of body) {
    if (line.startsWith("$ ")) out.push(line.slice(2));
    else if (continued) out.push(line);
    else continue;
    continued = line.endsWith("\\");
  }
  return out.join("\n");
}
