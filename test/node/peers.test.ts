// The startup check of the package's peer dependencies (the LangGraph packages a project shares with the
// platform): which are missing or out of range, and the message naming installed and expected versions.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import { peerMessage, peerProblems, satisfies } from "../../scripts/lib/peers.ts";

// Outside the repository: its node_modules would answer for what the fake platform lacks.
const dir = mkdtempSync(join(tmpdir(), "peers-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A platform folder declaring `peers`, with `installed` packages in its node_modules. */
function platform(peers: Record<string, string>, installed: Record<string, string>): string {
  const root = join(dir, String(Math.random()).slice(2));
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, "package.json"), JSON.stringify({ name: "agent-platform", peerDependencies: peers }));
  for (const [name, version] of Object.entries(installed)) {
    mkdirSync(join(root, "node_modules", name), { recursive: true });
    writeFileSync(join(root, "node_modules", name, "package.json"), JSON.stringify({ name, version }));
  }
  return root;
}

describe("the peer dependency check", () => {
  it("reads ranges as npm's caret, >= and exact versions", () => {
    expect(satisfies("1.4.17", "^1.4.17")).toBe(true);
    expect(satisfies("1.9.0", "^1.4.17")).toBe(true);
    expect(satisfies("1.4.16", "^1.4.17")).toBe(false);
    expect(satisfies("2.0.0", "^1.4.17")).toBe(false);
    expect(satisfies("0.3.5", "^0.3.1")).toBe(true);
    expect(satisfies("0.4.0", "^0.3.1")).toBe(false);
    expect(satisfies("1.2.13-rc.1", "^1.2.0")).toBe(true);
    expect(satisfies("3.1.0", ">=2.0.0")).toBe(true);
    expect(satisfies("1.1.5", "1.1.5")).toBe(true);
    expect(satisfies("1.1.6", "1.1.5")).toBe(false);
    expect(satisfies("2.0.1", "^1.0.0 || ^2.0.0")).toBe(true);
  });

  it("names each missing or mismatched package with its installed and expected versions", () => {
    const root = platform(
      { "@langchain/core": "^1.2.13", "@langchain/langgraph": "^1.4.17", "@langchain/langgraph-sdk": "^2.0.0" },
      { "@langchain/core": "0.3.80", "@langchain/langgraph": "1.4.20" },
    );
    const problems = peerProblems(root);
    expect(problems).toEqual([
      { name: "@langchain/core", expected: "^1.2.13", installed: "0.3.80" },
      { name: "@langchain/langgraph-sdk", expected: "^2.0.0", installed: undefined },
    ]);
    const message = peerMessage(problems);
    expect(message).toContain("@langchain/core 0.3.80 is installed; agent-platform expects ^1.2.13");
    expect(message).toContain("@langchain/langgraph-sdk is not installed; agent-platform expects ^2.0.0");
    expect(message).toContain('npm install @langchain/core@"^1.2.13" @langchain/langgraph-sdk@"^2.0.0"');
  });

  it("finds nothing to say about this repository's own install", () => {
    expect(peerProblems(PROJECT_ROOT)).toEqual([]);
  });
});
