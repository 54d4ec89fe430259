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

/** Paths the docs name that are not this repository's files, each with why. */
const NOT_OURS: Record<string, string> = {
  "path/to/langgraph.json": "a placeholder for any deployment's config",
  "src/graph.ts": "the graph a user's own project holds, in bring-your-own-agent's example session",
  "wrangler.json": "the config npm start --config and the CLI generate in a project's .agent-platform/deployments/...",
  "start.sh": "the reference server's start script (the benchmark's anchor), outside this repository",
  "entrypoint.css": "a stylesheet a user's UI bundle may carry",
  "file.ts": "the shape of a langgraph.json entry, not a file",
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

const read = (page: string) => readFileSync(join(ROOT, page), "utf8");

/** A page's lines, each marked as inside a fenced code block or not. */
function pageLines(markdown: string): { text: string; line: number; code: boolean }[] {
  let fenced = false;
  return markdown.split("\n").map((text, i) => {
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
  for (const { text, code } of pageLines(read(page))) {
    const heading = !code && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!heading) continue;
    const base = slug(heading[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

/** One piece of a page: the text of a code line or inline code span, or a link target, at its line. */
interface Mention {
  line: number;
  text: string;
}

/**
 * A page's code (each line of its code blocks, each inline code span, which may wrap over lines) and
 * its link targets, read from the prose with the code spans blanked out (a `](` in code is no link).
 */
function pageParts(markdown: string): { code: Mention[]; links: Mention[] } {
  const lines = pageLines(markdown);
  const code = lines.filter((l) => l.code && l.text).map(({ line, text }) => ({ line, text }));
  const prose = lines.map((l) => (l.code ? "" : l.text)).join("\n");
  const lineAt = (offset: number) => prose.slice(0, offset).split("\n").length;
  const blanked = prose.replace(
    /(`+)((?:[^`\n]|\n(?![ \t]*\n))+?)\1(?!`)/g,
    (span, _ticks, body: string, offset: number) => {
      code.push({ line: lineAt(offset), text: body.replace(/\s+/g, " ").trim() });
      return span.replace(/[^\n]/g, " ");
    },
  );
  const links = blanked
    .split("\n")
    .flatMap((text, i) => linkTargets(text).map((target) => ({ line: i + 1, text: target })));
  return { code, links };
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
    const parts = pageParts(read(page));
    for (const { line, text: target } of parts.links) {
      if (/^[a-z][\w+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const [file, anchor] = target.split("#", 2);
      const resolved = file ? join(dirname(join(ROOT, page)), decodeURIComponent(file)) : join(ROOT, page);
      if (!existsSync(resolved)) links.push(`${page}:${line}: ${target}`);
      else if (anchor !== undefined) {
        const isPage = resolved.endsWith(".md") && statSync(resolved).isFile();
        if (!isPage || !anchors(relative(ROOT, resolved)).has(anchor)) links.push(`${page}:${line}: ${target}`);
      }
    }
    for (const { line, text } of parts.code) {
      for (const token of tokens(text)) {
        const path = repositoryPath(token);
        if (path === undefined || exists(path)) continue;
        if (path in NOT_OURS) allowed.add(path);
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

  it("reads an inline code span that wraps over lines as one", () => {
    const page =
      "Run `wrangler d1\nmigrations apply`, see `src/x.ts`.\n\n[y](y.md#z) `](no.md)`\n```sh\nnpm start\n```";
    expect(pageParts(page)).toEqual({
      code: [
        { line: 6, text: "npm start" },
        { line: 1, text: "wrangler d1 migrations apply" },
        { line: 2, text: "src/x.ts" },
        { line: 4, text: "](no.md)" },
      ],
      links: [{ line: 4, text: "y.md#z" }],
    });
  });

  it("reads a call as code, not a file name", () => {
    expect(tokens("await c.req.json() from graphs/echo.ts")).toEqual(["await", "from", "graphs/echo.ts"]);
  });
});
