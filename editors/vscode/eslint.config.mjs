// eslint with typescript-eslint's type-checked rules for the extension,
// its webviews and the unit tests (run by scripts/test.sh --unit).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "out/", "node_modules/", "test/e2e/", "*.mjs"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // `void promise` marks a deliberate fire-and-forget.
      "@typescript-eslint/no-floating-promises": [
        "error",
        { ignoreVoid: true, allowForKnownSafeCalls: [{ from: "package", package: "node:test", name: ["test", "describe", "it"] }] },
      ],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      // lsp_ext.ts spells open unions ("text" | "image" | string) on
      // purpose: the known values, and clients accept newer ones.
      "@typescript-eslint/no-redundant-type-constituents": "off",
    },
  },
  {
    // The fakes mirror async APIs without awaiting anything.
    files: ["test/unit/**/*.ts"],
    rules: { "@typescript-eslint/require-await": "off" },
  },
);
