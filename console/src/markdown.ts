// The model's Markdown (assistant text, reasoning) as DOM nodes. marked's
// lexer (GFM: tables, task lists, strikethrough, autolinks; a single newline
// is a line break, as models write for chat) turns the text
// into tokens, and this module builds elements from them: never HTML strings,
// never innerHTML. Raw HTML in the text stays text (shown as typed, never
// markup); links open in a new tab and only when they are http: or https:
// (anything else, javascript: or data: included, is shown as its words);
// images become such links (the page loads nothing the model names); code
// blocks are highlighted like the workspace's files. Rendering is a pure
// function of the whole text, so a streamed message is rendered again as its
// deltas arrive (an unfinished fence or table simply renders as far as it got).
import { Lexer, type Token, type Tokens } from "marked";
import { h } from "./dom.js";
import { codeBlock, type CodeLanguage } from "./highlight.js";

const LANGUAGES: Record<string, CodeLanguage> = {
  yaml: "yaml",
  yml: "yaml",
  ros: "yaml",
  json: "json",
  jsonc: "json",
  hcl: "hcl",
  tf: "hcl",
  terraform: "hcl",
};

/** The highlighter language of a fence's info string (its first word). */
function fenceLanguage(info: string | undefined): CodeLanguage {
  const word = (info ?? "").trim().split(/\s+/)[0].toLowerCase();
  return LANGUAGES[word] ?? "text";
}

/** An absolute http: or https: URL, else undefined (relative, javascript:, data:, mailto:...). */
export function safeHref(href: string): string | undefined {
  try {
    const url = new URL(href);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined;
  } catch {
    return undefined;
  }
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };

/** The few character references a model writes, decoded as text (an unknown one stays as typed). */
function decodeEntities(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]+);/gi, (all, ref: string) => {
    if (ref[0] !== "#") return ENTITIES[ref.toLowerCase()] ?? all;
    const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
    return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff)
      ? String.fromCodePoint(code)
      : all;
  });
}

function link(href: string, children: Node[], title?: string | null): Node {
  const safe = safeHref(href);
  if (!safe) return h("span", { class: "md-link-blocked" }, ...children);
  const a = h("a", { href: safe, target: "_blank", rel: "noopener noreferrer" }, ...children);
  if (title) a.title = title;
  return a;
}

function inline(tokens: readonly Token[] | undefined): Node[] {
  const out: Node[] = [];
  for (const token of tokens ?? []) out.push(inlineToken(token));
  return out;
}

function inlineToken(token: Token): Node {
  switch (token.type) {
    case "text": {
      const t = token as Tokens.Text;
      return t.tokens?.length ? fragment(inline(t.tokens)) : document.createTextNode(decodeEntities(t.text));
    }
    case "escape":
      return document.createTextNode((token as Tokens.Escape).text);
    case "strong":
      return h("strong", {}, ...inline((token as Tokens.Strong).tokens));
    case "em":
      return h("em", {}, ...inline((token as Tokens.Em).tokens));
    case "del":
      return h("del", {}, ...inline((token as Tokens.Del).tokens));
    case "codespan":
      return h("code", {}, (token as Tokens.Codespan).text);
    case "br":
      return h("br");
    case "link": {
      const t = token as Tokens.Link;
      return link(t.href, inline(t.tokens), t.title);
    }
    case "image": {
      // Never an <img>: the model's URLs are not fetched; the alt text links to the image.
      const t = token as Tokens.Image;
      return link(t.href, [document.createTextNode(t.text || t.href)], t.title);
    }
    case "checkbox": {
      const box = h("input", { type: "checkbox", disabled: true });
      box.checked = (token as Tokens.Checkbox).checked;
      return box;
    }
    default:
      // html (raw tags) and anything newer than this module: the text as typed.
      return document.createTextNode(token.raw);
  }
}

function fragment(nodes: Node[]): DocumentFragment {
  const f = document.createDocumentFragment();
  f.append(...nodes);
  return f;
}

function alignClass(align: "center" | "left" | "right" | null): string | undefined {
  return align ? `align-${align}` : undefined;
}

function table(t: Tokens.Table): HTMLElement {
  const head = h(
    "tr",
    {},
    ...t.header.map((cell) => h("th", { class: alignClass(cell.align) }, ...inline(cell.tokens))),
  );
  const rows = t.rows.map((row) =>
    h("tr", {}, ...row.map((cell) => h("td", { class: alignClass(cell.align) }, ...inline(cell.tokens)))),
  );
  return h("div", { class: "md-table" }, h("table", {}, h("thead", {}, head), h("tbody", {}, ...rows)));
}

function list(t: Tokens.List): HTMLElement {
  const items = t.items.map((item) =>
    h("li", { class: item.task ? "task" : undefined }, ...blocks(item.tokens)),
  );
  if (!t.ordered) return h("ul", {}, ...items);
  const start = typeof t.start === "number" && t.start !== 1 ? t.start : undefined;
  return h("ol", { start }, ...items);
}

function block(token: Token): Node | undefined {
  switch (token.type) {
    case "space":
    case "def":
      return undefined;
    case "paragraph":
      return h("p", {}, ...inline((token as Tokens.Paragraph).tokens));
    case "text": {
      // Text of a tight list item: inline content, no paragraph.
      const t = token as Tokens.Text;
      return t.tokens?.length ? fragment(inline(t.tokens)) : document.createTextNode(decodeEntities(t.text));
    }
    case "heading": {
      const t = token as Tokens.Heading;
      const level = Math.min(6, Math.max(1, t.depth)) as 1 | 2 | 3 | 4 | 5 | 6;
      return h(`h${level}`, { class: "md-heading" }, ...inline(t.tokens));
    }
    case "code": {
      const t = token as Tokens.Code;
      const pre = codeBlock(t.text, fenceLanguage(t.lang));
      pre.classList.add("md-code");
      return pre;
    }
    case "blockquote":
      return h("blockquote", {}, ...blocks((token as Tokens.Blockquote).tokens));
    case "list":
      return list(token as Tokens.List);
    case "table":
      return table(token as Tokens.Table);
    case "hr":
      return h("hr");
    case "checkbox":
      // A task list item's box comes first among the item's block tokens.
      return inlineToken(token);
    case "html":
      // A raw HTML block is shown as the text it is.
      return h("p", { class: "md-raw" }, (token as Tokens.HTML).text);
    default:
      return h("p", {}, token.raw);
  }
}

function blocks(tokens: readonly Token[]): Node[] {
  const out: Node[] = [];
  for (const token of tokens) {
    const node = block(token);
    if (node) out.push(node);
  }
  return out;
}

/** The nodes of `markdown` (no HTML parsing anywhere: raw HTML comes out as text). */
export function markdownNodes(markdown: string): Node[] {
  return blocks(new Lexer({ gfm: true, breaks: true }).lex(markdown));
}

/** Renders `markdown` into `el`, replacing what it held. */
export function renderMarkdown(el: HTMLElement, markdown: string): void {
  el.replaceChildren(...markdownNodes(markdown));
}
