// `agent-platform new` and the templates it writes (templates/<name>/): each template, written into a
// fresh folder by the command as a user runs it, passes its own test (`npm test`) and type-checks
// (`npm run typecheck`) with this repository's packages linked in as `npm install` would put them.
// The command's refusals are checked through the same entry point.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import {
  createProject,
  DEFAULT_TEMPLATE,
  listTemplates,
  platformSource,
  TEMPLATES_DIR,
} from "../../scripts/lib/new-project.ts";
import { offlineEnv } from "../../scripts/lib/wrangler.ts";

const BIN = join(PROJECT_ROOT, "bin/agent-platform.mjs");
const NODE = join(PROJECT_ROOT, "node_modules/node/bin/node");
const TEMPLATES = ["agent", "approval", "memory", "minimal"];

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "templates-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** `agent-platform new ...args` from `cwd` (a folder without langgraph.json). */
function agentPlatformNew(args: string[], cwd = root) {
  return spawnSync(NODE, [BIN, "new", ...args], { cwd, encoding: "utf8", env: offlineEnv(), timeout: 60_000 });
}

/** `npm run <script>` in a project, on the repository's packages. */
function npmRun(dir: string, script: string) {
  return spawnSync("npm", ["run", "--silent", script], {
    cwd: dir,
    encoding: "utf8",
    env: offlineEnv({ npm_config_update_notifier: "false", NO_COLOR: "1" }),
    timeout: 120_000,
  });
}

describe("agent-platform new", () => {
  it("lists the four templates, the tool-calling agent first as the default", () => {
    expect(listTemplates().map((t) => t.name)).toEqual(TEMPLATES);
    expect(DEFAULT_TEMPLATE).toBe("agent");
    const help = agentPlatformNew(["--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: agent-platform new <folder> \[--template <name>\]/);
    expect(help.stdout).toMatch(/ {2}agent {5}A tool-calling agent .*\(default\)\n/);
    for (const name of TEMPLATES) expect(help.stdout).toContain(`  ${name} `);
  });

  it("writes the default template into a new folder, from a folder without langgraph.json", () => {
    const result = agentPlatformNew(["my-agent"]);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^Created my-agent from the "agent" template \(\d+ files\)\.\n/);
    expect(result.stdout).toContain(
      "  cd my-agent\n  npm install\n  # put OPENAI_API_KEY (or ANTHROPIC_API_KEY) in .env\n",
    );
    const dir = join(root, "my-agent");
    const files = readdirSync(dir, { recursive: true }).map(String).sort();
    expect(files).toEqual(
      [
        ".env",
        ".env.example",
        ".gitignore",
        "README.md",
        "langgraph.json",
        "package.json",
        "src",
        "src/graph.ts",
        "src/model.ts",
        "src/tools.ts",
        "test",
        "test/agent.test.ts",
        "test/openai-stand-in.ts",
        "tsconfig.json",
        "vitest.config.ts",
        "wrangler.jsonc",
      ].sort(),
    );
    // .env starts as .env.example (langgraph.json's env file must exist); git ignores it and the keys.
    expect(readFileSync(join(dir, ".env"), "utf8")).toBe(readFileSync(join(dir, ".env.example"), "utf8"));
    expect(readFileSync(join(dir, ".gitignore"), "utf8").split("\n")).toEqual(
      expect.arrayContaining(["node_modules/", ".agent-platform/", ".dev.vars", ".env"]),
    );
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    expect(manifest.name).toBe("my-agent");
    // Where the command came from (a checkout here), never a bare version: "agent-platform" on the npm
    // registry is another publisher's package.
    expect(manifest.devDependencies["agent-platform"]).toBe(`file:${PROJECT_ROOT}`);
  });

  it("refuses a folder that has something in it, a file, and an unknown template, saying why", () => {
    mkdirSync(join(root, "taken"));
    writeFileSync(join(root, "taken", "notes.txt"), "mine");
    const taken = agentPlatformNew(["taken", "--template", "minimal"]);
    expect(taken.status).toBe(1);
    expect(taken.stderr).toBe(
      "taken is not empty: agent-platform new writes only into a new or empty folder, so it overwrites nothing\n",
    );
    expect(readdirSync(join(root, "taken"))).toEqual(["notes.txt"]);

    writeFileSync(join(root, "a-file"), "");
    expect(agentPlatformNew(["a-file"]).stderr).toBe(
      "a-file is a file: give agent-platform new a new or empty folder\n",
    );

    const unknown = agentPlatformNew(["fresh", "--template", "chatbot"]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/^Unknown template "chatbot"\. The templates are:\n {2}agent /);
    for (const name of TEMPLATES) expect(unknown.stderr).toContain(`  ${name} `);
    expect(readdirSync(root)).not.toContain("fresh");

    const empty = mkdtempSync(join(tmpdir(), "no-templates-"));
    expect(() => createProject(join(root, "fresh"), "agent", { templatesDir: empty })).toThrow(
      `No templates in ${empty}: this install of agent-platform lacks its templates/ folder`,
    );
    rmSync(empty, { recursive: true });

    const missing = agentPlatformNew([]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/^Name the folder to create\n\nUsage: agent-platform new <folder>/);
  });

  it("writes into an existing empty folder, named for npm after it, and says what to do next", () => {
    mkdirSync(join(root, "My Agent!"));
    const result = agentPlatformNew(["My Agent!", "--template", "minimal"]);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('Created "My Agent!" from the "minimal" template');
    expect(result.stdout).toContain('  cd "My Agent!"\n');
    // No model, no key to set.
    expect(result.stdout).not.toContain("API_KEY");
    const manifest = JSON.parse(readFileSync(join(root, "My Agent!", "package.json"), "utf8"));
    expect(manifest.name).toBe("my-agent");

    const project = createProject(join(root, "pinned"), "minimal", { source: "file:/somewhere/agent-platform.tgz" });
    expect(project.files).toContain("src/graph.ts");
    expect(JSON.parse(readFileSync(join(project.dir, "package.json"), "utf8")).devDependencies).toMatchObject({
      "agent-platform": "file:/somewhere/agent-platform.tgz",
    });
    // Where it came from unknown: no entry at all, rather than a version npm would fetch from the registry.
    const unknown = createProject(join(root, "unknown"), "minimal", { source: undefined });
    expect(JSON.parse(readFileSync(join(unknown.dir, "package.json"), "utf8")).devDependencies).not.toHaveProperty(
      "agent-platform",
    );
    expect(unknown.platform).toBeUndefined();
  });

  it("names the tarball an installed package came from, as its installer's lockfile records it", () => {
    const base = join(root, "installed");
    const installed = join(base, "node_modules", "agent-platform");
    mkdirSync(installed, { recursive: true });
    const lock = (resolved: string) =>
      writeFileSync(
        join(base, "node_modules", ".package-lock.json"),
        JSON.stringify({ packages: { "node_modules/agent-platform": { version: "0.1.0", resolved } } }),
      );
    lock("file:../agent-platform-0.1.0.tgz");
    expect(platformSource(installed, false)).toBe(`file:${join(root, "agent-platform-0.1.0.tgz")}`);
    lock("https://registry.npmjs.org/agent-platform/-/agent-platform-0.1.0.tgz");
    expect(platformSource(installed, false)).toBe("0.1.0");
    expect(platformSource(join(root, "elsewhere"), false)).toBeUndefined();
  });

  it("the templates that call a model share one model chooser and one OpenAI stand-in, byte for byte", () => {
    const same = (file: string) =>
      ["approval", "memory"].map((name) => readFileSync(join(TEMPLATES_DIR, name, file), "utf8"));
    for (const file of ["src/model.ts", "test/openai-stand-in.ts", "tsconfig.json", "vitest.config.ts"]) {
      const agent = readFileSync(join(TEMPLATES_DIR, "agent", file), "utf8");
      expect(same(file), file).toEqual([agent, agent]);
    }
  });
});

describe.each(TEMPLATES)("the %s template", (name) => {
  let dir: string;
  beforeAll(() => {
    dir = join(root, `project-${name}`);
    const result = agentPlatformNew([`project-${name}`, "--template", name]);
    expect(result.status, result.stderr).toBe(0);
    symlinkSync(join(PROJECT_ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  });

  it("passes its own test", () => {
    const test = npmRun(dir, "test");
    expect(test.status, `${test.stdout}\n${test.stderr}`).toBe(0);
    expect(test.stdout).toMatch(/Tests\s+\d+ passed/);
    expect(test.stdout).not.toMatch(/failed|skipped/);
  });

  it("type-checks", () => {
    const check = npmRun(dir, "typecheck");
    expect(check.status, `${check.stdout}\n${check.stderr}`).toBe(0);
  });
});
