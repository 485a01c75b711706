// The form of a cloud_resource_selection interrupt: which template parameter
// and resource type the choice fills, one radio per resource found (its
// accessible name is the resource's label; its id is shown beside it), a text
// box for an id typed by hand when the selector allows it, "Use this
// resource" ({value, label} or {freeText}) and "None of these" (cancelled;
// {optionsEmpty: true} when there was nothing to choose).
import type { Interrupt } from "@ag-ui/client";
import { h, randomId } from "./dom.js";
import { t, tr } from "./i18n.js";
import type { Respond } from "./interrupts.js";
import { obj, objects, str } from "./json.js";

interface Resource {
  id: string;
  label: string;
}

/** The resources offered: the raw options (id = the resource id the answer's value must be). */
function resources(meta: Record<string, unknown>): Resource[] {
  return objects(meta.options)
    .map((o) => ({ id: str(o.id), label: str(o.label) || str(o.name) || str(o.id) }))
    .filter((r) => r.id !== "");
}

/** "VpcId · ALIYUN::ECS::VPC · vpc DescribeVpcs cn-hangzhou": what is chosen, for what, from where. */
function selectorLine(selector: Record<string, unknown>): string {
  const source = obj(selector.source);
  const from = [str(source.product), str(source.action), str(source.regionId)].filter(Boolean).join(" ");
  return [str(selector.parameter), str(selector.resourceType), from].filter(Boolean).join(" · ");
}

export function resourceSelectionForm(interrupt: Interrupt, answer: Respond): HTMLFormElement {
  const meta = obj(interrupt.metadata);
  const offered = resources(meta);
  const group = randomId("resource");
  const form = h("form", { class: "selector-form" });
  const about = selectorLine(obj(meta.selector));
  if (about) form.append(h("p", { class: "details" }, about));

  const radios: HTMLInputElement[] = [];
  if (offered.length) {
    const list = h("ul", { class: "resource-options" });
    for (const resource of offered) {
      const inputId = randomId("resource-option");
      const idNote = randomId("resource-id");
      const radio = h("input", {
        type: "radio",
        name: group,
        value: resource.id,
        id: inputId,
        "aria-describedby": idNote,
      });
      radios.push(radio);
      list.append(
        h(
          "li",
          {},
          radio,
          " ",
          h("label", { for: inputId }, resource.label),
          " ",
          h("code", { id: idNote, class: "resource-id" }, resource.id),
        ),
      );
    }
    form.append(h("fieldset", {}, tr("legend", "resources"), list));
  } else {
    form.append(tr("p", "noResources", undefined, { class: "empty" }));
  }

  let typed: HTMLInputElement | undefined;
  if (meta.allowFreeText === true) {
    const id = randomId("resource-typed");
    typed = h("input", { type: "text", id, spellcheck: "false", autocomplete: "off" });
    // The runtime's own prompt for it when it gives one (already in the user's language).
    const prompt = str(meta.freeTextPrompt);
    const label = prompt
      ? h("label", { for: id }, prompt)
      : tr("label", "resourceTyped", undefined, { for: id });
    form.append(h("div", { class: "typed-id" }, label, typed));
    // One answer at a time: typing an id clears the choice, choosing clears the typed id.
    typed.addEventListener("input", () => {
      if (typed!.value.trim()) for (const r of radios) r.checked = false;
    });
    for (const r of radios) r.addEventListener("change", () => (typed!.value = ""));
  }

  const problem = h("p", { class: "form-error", role: "alert" });
  problem.hidden = true;
  const use = tr("button", "useResource", undefined, { type: "submit", class: "primary" });
  const none = tr("button", "noneOfThese", undefined, { type: "button" });
  form.append(problem, h("div", { class: "actions" }, use, none));

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = typed?.value.trim() ?? "";
    if (text) return answer({ status: "resolved", payload: { freeText: text } }, text);
    const chosen = radios.find((r) => r.checked);
    const resource = offered.find((r) => r.id === chosen?.value);
    if (resource)
      return answer(
        { status: "resolved", payload: { value: resource.id, label: resource.label } },
        resource.label,
      );
    const key = typed ? "chooseOrType" : "chooseOne";
    problem.dataset.i18n = key;
    problem.textContent = t(key);
    problem.hidden = false;
  });
  none.addEventListener("click", () =>
    answer(
      offered.length ? { status: "cancelled" } : { status: "cancelled", payload: { optionsEmpty: true } },
      t("noneOfThese"),
    ),
  );
  return form;
}
