// The pipeline panel's deployment section: a progress bar per stack being
// deployed (stack_progress, stack_current_changed) with its resources and the
// reason of any that failed, and per stack group (stack_instances_progress) a
// progress bar and a table of its instances (region, account, status, why).
import { h } from "./dom.js";
import { tr } from "./i18n.js";
import { num, objects, str, type Json } from "./json.js";

interface StackView {
  el: HTMLElement;
  progress: HTMLProgressElement;
  status: HTMLElement;
  resources: HTMLUListElement;
}

interface GroupView {
  el: HTMLElement;
  progress: HTMLProgressElement;
  status: HTMLElement;
  instances: HTMLTableSectionElement;
}

const FAILED = /_FAILED$|ROLLBACK/;

export class DeploymentView {
  readonly root: HTMLElement;
  private readonly box: HTMLElement;
  private readonly stacks = new Map<string, StackView>();
  private readonly groups = new Map<string, GroupView>();

  constructor() {
    this.box = h("div", { class: "stacks" });
    this.root = h("div", { class: "stacks-wrap", hidden: true }, tr("h3", "deployment"), this.box);
  }

  /** stack_progress or stack_current_changed; a stack created again under the same name is a new entry. */
  stack(data: Json): void {
    const name = str(data.stackName) || str(data.stackId);
    if (!name) return;
    const key = str(data.stackId) || name;
    let view = this.stacks.get(key);
    if (!view) {
      const progress = h("progress", { max: 100, value: 0, "aria-label": name });
      const status = h("span", { class: "stack-status" });
      const resources = h("ul", { class: "resources" });
      const el = h(
        "div",
        { class: "stack", "data-stack": name, "data-stack-id": str(data.stackId) || undefined },
        h("h4", {}, name),
        progress,
        " ",
        status,
        resources,
      );
      this.box.appendChild(el);
      this.root.hidden = false;
      this.stacks.set(key, (view = { el, progress, status, resources }));
    }
    const stackStatus = str(data.status) || str(data.stackStatus);
    const percentage = num(data.progressPercentage);
    if (percentage !== undefined) view.progress.value = percentage;
    else if (/_COMPLETE$/.test(stackStatus)) view.progress.value = 100;
    if (stackStatus) {
      view.status.textContent = `${stackStatus} (${view.progress.value}%)`;
      view.el.dataset.state = FAILED.test(stackStatus)
        ? "failed"
        : /_COMPLETE$/.test(stackStatus)
          ? "done"
          : "running";
    }
    if (Array.isArray(data.resources)) {
      view.resources.replaceChildren(
        ...objects(data.resources).map((r) =>
          h(
            "li",
            { "data-state": FAILED.test(str(r.status)) ? "failed" : undefined },
            h("code", {}, str(r.logicalId)),
            ` ${str(r.type)} `,
            h("span", { class: "res-status" }, str(r.status)),
            str(r.statusReason) ? h("span", { class: "reason" }, str(r.statusReason)) : null,
          ),
        ),
      );
    }
  }

  /** stack_instances_progress: a stack group's operation and each of its instances. */
  instances(data: Json): void {
    const name = str(data.stackGroupName);
    if (!name) return;
    let view = this.groups.get(name);
    if (!view) {
      const progress = h("progress", { max: 100, value: 0, "aria-label": name });
      const status = h("span", { class: "stack-status" });
      const instances = h("tbody");
      const table = h(
        "table",
        { class: "instances" },
        tr("caption", "instances"),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            tr("th", "instanceRegion", undefined, { scope: "col" }),
            tr("th", "instanceAccount", undefined, { scope: "col" }),
            tr("th", "instanceStatus", undefined, { scope: "col" }),
          ),
        ),
        instances,
      );
      const el = h(
        "div",
        { class: "stack group", "data-stack-group": name },
        h("h4", {}, name),
        progress,
        " ",
        status,
        table,
      );
      this.box.appendChild(el);
      this.root.hidden = false;
      this.groups.set(name, (view = { el, progress, status, instances }));
    }
    const status = str(data.status);
    const percentage = num(data.progressPercentage);
    if (percentage !== undefined) view.progress.value = percentage;
    if (status) {
      view.status.textContent = `${status} (${view.progress.value}%)`;
      view.el.dataset.state = /FAILED/.test(status)
        ? "failed"
        : /SUCCEEDED|COMPLETE/.test(status)
          ? "done"
          : "running";
    }
    view.instances.replaceChildren(
      ...objects(data.instances).map((i) => {
        const instanceStatus = str(i.status);
        return h(
          "tr",
          {
            "data-region": str(i.regionId),
            "data-state": /FAILED/.test(instanceStatus) ? "failed" : undefined,
          },
          h("td", {}, str(i.regionId)),
          h("td", {}, str(i.accountId)),
          h(
            "td",
            {},
            h("span", { class: "res-status" }, instanceStatus),
            str(i.statusReason) ? h("span", { class: "reason" }, str(i.statusReason)) : null,
          ),
        );
      }),
    );
  }
}
