// ESLint flat config: typescript-eslint with type-checked rules on hand-written code.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

/** An import of a folder of src from a folder beside it (`../`, `../../`...), `except` inside it allowed. */
const into = (folders, except = "") => `^(\\.\\./)+(${folders.join("|")})(/${except}|$)`;

/**
 * The layers of src, bottom up: server (with contract, i18n, version.ts and
 * package-root.ts), runtime, a2a, agui, cli. A folder imports its own layer
 * and those below it, never one above (scripts/house-plan.ts measures it).
 * `above` are the folders of src a file in `folder` must not import.
 */
function layer(folder, above, more = []) {
  const message = `src/${folder} is below ${above.map((f) => `src/${f}`).join(", ")}: it must not import them.`;
  return {
    files: [`src/${folder}/**/*.ts`],
    rules: { "no-restricted-imports": ["error", { patterns: [{ regex: into(above), message }, ...more] }] },
  };
}

export default tseslint.config(
  { ignores: ["generated/**", "node_modules/**", "dist/**", ".tmp/**", "**/*.cjs"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-floating-promises": "error",
    },
  },
  layer("contract", ["server", "a2a", "agui", "runtime", "cli"]),
  layer("server", ["a2a", "agui", "runtime", "cli"]),
  layer("runtime", ["a2a", "agui", "cli"]),
  layer("a2a", ["agui", "cli"]),
  layer(
    "agui",
    ["cli"],
    [
      {
        regex: into(["a2a"], "(?!client/)"),
        message: "src/agui reaches the A2A server only as a client does: through src/a2a/client.",
      },
    ],
  ),
  {
    files: ["test/**/*.ts"],
    rules: {
      // chai's expect(...).to.be.true style is an expression statement by design.
      "@typescript-eslint/no-unused-expressions": "off",
    },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    ...tseslint.configs.disableTypeChecked,
  },
);
