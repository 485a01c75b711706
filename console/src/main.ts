// The console page: the thread list, the conversation with its composer, the
// pipeline and files panels, the language switch and (when the server has an
// auth token) the token entry. The token stays in this page's memory only.
import { h, randomId } from "./dom.js";
import { i18nLabel, language, LANGUAGES, setLanguage, t, tr, translate, type Language } from "./i18n.js";
import { ThreadSession, type SessionHost } from "./session.js";
import { loadThreads, type ThreadRecord } from "./threads.js";

const meta = (name: string): string =>
  document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content ?? "";
const AUTH_REQUIRED = meta("iac-code-auth") === "required";
const DEFAULT_WORKSPACE = meta("iac-code-workspace");

let token: string | undefined;
const sessions = new Map<string, ThreadSession>();
let current: ThreadSession;

// --- layout ---------------------------------------------------------------
const languageSelect = h(
  "select",
  { id: "language", ...i18nLabel("language") },
  ...Object.entries(LANGUAGES).map(([code, name]) => h("option", { value: code }, name)),
);
languageSelect.value = language();
const tokenButton = tr("button", "accessToken", undefined, { type: "button", class: "link" });
tokenButton.hidden = !AUTH_REQUIRED;

const threadList = h("ul", { class: "thread-list" });
const newThreadButton = tr("button", "newThread", undefined, { type: "button" });
const log = h("div", { class: "log", role: "log", "aria-live": "polite", ...i18nLabel("conversation") });
const message = h("textarea", { id: "message", rows: 3, "data-i18n-placeholder": "messagePlaceholder" });
const pipelineBox = h("input", { type: "checkbox", id: "pipeline-mode" });
const workspace = h("input", { type: "text", id: "workspace", spellcheck: "false" });
const sendButton = tr("button", "send", undefined, { type: "submit", class: "primary" });
// Shown while a pipeline runs: the message box then sends guidance to it.
const guidanceMarker = tr("span", "guidance", undefined, { class: "guidance-marker" });
const cancelButton = tr("button", "cancel", undefined, { type: "button", class: "danger" });
const composer = h(
  "form",
  { class: "composer" },
  tr("label", "message", undefined, { for: "message" }),
  message,
  h(
    "div",
    { class: "composer-row" },
    h("label", { class: "check" }, pipelineBox, " ", tr("span", "pipelineMode")),
    h("label", { class: "workspace" }, tr("span", "workspace"), " ", workspace),
    h("span", { class: "spacer" }),
    guidanceMarker,
    cancelButton,
    sendButton,
  ),
);
const pipelineHost = h("div");
const filesHost = h("div");

const tokenInput = h("input", { type: "password", id: "token", autocomplete: "off" });
const tokenReason = tr("p", "tokenNeeded");
const tokenDialog = h(
  "dialog",
  { class: "token-dialog" },
  h(
    "form",
    { method: "dialog" },
    tokenReason,
    tr("label", "accessToken", undefined, { for: "token" }),
    tokenInput,
    tr("button", "connect", undefined, { type: "submit", class: "primary" }),
  ),
);

document
  .getElementById("app")!
  .replaceWith(
    h(
      "div",
      { id: "app" },
      h(
        "header",
        { class: "topbar" },
        tr("h1", "appTitle"),
        h("span", { class: "spacer" }),
        tokenButton,
        h("label", { class: "language" }, tr("span", "language"), " ", languageSelect),
      ),
      h(
        "div",
        { class: "layout" },
        h(
          "nav",
          { class: "threads", ...i18nLabel("threads") },
          tr("h2", "threads"),
          newThreadButton,
          threadList,
        ),
        h("main", { class: "chat" }, log, composer),
        h(
          "aside",
          { class: "side" },
          h("section", {}, tr("h2", "pipeline"), pipelineHost),
          h("section", {}, tr("h2", "files"), filesHost),
        ),
      ),
      tokenDialog,
    ),
  );
setLanguage(language(), document.body);

// --- behaviour ------------------------------------------------------------
const host: SessionHost = {
  authorization: () => (token ? `Bearer ${token}` : undefined),
  unauthorized: () => {
    token = undefined;
    askToken("tokenRejected");
  },
  changed: (session) => {
    if (session === current) refreshControls();
    renderThreads();
  },
  tryDemo: (text) => {
    // A demo scenario runs in pipeline mode; the user still presses Send.
    message.value = text;
    pipelineBox.checked = true;
    message.focus();
  },
};

function askToken(reason: "tokenNeeded" | "tokenRejected"): void {
  tokenReason.dataset.i18n = reason;
  tokenReason.textContent = t(reason);
  tokenInput.value = "";
  if (!tokenDialog.open) tokenDialog.showModal();
}

tokenDialog.addEventListener("close", () => {
  const value = tokenInput.value.trim();
  if (value) token = value;
  tokenInput.value = "";
});
tokenButton.addEventListener("click", () => askToken("tokenNeeded"));

function newRecord(): ThreadRecord {
  return {
    id: randomId("thread"),
    title: "",
    cwd: DEFAULT_WORKSPACE,
    rosInvocationId: randomId("console"),
    createdAt: Date.now(),
    pending: [],
  };
}

function open(record: ThreadRecord, restored: boolean): void {
  let session = sessions.get(record.id);
  if (!session) sessions.set(record.id, (session = new ThreadSession(record, host, restored)));
  current = session;
  log.replaceChildren(session.transcript.root);
  pipelineHost.replaceChildren(session.pipeline.root);
  filesHost.replaceChildren(session.files.root);
  // A thread's views were off the page when the language last changed.
  for (const root of [log, pipelineHost, filesHost]) translate(root);
  workspace.value = record.cwd;
  refreshControls();
  renderThreads();
}

function refreshControls(): void {
  const started = Boolean(current.record.title);
  // A thread stays bound to its workspace: the adapter refuses another one.
  workspace.readOnly = started;
  // A thread waiting on interrupts takes answers (or Cancel), not a new message;
  // a running pipeline takes guidance.
  const guiding = current.running && current.pipelineRun;
  sendButton.disabled = (current.running && !guiding) || current.pending.length > 0;
  guidanceMarker.hidden = !guiding;
  composer.classList.toggle("guiding", guiding);
  sendButton.dataset.i18n = guiding ? "sendGuidance" : "send";
  message.dataset.i18nPlaceholder = guiding ? "guidancePlaceholder" : "messagePlaceholder";
  translate(composer);
  cancelButton.disabled = !current.running && current.pending.length === 0;
}

function renderThreads(): void {
  const records = [...sessions.values()].map((s) => s.record);
  for (const stored of loadThreads()) if (!sessions.has(stored.id)) records.push(stored);
  if (!records.includes(current.record)) records.unshift(current.record);
  threadList.replaceChildren(
    ...records.map((record) => {
      const button = h(
        "button",
        { type: "button", class: "thread", "aria-current": record === current.record ? "true" : undefined },
        h("span", { class: "thread-title" }, record.title || t("untitled")),
      );
      if (record.pending.length) button.append(h("span", { class: "dot", "aria-hidden": "true" }, " ●"));
      button.addEventListener("click", () => open(record, !sessions.has(record.id)));
      return h("li", {}, button);
    }),
  );
}

composer.addEventListener("submit", (e) => {
  e.preventDefault();
  const text = message.value.trim();
  if (text && current.running && current.pipelineRun) {
    message.value = "";
    void current.guide(text);
    return;
  }
  if (!text || current.running) return;
  if (!current.record.title) current.record.cwd = workspace.value.trim() || DEFAULT_WORKSPACE;
  message.value = "";
  void current.send(text, pipelineBox.checked);
});
message.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) composer.requestSubmit();
});
cancelButton.addEventListener("click", () => void current.cancel());
newThreadButton.addEventListener("click", () => open(newRecord(), false));
languageSelect.addEventListener("change", () => {
  setLanguage(languageSelect.value as Language, document.body);
  renderThreads();
});

open(newRecord(), false);
translate(document.body);
if (AUTH_REQUIRED) askToken("tokenNeeded");
