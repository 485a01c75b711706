// What the candidate selection step shows of a candidate: its architecture
// diagram (diagram_shown: the Mermaid source as text, since the page draws
// nothing from another origin, and the template it was drawn from) and its
// detail (candidate_detail_shown: summary, cost items, monthly total).
import { h } from "./dom.js";
import { codeBlock, type CodeLanguage } from "./highlight.js";
import { tr } from "./i18n.js";
import { num, obj, objects, str, type Json } from "./json.js";

/** ROS templates are YAML or JSON. */
const templateLanguage = (text: string): CodeLanguage => (/^\s*[{[]/.test(text) ? "json" : "yaml");

export function diagramBlock(data: Json): HTMLElement {
  const name = str(data.candidateName);
  const stage = str(data.diagramStage);
  const template = str(data.templateContent);
  return h(
    "details",
    { class: "diagram", open: true },
    h("summary", {}, tr("span", "diagramOf", { name }), stage ? ` (${stage})` : ""),
    codeBlock(str(data.mermaidSource), "text"),
    template
      ? h(
          "details",
          { class: "diagram-template" },
          tr("summary", "templateSource"),
          codeBlock(template, templateLanguage(template)),
        )
      : null,
  );
}

export function detailBlock(data: Json): HTMLElement {
  const detail = obj(data.detail);
  const currency = str(detail.currency);
  const money = (v: unknown) => {
    const n = num(v);
    return n === undefined ? "" : `${n}${currency ? ` ${currency}` : ""}`;
  };
  const items = objects(detail.costItems);
  const total = money(detail.totalMonthlyCost);
  return h(
    "section",
    { class: "candidate-detail" },
    h("h5", {}, tr("span", "detailOf", { name: str(detail.candidateName) })),
    str(detail.summary) ? h("p", { class: "description" }, str(detail.summary)) : null,
    items.length
      ? h(
          "table",
          { class: "cost-items" },
          tr("caption", "costItems"),
          h(
            "tbody",
            {},
            ...items.map((item) =>
              h(
                "tr",
                {},
                h(
                  "td",
                  {},
                  str(item.name),
                  str(item.spec) ? h("span", { class: "details" }, ` ${str(item.spec)}`) : null,
                ),
                h("td", { class: "num" }, money(item.monthlyCost)),
              ),
            ),
          ),
        )
      : null,
    total
      ? h("p", { class: "detail-total" }, tr("span", "monthlyTotal"), ": ", h("strong", {}, total))
      : null,
  );
}
