// The console's texts in English and Chinese. Elements carry the key of their
// text (data-i18n, data-i18n-label for aria-label, data-i18n-placeholder), so a
// language switch rewrites every label already on the page.

export type Language = "en" | "zh";
export const LANGUAGES: Record<Language, string> = { en: "English", zh: "中文" };

const en = {
  appTitle: "iac-code console",
  language: "Language",
  threads: "Threads",
  newThread: "New thread",
  untitled: "New thread",
  conversation: "Conversation",
  message: "Message",
  messagePlaceholder: "Describe the infrastructure you need…",
  send: "Send",
  cancel: "Cancel",
  pipelineMode: "Pipeline mode",
  workspace: "Workspace",
  you: "You",
  assistant: "Assistant",
  reasoning: "Reasoning",
  tool: "Tool",
  arguments: "Arguments",
  result: "Result",
  toolRunning: "running",
  toolDone: "done",
  permission: "Permission required",
  question: "Question",
  allowOnce: "Allow once",
  alwaysAllow: "Always allow",
  deny: "Deny",
  yourAnswer: "Your answer",
  answer: "Answer",
  answered: "Answered: {answer}",
  pipeline: "Pipeline",
  noPipeline: "No pipeline run in this thread yet.",
  candidates: "Candidates",
  choose: "Choose",
  chooseNamed: "Choose {name}",
  selected: "Selected",
  cost: "Cost",
  deployment: "Deployment",
  stepPending: "pending",
  stepRunning: "running",
  stepWaiting: "waiting",
  stepDone: "done",
  stepFailed: "failed",
  files: "Files",
  noFiles: "No file generated yet.",
  fileProposed: "proposed",
  fileWritten: "written",
  accessToken: "Access token",
  tokenNeeded: "This server requires an access token (its --auth-token).",
  tokenRejected: "The access token was refused. Enter it again.",
  connect: "Connect",
  running: "Running…",
  finished: "Done.",
  waitingAnswer: "Waiting for your answer.",
  cancelled: "Cancelled.",
  error: "Error {code}: {message}",
  requestFailed: "The request failed: {message}",
  earlier: "Earlier messages of this thread were shown in another page and are not repeated here.",
};

export type MessageKey = keyof typeof en;

const zh: Record<MessageKey, string> = {
  appTitle: "iac-code 控制台",
  language: "语言",
  threads: "会话",
  newThread: "新会话",
  untitled: "新会话",
  conversation: "对话",
  message: "消息",
  messagePlaceholder: "描述你需要的基础设施…",
  send: "发送",
  cancel: "取消",
  pipelineMode: "流水线模式",
  workspace: "工作区",
  you: "你",
  assistant: "助手",
  reasoning: "思考过程",
  tool: "工具",
  arguments: "参数",
  result: "结果",
  toolRunning: "运行中",
  toolDone: "完成",
  permission: "需要授权",
  question: "问题",
  allowOnce: "允许一次",
  alwaysAllow: "始终允许",
  deny: "拒绝",
  yourAnswer: "你的回答",
  answer: "回答",
  answered: "已回答：{answer}",
  pipeline: "流水线",
  noPipeline: "此会话尚未运行流水线。",
  candidates: "候选方案",
  choose: "选择",
  chooseNamed: "选择 {name}",
  selected: "已选择",
  cost: "费用",
  deployment: "部署",
  stepPending: "待执行",
  stepRunning: "进行中",
  stepWaiting: "等待中",
  stepDone: "完成",
  stepFailed: "失败",
  files: "文件",
  noFiles: "尚未生成文件。",
  fileProposed: "待写入",
  fileWritten: "已写入",
  accessToken: "访问令牌",
  tokenNeeded: "此服务器需要访问令牌（即其 --auth-token）。",
  tokenRejected: "访问令牌被拒绝，请重新输入。",
  connect: "连接",
  running: "运行中…",
  finished: "完成。",
  waitingAnswer: "等待你的回答。",
  cancelled: "已取消。",
  error: "错误 {code}：{message}",
  requestFailed: "请求失败：{message}",
  earlier: "此会话之前的消息显示在另一个页面中，这里不再重复。",
};

const CATALOGS: Record<Language, Record<MessageKey, string>> = { en, zh };
const STORAGE_KEY = "iac-code-console.language";

function initialLanguage(): Language {
  const stored = localStorage.getItem(STORAGE_KEY);
  if (stored === "en" || stored === "zh") return stored;
  return navigator.language.toLowerCase().startsWith("zh") ? "zh" : "en";
}

let current: Language = initialLanguage();

export function language(): Language {
  return current;
}

export function t(key: MessageKey, vars: Record<string, string> = {}): string {
  return CATALOGS[current][key].replace(/\{(\w+)\}/g, (whole, name: string) => vars[name] ?? whole);
}

/** Rewrites every translated text, label and placeholder under `root`. */
export function translate(root: ParentNode): void {
  for (const el of root.querySelectorAll<HTMLElement>("[data-i18n]")) {
    el.textContent = t(el.dataset.i18n as MessageKey, varsOf(el));
  }
  for (const el of root.querySelectorAll<HTMLElement>("[data-i18n-label]")) {
    el.setAttribute("aria-label", t(el.dataset.i18nLabel as MessageKey, varsOf(el)));
  }
  for (const el of root.querySelectorAll<HTMLElement>("[data-i18n-placeholder]")) {
    el.setAttribute("placeholder", t(el.dataset.i18nPlaceholder as MessageKey));
  }
}

function varsOf(el: HTMLElement): Record<string, string> {
  return el.dataset.i18nVars ? (JSON.parse(el.dataset.i18nVars) as Record<string, string>) : {};
}

export function setLanguage(lang: Language, root: ParentNode): void {
  current = lang;
  localStorage.setItem(STORAGE_KEY, lang);
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  translate(root);
}

/** Attributes of an element whose text is the message `key` (kept translated). */
export function i18n(key: MessageKey, vars?: Record<string, string>): Record<string, string> {
  return vars ? { "data-i18n": key, "data-i18n-vars": JSON.stringify(vars) } : { "data-i18n": key };
}

/** Attributes of an element whose accessible name is the message `key`. */
export function i18nLabel(key: MessageKey, vars?: Record<string, string>): Record<string, string> {
  const attrs: Record<string, string> = { "data-i18n-label": key, "aria-label": t(key, vars) };
  if (vars) attrs["data-i18n-vars"] = JSON.stringify(vars);
  return attrs;
}

/** An element showing the message `key`, kept translated. */
export function tr<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  key: MessageKey,
  vars?: Record<string, string>,
  attrs: Record<string, string> = {},
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries({ ...attrs, ...i18n(key, vars) })) el.setAttribute(name, value);
  el.textContent = t(key, vars);
  return el;
}
