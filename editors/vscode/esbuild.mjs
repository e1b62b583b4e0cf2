// Builds the extension (dist/extension.js, Node), the webviews
// (dist/webview/*.js, browser) and their assets; --tests builds the unit
// tests into out/test/ (with "vscode" resolved to test/unit/fake/vscode.ts). Flags: --production (minify, no source maps),
// --watch, --tests.
import * as esbuild from "esbuild";
import { cpSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(fileURLToPath(import.meta.url));
const args = new Set(process.argv.slice(2));
const production = args.has("--production");
const watch = args.has("--watch");

const common = {
  bundle: true,
  minify: production,
  sourcemap: production ? false : "linked",
  logLevel: "warning",
  absWorkingDir: root,
};

function copyAssets() {
  mkdirSync(join(root, "dist/webview"), { recursive: true });
  mkdirSync(join(root, "dist/media"), { recursive: true });
  for (const f of ["chat.css", "panel.css"]) {
    cpSync(join(root, "media", f), join(root, "dist/webview", f));
  }
  for (const f of ["codicon.css", "codicon.ttf"]) {
    cpSync(join(root, "node_modules/@vscode/codicons/dist", f), join(root, "dist/media", f));
  }
}

const builds = [
  {
    ...common,
    entryPoints: { extension: "src/extension.ts" },
    outdir: "dist",
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["vscode"],
  },
  {
    ...common,
    entryPoints: { chat: "src/webview/chat/main.ts", panel: "src/webview/panel/main.ts" },
    outdir: "dist/webview",
    platform: "browser",
    format: "iife",
    target: "es2022",
  },
];

if (args.has("--tests")) {
  rmSync(join(root, "out/test"), { recursive: true, force: true });
  const tests = readdirSync(join(root, "test/unit")).filter((f) => f.endsWith(".test.ts"));
  await esbuild.build({
    ...common,
    sourcemap: "inline",
    entryPoints: tests.map((f) => join("test/unit", f)),
    outdir: "out/test",
    platform: "node",
    format: "cjs",
    target: "node20",
    // The extension-host code runs against a fake of the vscode API.
    alias: { vscode: "./test/unit/fake/vscode.ts" },
  });
} else if (watch) {
  copyAssets();
  for (const b of builds) {
    const ctx = await esbuild.context(b);
    await ctx.watch();
  }
  console.log("watching…");
} else {
  rmSync(join(root, "dist"), { recursive: true, force: true });
  copyAssets();
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
