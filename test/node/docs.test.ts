// The docs against the tree (pure: reads files, starts nothing). For README.md and every docs/*.md:
// - every relative link and image (markdown or <img src>) names a file that exists, and every `#anchor`,
//   on the same page or another, names one of that page's headings (GitHub's slugs);
// - every repository path named in inline code, a code block or a link target exists:
//   - a path whose first folder is a top-level folder of the repository (src/, scripts/, test/, bench/,
//     migrations/, docs/...) or of src/ (threads/, http/...) must exist as given or, failing that, under
//     src/ (so `threads/object/thread-do.ts` means src/threads/object/thread-do.ts);
//   - any other file path (`runs/schemas.ts`, `thread-do.ts`, `wrangler.toml`: a name with an extension
//     of source, config or docs, alone or below folders) must end the path of some file in the tree.
// Not checked: URLs and URL paths (`/runs/query`), packages (`@langchain/...`), placeholders (`<id>`, `…`,
// `*`), paths outside the repository (`../shared/...`), and paths under a git-ignored folder (dist/,
// .wrangler/...: outputs of the build and of runs, absent from a fresh checkout). Each miss reads
// `page:line: path`.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const SRC = join(ROOT, "src");

/**
 * Mentions that are not this repository's files, each with why. Keyed by `page: path`, so an entry
 * covers one page only.
 */
const NOT_OURS: Record<string, string> = {
  "README.md: path/to/langgraph.json": "a placeholder for any deployment's config",
  "docs/bring-your-own-agent.md: src/graph.ts": "the example session writes the user's own project's graph",
  "docs/bring-your-own-agent.md: wrangler.json":
    "the config the CLI generates in a project's build folder (dist/deployments/...)",
  "docs/bring-your-own-agent.md: wrangler.jsonc": "a name a user's project may give its own wrangler config",
  "docs/benchmark.md: start.sh":
    "the reference server's start script (the benchmark's anchor), outside this repository",
  "docs/benchmark-history.md: start.sh": "the reference server's start script, outside this repository",
  "docs/generative-ui.md: entrypoint.css": "a stylesheet a user's UI bundle may carry",
  "docs/langgraph-json.md: file.ts": "the shape of a langgraph.json entry, not a file",
};

/** Folders .gitignore lists (`name/`): build and run outputs. */
function ignoredFolders(): Set<string> {
  const lines = readFileSync(join(ROOT, ".gitignore"), "utf8").split("\n");
  return new Set([
    ".git",
    ...lines
      .map((l) => l.trim())
      .filter((l) => /^[^#!*]+\/$/.test(l))
      .map((l) => l.slice(0, -1)),
  ]);
}

const IGNORED = ignoredFolders();

function folders(dir: string): Set<string> {
  return new Set(
    readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !IGNORED.has(e.name))
      .map((e) => e.name),
  );
}

/** Every file of the tree, relative to the root (git-ignored folders left out). */
function treeFiles(dir: string, into: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (IGNORED.has(entry.name)) continue;
    if (entry.isDirectory()) treeFiles(join(dir, entry.name), into);
    else into.push(relative(ROOT, join(dir, entry.name)));
  }
  return into;
}

const ROOT_FOLDERS = folders(ROOT);
const SRC_FOLDERS = folders(SRC);
const TREE_FILES = treeFiles(ROOT);

/** A file name with an extension of source, config, data or docs. */
const BARE_FILE = /^[\w.-]+\.(ts|tsx|mts|js|mjs|cjs|json|jsonc|toml|sql|sh|css|html|md|png|svg|yaml|yml|py)$/;

/** One page's lines, each marked as inside a fenced code block or not. */
function pageLines(page: string): { text: string; line: number; code: boolean }[] {
  let fenced = false;
  return readFileSync(join(ROOT, page), "utf8")
    .split("\n")
    .map((text, i) => {
      if (/^\s*```/.test(text)) {
        fenced = !fenced;
        return { text: "", line: i + 1, code: true };
      }
      return { text, line: i + 1, code: fenced };
    });
}

/** GitHub's heading slug: lowercase, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // links: their text
    .replace(/`/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** The anchors of a page's headings, numbered as GitHub numbers repeats (`x`, `x-1`, ...). */
function anchors(page: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { text, code } of pageLines(page)) {
    const heading = !code && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!heading) continue;
    const base = slug(heading[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

/** A line's inline code spans, and the line with them blanked (so a `](` in code is no link). */
function inlineCode(text: string): { spans: string[]; rest: string } {
  const spans: string[] = [];
  const rest = text.replace(/(`+)([^`]|[^`].*?[^`])\1(?!`)/g, (_, _ticks, body: string) => {
    spans.push(body.trim());
    return " ".repeat(body.length + 2 * _ticks.length);
  });
  return { spans, rest };
}

/** The targets of a line's links and images, markdown or `<img src>`. */
function linkTargets(prose: string): string[] {
  const targets = [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
  for (const m of prose.matchAll(/<img\b[^>]*\bsrc="([^"]+)"/g)) targets.push(m[1]);
  return targets;
}

/** The tokens of a piece of text that may be paths (a call such as `c.req.json()` is none). */
function tokens(text: string): string[] {
  return [...text.matchAll(/[^\s"'`()[\],;|]+/g)].filter((m) => text[m.index + m[0].length] !== "(").map((m) => m[0]);
}

/** What `token` names as a repository path to check, or undefined when it is not one. */
function repositoryPath(token: string): string | undefined {
  let path = token.replace(/[.:]+$/, ""); // sentence punctuation
  if (/:\/\/|[<>{}*…$=?&]/.test(path) || /^[/@~$#-]/.test(path) || path.startsWith("../")) return undefined;
  path = path.replace(/^\.\//, "").replace(/:[\w-]+$/, ""); // `./graphs/echo.ts:graph`, `file.ts:12`
  const [first] = path.split("/");
  if (IGNORED.has(first)) return undefined;
  if (ROOT_FOLDERS.has(first) || SRC_FOLDERS.has(first)) return path;
  return BARE_FILE.test(path.split("/").at(-1) ?? "") ? path : undefined;
}

/** Whether a path from `repositoryPath` names something in the tree. */
function exists(path: string): boolean {
  const [first] = path.split("/");
  if (ROOT_FOLDERS.has(first) || SRC_FOLDERS.has(first)) {
    return existsSync(join(ROOT, path)) || existsSync(join(SRC, path));
  }
  return TREE_FILES.some((file) => file === path || file.endsWith(`/${path}`));
}

const PAGES = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`),
];

/** Every broken link or anchor and every path that names nothing, as `page:line: what`. */
function misses(): { links: string[]; paths: string[]; allowed: Set<string> } {
  const links: string[] = [];
  const paths: string[] = [];
  const allowed = new Set<string>();
  for (const page of PAGES) {
    for (const { text, line, code } of pageLines(page)) {
      const { spans, rest } = code ? { spans: [text], rest: "" } : inlineCode(text);
      const mentions = spans.flatMap(tokens);
      for (const target of linkTargets(rest)) {
        if (/^[a-z][\w+.-]*:/i.test(target)) continue; // http:, https:, mailto:
        const [file, anchor] = target.split("#", 2);
        const resolved = file ? join(dirname(join(ROOT, page)), decodeURIComponent(file)) : join(ROOT, page);
        if (!existsSync(resolved)) links.push(`${page}:${line}: ${target}`);
        else if (anchor !== undefined) {
          const isPage = resolved.endsWith(".md") && statSync(resolved).isFile();
          if (!isPage || !anchors(relative(ROOT, resolved)).has(anchor)) links.push(`${page}:${line}: ${target}`);
        }
      }
      for (const token of mentions) {
        const path = repositoryPath(token);
        if (path === undefined || exists(path)) continue;
        if (`${page}: ${path}` in NOT_OURS) allowed.add(`${page}: ${path}`);
        else paths.push(`${page}:${line}: ${path}`);
      }
    }
  }
  return { links, paths, allowed };
}

describe("the docs name what the tree holds", () => {
  const found = misses();

  it("reads README.md and every page of docs/", () => {
    expect(PAGES.length).toBeGreaterThan(10);
    expect(PAGES).toContain("docs/architecture.md");
  });

  it("links only to files that exist, and to anchors their pages have", () => {
    expect(found.links).toEqual([]);
  });

  it("names only repository files and folders that exist", () => {
    expect(found.paths).toEqual([]);
  });

  it("allows only mentions that occur and name nothing in the tree", () => {
    expect(Object.keys(NOT_OURS).filter((key) => !found.allowed.has(key))).toEqual([]);
  });
});

describe("the checker itself", () => {
  it.each([
    ["Moving an existing deployment's data", "moving-an-existing-deployments-data"],
    ["Before issue 28 (2026-11-26 20:02 UTC)", "before-issue-28-2026-11-26-2002-utc"],
    ["Deployment config: `langgraph.json`", "deployment-config-langgraphjson"],
    ["`npm test`", "npm-test"],
    ["Units per operation, their price and the ceilings", "units-per-operation-their-price-and-the-ceilings"],
  ])("slugs %s as %s", (heading, expected) => {
    expect(slug(heading)).toBe(expected);
  });

  it.each([
    ["src/threads/object/thread-do.ts", "src/threads/object/thread-do.ts", true],
    ["threads/object/thread-do.ts", "threads/object/thread-do.ts", true],
    ["`src/threads/thread-do.ts`.", "src/threads/thread-do.ts", false],
    ["./graphs/echo.ts:graph", "graphs/echo.ts", true],
    ["scripts/lib/serve.ts:12", "scripts/lib/serve.ts", true],
    ["thread-do.ts", "thread-do.ts", true],
    ["thread-checkpoints.ts", "thread-checkpoints.ts", false],
    ["runs/schemas.ts", "runs/schemas.ts", true],
    ["object/thread-record.ts", "object/thread-record.ts", false],
    ["migrations/", "migrations/", true],
  ])("%s names %s, which exists: %s", (token, path, present) => {
    const named = repositoryPath(token.replace(/`/g, ""));
    expect(named).toBe(path);
    expect(exists(path)).toBe(present);
  });

  it.each([
    "/runs/query",
    "http://127.0.0.1:8787/ok",
    "@langchain/langgraph-sdk",
    "<workspace>/threads/<0–7>",
    "dist/registry.generated.ts",
    "../shared/tools/cpu-profile.mjs",
    "runs/query",
    "text/event-stream",
    "x-d1-bookmark",
  ])("%s is no repository path", (token) => {
    expect(repositoryPath(token)).toBeUndefined();
  });

  it("reads a call as code, not a file name", () => {
    expect(tokens("await c.req.json() from graphs/echo.ts")).toEqual(["await", "from", "graphs/echo.ts"]);
  });
});
