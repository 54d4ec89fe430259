#!/usr/bin/env node
// The `agent-platform` command. From a checkout it runs scripts/cli.ts (TypeScript) on the checkout's
// Node 22 devDependency. Installed from the package it runs cli/agent-platform.js, the compiled CLI that
// `npm pack` builds (Node refuses TypeScript under node_modules), on a Node that wrangler supports
// (>= 22.12): this Node when it is one, else the Node 22 of the package's `node` dependency. The whole
// CLI runs there, not only wrangler: it loads wrangler and Miniflare in its own process too.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const WRANGLER_MIN_NODE = [22, 12];

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const sources = join(root, "scripts/cli.ts");

/** This Node when wrangler runs on it, else the `node` dependency's binary; exits with a message when neither. */
function installedNode() {
  const [major, minor] = process.versions.node.split(".").map(Number);
  const [minMajor, minMinor] = WRANGLER_MIN_NODE;
  if (major > minMajor || (major === minMajor && minor >= minMinor)) return process.execPath;
  let binary;
  try {
    const manifest = createRequire(import.meta.url).resolve("node/package.json");
    const bin = JSON.parse(readFileSync(manifest, "utf8")).bin;
    binary = join(dirname(manifest), typeof bin === "string" ? bin : bin.node);
  } catch {
    // not installed (its install script fetches the binary)
  }
  if (binary && existsSync(binary)) return binary;
  console.error(
    `agent-platform runs wrangler, which needs Node >= ${WRANGLER_MIN_NODE.join(".")}; this is Node ${process.versions.node}, and the Node 22 of agent-platform's "node" dependency is not installed${binary ? ` (no ${binary})` : ""}. Use Node 22.12 or later, or reinstall agent-platform so that its "node" dependency fetches its binary.`,
  );
  process.exit(1);
}

let node;
let entry;
if (existsSync(sources)) {
  const bundledNode = join(root, "node_modules/node/bin/node");
  node = existsSync(bundledNode) ? bundledNode : process.execPath;
  entry = sources;
} else {
  node = installedNode();
  entry = join(root, "cli/agent-platform.js");
}
const child = spawn(node, [entry, ...process.argv.slice(2)], { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
