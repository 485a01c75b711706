// A tiny element builder: the console builds its DOM from code (never from
// HTML strings), so text from the agent can never become markup.

type Child = Node | string | null | undefined | false;
type Attrs = Record<string, string | boolean | number | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (name === "class") el.className = String(value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, ...children);
  return el;
}

export function append(el: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
}

/** A random id (crypto.randomUUID needs a secure context; a LAN address over http is not one). */
export function randomId(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `${prefix}-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** Scrolls a log to its end when it was already at the end (the reader did not scroll up). */
export function keepAtEnd(log: HTMLElement, change: () => void): void {
  const atEnd = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  change();
  if (atEnd) log.scrollTop = log.scrollHeight;
}
