/**
 * The LangGraph packages a project shares with the platform (deployment-modules.ts SHARED_PACKAGES) are
 * the package's peerDependencies: the project installs them, and the Worker bundles that one copy. At
 * startup the CLI checks what is installed against the ranges the package declares.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { installedVersion } from "./deployment-modules.ts";

export interface PeerProblem {
  name: string;
  expected: string;
  /** Undefined when the package is not installed at all. */
  installed: string | undefined;
}

/** Whether `version` (x.y.z, maybe with a prerelease) is in `range`: `^x.y.z`, `>=x.y.z` or `x.y.z`, joined by `||`. */
export function satisfies(version: string, range: string): boolean {
  const parse = (v: string) =>
    v
      .replace(/^[\^>=~v\s]+/, "")
      .split(/[-+]/)[0]
      .split(".")
      .map(Number);
  const [major, minor, patch] = parse(version);
  const atLeast = (low: number[]) =>
    major !== low[0] ? major > low[0] : minor !== low[1] ? minor > low[1] : patch >= low[2];
  return range.split("||").some((alternative) => {
    const spec = alternative.trim();
    const low = parse(spec);
    if (spec.startsWith(">=")) return atLeast(low);
    if (spec.startsWith("^")) {
      // ^0.y.z allows patches of 0.y only, as npm's caret does.
      if (low[0] === 0) return major === 0 && minor === low[1] && patch >= low[2];
      return major === low[0] && atLeast(low);
    }
    return major === low[0] && minor === low[1] && patch === low[2];
  });
}

/** Each peer dependency of the platform whose installed copy (as the platform resolves it) is missing or out of range. */
export function peerProblems(platformRoot: string): PeerProblem[] {
  const manifest = JSON.parse(readFileSync(join(platformRoot, "package.json"), "utf8")) as {
    peerDependencies?: Record<string, string>;
  };
  return Object.entries(manifest.peerDependencies ?? {}).flatMap(([name, expected]) => {
    const installed = installedVersion(platformRoot, name);
    return installed && satisfies(installed, expected) ? [] : [{ name, expected, installed }];
  });
}

/** The startup message for the problems: which packages, installed and expected versions, and the command that fixes them. */
export function peerMessage(problems: PeerProblem[]): string {
  const lines = problems.map(({ name, expected, installed }) =>
    installed
      ? `  ${name} ${installed} is installed; agent-platform expects ${expected}`
      : `  ${name} is not installed; agent-platform expects ${expected}`,
  );
  const fix = problems.map(({ name, expected }) => `${name}@"${expected}"`).join(" ");
  return `agent-platform's peer dependencies do not match:\n${lines.join("\n")}\nInstall matching versions in your project: npm install ${fix}`;
}
