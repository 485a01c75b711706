// "Try a failure": the demo scenarios a pipeline request can name with a tag
// (demo mode only: nothing configured), one line each on what it shows. A
// click puts a request with the tag in the message box, in pipeline mode.
import { h } from "./dom.js";
import { t, tr, type MessageKey } from "./i18n.js";

export const DEMO_TAGS: ReadonlyArray<{ tag: string; shows: MessageKey }> = [
  { tag: "[demo:deploy-fails]", shows: "tagDeployFails" },
  { tag: "[demo:cleanup-fails]", shows: "tagCleanupFails" },
  { tag: "[demo:candidate-fails]", shows: "tagCandidateFails" },
  { tag: "[demo:slow-deploy]", shows: "tagSlowDeploy" },
  { tag: "[demo:long-context]", shows: "tagLongContext" },
  { tag: "[demo:compaction-fails]", shows: "tagCompactionFails" },
];

/** The list; `use` gets the request text to put in the message box. */
export function demoTagList(use: (text: string) => void): HTMLElement {
  return h(
    "section",
    { class: "demo-tags" },
    tr("h3", "tryFailure"),
    tr("p", "tryFailureHint", undefined, { class: "details" }),
    h(
      "ul",
      {},
      ...DEMO_TAGS.map(({ tag, shows }) => {
        const button = h("button", { type: "button", class: "link tag" }, tag);
        button.addEventListener("click", () => use(t("tryMessage", { tag })));
        return h("li", {}, button, " ", tr("span", shows));
      }),
    ),
  );
}
