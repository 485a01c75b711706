// The Files panel: each file the agent proposes (write_file arguments: path and
// content), highlighted; marked written once the tool's result arrives.
import { h } from "./dom.js";
import { codeBlock, languageOf } from "./highlight.js";
import { tr } from "./i18n.js";

export class FilesView {
  readonly root: HTMLElement;
  private readonly list: HTMLElement;
  private readonly empty: HTMLElement;
  private readonly byPath = new Map<string, HTMLElement>();
  private readonly byToolCall = new Map<string, HTMLElement>();

  constructor() {
    this.empty = tr("p", "noFiles", undefined, { class: "empty" });
    this.list = h("div", { class: "file-list" });
    this.root = h("section", { class: "files" }, this.empty, this.list);
  }

  /** Shows `content` as the file `path` (replacing an earlier version), proposed by the tool call. */
  propose(path: string, content: string, toolCallId: string): void {
    this.empty.hidden = true;
    const status = tr("span", "fileProposed", undefined, { class: "file-status" });
    const section = h(
      "section",
      { class: "file", "data-path": path, "data-state": "proposed" },
      h("h3", {}, h("span", { class: "file-path" }, path), " ", status),
      codeBlock(content, languageOf(path, content)),
    );
    const old = this.byPath.get(path);
    if (old) old.replaceWith(section);
    else this.list.appendChild(section);
    this.byPath.set(path, section);
    this.byToolCall.set(toolCallId, section);
  }

  /** The tool call that proposed a file finished: the file was written (or not). */
  toolFinished(toolCallId: string, ok: boolean): void {
    const section = this.byToolCall.get(toolCallId);
    if (!section || !ok) return;
    section.dataset.state = "written";
    section
      .querySelector(".file-status")
      ?.replaceWith(tr("span", "fileWritten", undefined, { class: "file-status" }));
  }
}
