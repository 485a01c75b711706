// The tokenizer of the console's highlighter: a sticky-regex scanner per
// language for the files the agent generates, YAML (ROS templates), JSON and
// HCL (Terraform). Pure (no DOM), so the tests run it in Node.

export type CodeLanguage = "yaml" | "json" | "hcl" | "text";

type Rule = [RegExp, string | null];

const JSON_RULES: Rule[] = [
  [/"(?:[^"\\\n]|\\.)*"(?=\s*:)/y, "key"],
  [/"(?:[^"\\\n]|\\.)*"/y, "string"],
  [/-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y, "number"],
  [/(?:true|false|null)\b/y, "literal"],
  [/[{}[\],:]/y, "punct"],
  [/\s+/y, null],
];

const YAML_RULES: Rule[] = [
  [/#.*/y, "comment"],
  [/"(?:[^"\\\n]|\\.)*"|'(?:[^'\n]|'')*'/y, "string"],
  [/[A-Za-z_$][\w.\-/$]*(?=[ \t]*:(?:\s|$))/y, "key"],
  [/![\w!:.]+/y, "literal"],
  [/-?\d+(?:\.\d+)?(?![^\s,}\]])/y, "number"],
  [/(?:true|false|null|yes|no|~)(?![^\s,}\]])/y, "literal"],
  [/[-:{}[\],|>]/y, "punct"],
  [/[^\s#:{}[\],]+/y, null],
  [/\s+/y, null],
];

const HCL_RULES: Rule[] = [
  [/#.*|\/\/.*/y, "comment"],
  [/\/\*[\s\S]*?\*\//y, "comment"],
  [/<<-?(\w+)\n[\s\S]*?\n\s*\1/y, "string"],
  [/"(?:[^"\\\n]|\\.)*"/y, "string"],
  [
    /(?:resource|data|variable|output|locals|module|provider|terraform|true|false|null|for|in|if)\b/y,
    "keyword",
  ],
  [/[A-Za-z_][\w-]*(?=\s*=(?!=))/y, "key"],
  [/-?\d+(?:\.\d+)?\b/y, "number"],
  [/[{}[\](),=.:?]/y, "punct"],
  [/[A-Za-z_][\w-]*/y, null],
  [/\s+/y, null],
];

const RULES: Record<Exclude<CodeLanguage, "text">, Rule[]> = {
  yaml: YAML_RULES,
  json: JSON_RULES,
  hcl: HCL_RULES,
};

/** The tokens of `code`: [text, class or null], adjacent plain text merged. */
export function tokenize(code: string, lang: CodeLanguage): Array<[string, string | null]> {
  if (lang === "text") return [[code, null]];
  const rules = RULES[lang];
  const tokens: Array<[string, string | null]> = [];
  const push = (text: string, cls: string | null) => {
    const last = tokens.at(-1);
    if (cls === null && last && last[1] === null) last[0] += text;
    else tokens.push([text, cls]);
  };
  let pos = 0;
  while (pos < code.length) {
    let matched = false;
    for (const [re, cls] of rules) {
      re.lastIndex = pos;
      const m = re.exec(code);
      if (m && m[0].length > 0) {
        push(m[0], cls);
        pos += m[0].length;
        matched = true;
        break;
      }
    }
    if (!matched) push(code[pos++], null);
  }
  return tokens;
}

/** The language of a file, from its name, else from its first character. */
export function languageOf(name: string, code = ""): CodeLanguage {
  const lower = name.toLowerCase();
  if (/\.(ya?ml)$/.test(lower)) return "yaml";
  if (/\.json$/.test(lower)) return "json";
  if (/\.(tf|tfvars|hcl)$/.test(lower)) return "hcl";
  const first = code.trimStart()[0];
  return first === "{" || first === "[" ? "json" : "text";
}
