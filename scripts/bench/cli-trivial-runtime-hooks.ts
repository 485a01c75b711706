// Module hooks (node:module register) of cli-trivial-runtime.ts: the CLI's
// import of the runtime's public door (src/cli/a2a-run.ts imports
// ../runtime/index.js) resolves to a generated module that re-exports that door
// with createAgentRuntime taken from cli-trivial-runtime.ts. Only that one
// import is redirected: every other module gets the real runtime module.
// Under IAC_CODE_FROM_SOURCE=1, tsx's hooks run before these and ask for
// index.ts; both spellings match.
import type { LoadHook, ResolveHook } from "node:module";

const MARK = "iac-bench-trivial-runtime-for";
const CLI_RUNNER = /\/cli\/a2a-run\.(js|ts)(\?.*)?$/;
const RUNTIME_DOOR = /^\.\.\/runtime\/index\.(js|ts)$/;

export const resolve: ResolveHook = async (specifier, context, nextResolve) => {
  const resolved = await nextResolve(specifier, context);
  if (!context.parentURL || !CLI_RUNNER.test(context.parentURL) || !RUNTIME_DOOR.test(specifier))
    return resolved;
  const url = new URL(import.meta.url);
  url.searchParams.set(MARK, resolved.url);
  return { url: url.href, format: "module", shortCircuit: true };
};

export const load: LoadHook = async (url, context, nextLoad) => {
  const real = URL.canParse(url) ? new URL(url).searchParams.get(MARK) : null;
  if (!real) return nextLoad(url, context);
  const trivial = new URL("./cli-trivial-runtime.js", import.meta.url).href;
  // An explicit export beats the same name from `export *`.
  const source =
    `export * from ${JSON.stringify(real)};\n` +
    `export { createAgentRuntime } from ${JSON.stringify(trivial)};\n`;
  return { format: "module", source, shortCircuit: true };
};
