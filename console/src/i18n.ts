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
  guidance: "Guidance",
  sendGuidance: "Send guidance",
  guidancePlaceholder: "Guide the running pipeline: its judge decides how to use your message…",
  guidanceSent: "Guidance delivered to the running pipeline.",
  guidanceReceived: "The pipeline's judge is reading your guidance.",
  verdictSupplement: "Taken: added to the running step {step}.",
  verdictContinue: "Noted: the pipeline goes on unchanged.",
  verdictIgnored: "Ignored: the pipeline goes on unchanged.",
  verdictHardInterrupt: "Changes an earlier decision: back to step {step}.",
  verdictPaused: "The judge could not decide: the run waits for your confirmation.",
  earlier:
    "Earlier messages of this thread come back when its run is followed again or with your next message.",
  observing: "Following this thread's run…",
  resourceSelection: "Choose a cloud resource",
  resources: "Resources found",
  noResources: "No resource of this kind was found.",
  resourceTyped: "Or type a resource id",
  useResource: "Use this resource",
  noneOfThese: "None of these",
  chooseOne: "Choose a resource first.",
  chooseOrType: "Choose a resource or type its id.",
  deploymentConfirmation: "Confirm the deployment",
  summaryCandidate: "Candidate",
  summaryAction: "Operation",
  summaryRegion: "Region",
  summaryStack: "Stack",
  summaryTemplate: "Template",
  summaryCost: "Monthly cost",
  parameters: "Parameters",
  parameterName: "Parameter",
  parameterValue: "Value",
  sendChanges: "Send changes",
  noChanges: "Change a value first.",
  paused: "Pipeline paused",
  steps: "Steps",
  stepRolledBack: "rolled back",
  rolledBackTo: "rolled back to {to}",
  candidateFailed: "Failed",
  candidateFailedAt: "Failed at {step}",
  candidateRestart: "Restarting from {step} (attempt {attempt})",
  candidateRolledBack: "Went back from {from} to {to}",
  notices: "Notices",
  rollbackFromTo: "Rolled back from {from} to {to}",
  staleFields: "Stale fields:",
  rollbackCleanup: "{count} stack(s) to delete.",
  compactionStarted: "Compacting the context…",
  compacted: "Context compacted",
  tokens: "{from} → {to} tokens",
  compactionSummary: "Summary",
  compactionFailed: "Context compaction failed",
  warning: "Warning",
  diagramOf: "Architecture diagram: {name}",
  templateSource: "Template",
  detailOf: "Detail: {name}",
  costItems: "Cost items",
  monthlyTotal: "Monthly total",
  instances: "Stack instances",
  instanceRegion: "Region",
  instanceAccount: "Account",
  instanceStatus: "Status",
  cleanup: "Cleanup",
  cleanupOf: "Cleanup of {name}",
  cleanupStarted: "deleting",
  cleanupCompleted: "deleted",
  cleanupFailed: "deletion failed",
  lastError: "Last error:",
  outcomeCompleted: "The pipeline completed.",
  outcomeEarlyExit: "The pipeline ended early.",
  outcomeFailed: "The pipeline failed.",
  leftovers: "{count} stack(s) left behind.",
  cleanUp: "Clean up",
  cleanUpMessage: "Delete the stacks this pipeline left behind.",
  cleanupDone: "Nothing is left to clean up.",
  toolProgressOf: "Progress of {name}",
  tryFailure: "Try a failure",
  tryFailureHint: "Demo mode (no model configured): put a tag in a pipeline request.",
  tryMessage: "I need a website {tag}",
  tagDeployFails:
    "the stack fails (an instance over quota): rollback, cleanup, choose again, the other deploys",
  tagCleanupFails: "as above, but the deletion fails: the run ends failed, with what is left and Clean up",
  tagCandidateFails: "one candidate fails its validation; the selection offers the other",
  tagSlowDeploy: "a stack group deploys to several regions, with each instance's progress",
  tagLongContext: "a step's context is compacted",
  tagCompactionFails: "as long-context, but the compaction fails; the step goes on",
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
  guidance: "引导",
  sendGuidance: "发送引导",
  guidancePlaceholder: "引导正在运行的流水线：由判定器决定如何使用你的消息…",
  guidanceSent: "引导已送达正在运行的流水线。",
  guidanceReceived: "流水线的判定器正在阅读你的引导。",
  verdictSupplement: "已采纳：补充给正在运行的步骤 {step}。",
  verdictContinue: "已记录：流水线照常继续。",
  verdictIgnored: "已忽略：流水线照常继续。",
  verdictHardInterrupt: "改变了之前的决定：回到步骤 {step}。",
  verdictPaused: "判定器无法决定：运行等待你的确认。",
  earlier: "此会话之前的消息会在重新跟随其运行时或随你的下一条消息显示。",
  observing: "正在跟随此会话的运行…",
  resourceSelection: "选择云资源",
  resources: "找到的资源",
  noResources: "未找到此类资源。",
  resourceTyped: "或输入资源 ID",
  useResource: "使用此资源",
  noneOfThese: "都不是",
  chooseOne: "请先选择一个资源。",
  chooseOrType: "请选择一个资源或输入其 ID。",
  deploymentConfirmation: "确认部署",
  summaryCandidate: "候选方案",
  summaryAction: "操作",
  summaryRegion: "地域",
  summaryStack: "资源栈",
  summaryTemplate: "模板",
  summaryCost: "月费用",
  parameters: "参数",
  parameterName: "参数",
  parameterValue: "值",
  sendChanges: "提交修改",
  noChanges: "请先修改一个值。",
  paused: "流水线已暂停",
  steps: "步骤",
  stepRolledBack: "已回滚",
  rolledBackTo: "已回滚到 {to}",
  candidateFailed: "失败",
  candidateFailedAt: "在 {step} 失败",
  candidateRestart: "从 {step} 重新开始（第 {attempt} 次）",
  candidateRolledBack: "从 {from} 退回到 {to}",
  notices: "通知",
  rollbackFromTo: "从 {from} 回滚到 {to}",
  staleFields: "失效字段：",
  rollbackCleanup: "需删除 {count} 个资源栈。",
  compactionStarted: "正在压缩上下文…",
  compacted: "上下文已压缩",
  tokens: "{from} → {to} 个 token",
  compactionSummary: "摘要",
  compactionFailed: "上下文压缩失败",
  warning: "警告",
  diagramOf: "架构图：{name}",
  templateSource: "模板",
  detailOf: "详情：{name}",
  costItems: "费用明细",
  monthlyTotal: "每月合计",
  instances: "资源栈实例",
  instanceRegion: "地域",
  instanceAccount: "账号",
  instanceStatus: "状态",
  cleanup: "清理",
  cleanupOf: "清理 {name}",
  cleanupStarted: "删除中",
  cleanupCompleted: "已删除",
  cleanupFailed: "删除失败",
  lastError: "最近的错误：",
  outcomeCompleted: "流水线已完成。",
  outcomeEarlyExit: "流水线提前结束。",
  outcomeFailed: "流水线失败。",
  leftovers: "遗留了 {count} 个资源栈。",
  cleanUp: "清理",
  cleanUpMessage: "删除此流水线遗留的资源栈。",
  cleanupDone: "没有需要清理的资源了。",
  toolProgressOf: "{name} 的进度",
  tryFailure: "试试失败场景",
  tryFailureHint: "演示模式（未配置模型）：在流水线请求中加入标签。",
  tryMessage: "我需要一个网站 {tag}",
  tagDeployFails: "资源栈创建失败（实例超出配额）：回滚、清理、重新选择，另一方案部署成功",
  tagCleanupFails: "同上，但删除失败：运行以失败结束，说明遗留内容并提供清理",
  tagCandidateFails: "一个候选方案校验失败；选择时只提供另一个",
  tagSlowDeploy: "资源栈组部署到多个地域，显示每个实例的进度",
  tagLongContext: "某个步骤的上下文被压缩",
  tagCompactionFails: "同上，但压缩失败；步骤继续执行",
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
