// The form of a deployment_confirmation interrupt: what will be deployed where
// (candidate, operation, region, stack, monthly cost), a table of the template
// parameters it will use, and one button per option (its label is its
// accessible name). The option whose action is "adjust" unlocks the values
// (each input named by the parameter's label, else its name) and shows "Send
// changes"; confirming or adjusting sends {selectedId, parameter_overrides}
// with only the values the user changed. Masked values (secrets) stay masked.
import type { Interrupt } from "@ag-ui/client";
import { h } from "./dom.js";
import { t, tr, type MessageKey } from "./i18n.js";
import type { Respond } from "./interrupts.js";
import { obj, objects, str } from "./json.js";

interface ConfirmOption {
  id: string;
  title: string;
  action: string;
}

/** The options: the schema's ids and titles (standardOptions) with each raw option's action. */
function confirmOptions(meta: Record<string, unknown>): ConfirmOption[] {
  const standard = objects(meta.standardOptions);
  return objects(meta.options)
    .map((o, i) => ({
      id: str(standard[i]?.id) || str(o.id),
      title: str(standard[i]?.title) || str(o.label) || str(o.id),
      action: str(o.action),
    }))
    .filter((o) => o.id !== "");
}

const SUMMARY_ROWS: Array<[string, MessageKey]> = [
  ["candidateName", "summaryCandidate"],
  ["action", "summaryAction"],
  ["region", "summaryRegion"],
  ["stackName", "summaryStack"],
  ["template", "summaryTemplate"],
  ["totalMonthlyCost", "summaryCost"],
];

function summaryList(meta: Record<string, unknown>): HTMLDListElement | undefined {
  const summary = { action: meta.operation, ...obj(meta.deploymentSummary) };
  const rows = SUMMARY_ROWS.filter(([key]) => str(summary[key as keyof typeof summary]) !== "");
  if (!rows.length) return undefined;
  return h(
    "dl",
    { class: "deployment-summary" },
    ...rows.flatMap(([key, label]) => [
      tr("dt", label),
      h("dd", {}, str(summary[key as keyof typeof summary])),
    ]),
  );
}

interface ParameterField {
  name: string;
  original: string;
  input: HTMLInputElement;
}

/** A secret the runtime masked: its input hides what the user types instead. */
const MASK = /^\*+$/;

export function deploymentConfirmationForm(interrupt: Interrupt, answer: Respond): HTMLFormElement {
  const meta = obj(interrupt.metadata);
  const form = h("form", { class: "confirmation-form" });
  const summary = summaryList(meta);
  if (summary) form.append(summary);

  const fields: ParameterField[] = [];
  const parameters = objects(meta.displayParameters).filter((p) => str(p.name) !== "");
  if (parameters.length) {
    const body = h("tbody");
    for (const p of parameters) {
      const name = str(p.name);
      const label = str(p.label) || name;
      const original = str(p.value);
      const input = h("input", {
        type: MASK.test(original) ? "password" : "text",
        value: original,
        "aria-label": label,
        spellcheck: "false",
        autocomplete: "off",
      });
      input.readOnly = true;
      fields.push({ name, original, input });
      body.append(
        h(
          "tr",
          { "data-parameter": name },
          h("th", { scope: "row" }, label, label !== name ? h("code", { class: "param-name" }, name) : null),
          h("td", {}, input),
        ),
      );
    }
    form.append(
      h(
        "table",
        { class: "parameters" },
        tr("caption", "parameters"),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            tr("th", "parameterName", undefined, { scope: "col" }),
            tr("th", "parameterValue", undefined, { scope: "col" }),
          ),
        ),
        body,
      ),
    );
  }

  /** Only what the user changed: the runtime keeps every other value as shown. */
  const changed = (): Record<string, string> =>
    Object.fromEntries(
      fields.filter((f) => f.input.value !== f.original).map((f) => [f.name, f.input.value]),
    );
  const withChanges = (names: string[], title: string) =>
    names.length ? `${title} (${names.join(", ")})` : title;

  const options = confirmOptions(meta);
  const adjust = options.find((o) => o.action === "adjust");
  const problem = h("p", { class: "form-error", role: "alert" });
  problem.hidden = true;
  const sendChanges = tr("button", "sendChanges", undefined, { type: "submit", class: "primary" });
  sendChanges.hidden = true;
  let editing = false;

  const buttons = h("div", { class: "actions" });
  for (const option of options) {
    const cls = option.action === "confirm" ? "primary" : option.action === "cancel" ? "danger" : "";
    const button = h("button", { type: "button", class: cls, "data-action": option.action }, option.title);
    button.addEventListener("click", () => {
      if (option.action === "adjust") {
        // The values become editable; "Send changes" sends them.
        editing = true;
        button.setAttribute("aria-pressed", "true");
        for (const f of fields) f.input.readOnly = false;
        sendChanges.hidden = false;
        fields[0]?.input.focus();
        return;
      }
      const overrides = option.action === "confirm" ? changed() : {};
      const names = Object.keys(overrides);
      answer(
        {
          status: "resolved",
          payload: { selectedId: option.id, ...(names.length ? { parameter_overrides: overrides } : {}) },
        },
        withChanges(names, option.title),
      );
    });
    buttons.append(button);
  }
  buttons.append(sendChanges);
  form.append(problem, buttons);

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!editing || !adjust) return;
    const overrides = changed();
    const names = Object.keys(overrides);
    if (!names.length) {
      problem.dataset.i18n = "noChanges";
      problem.textContent = t("noChanges");
      problem.hidden = false;
      return;
    }
    answer(
      { status: "resolved", payload: { selectedId: adjust.id, parameter_overrides: overrides } },
      withChanges(names, adjust.title),
    );
  });
  return form;
}
