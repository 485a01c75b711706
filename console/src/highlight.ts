// The syntax highlighter of generated files and tool payloads: the tokens of
// tokenize.ts become <span class="tok-…"> built with text nodes (never markup).
import { tokenize, type CodeLanguage } from "./tokenize.js";

export { languageOf, type CodeLanguage } from "./tokenize.js";

/** A <pre><code> block of `code`, highlighted. */
export function codeBlock(code: string, lang: CodeLanguage): HTMLPreElement {
  const pre = document.createElement("pre");
  pre.className = `code lang-${lang}`;
  const inner = document.createElement("code");
  for (const [text, cls] of tokenize(code, lang)) {
    if (cls === null) inner.appendChild(document.createTextNode(text));
    else {
      const span = document.createElement("span");
      span.className = `tok-${cls}`;
      span.textContent = text;
      inner.appendChild(span);
    }
  }
  pre.appendChild(inner);
  return pre;
}
