#!/usr/bin/env node
// The `agent-platform` command. Runs scripts/cli.ts on the platform's own Node 22 (its `node`
// devDependency runs TypeScript directly), whatever `node` is first on the user's PATH.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bundledNode = join(root, "node_modules/node/bin/node");
const node = existsSync(bundledNode) ? bundledNode : process.execPath;
const child = spawn(node, [join(root, "scripts/cli.ts"), ...process.argv.slice(2)], { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
