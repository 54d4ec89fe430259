// The import graph of src/ (pure: reads the files, starts nothing). Every relative `import`,
// `export ... from` and `import("...")`, type-only ones included, must (a) form no circle and (b) keep
// the layer rule docs/architecture.md states under "Layout": a module imports only from its own layer or a lower
// one, and a domain only from itself or a domain listed before it.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const SRC = join(ROOT, "src");

/** One relative import: from a file in src/ to another, both as paths relative to src/. */
interface ImportEdge {
  from: string;
  to: string;
  line: number;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}

/** Blanks out comments and the insides of strings and templates, keeping offsets and line breaks. */
function codeOnly(text: string): string {
  let out = "";
  let i = 0;
  const keepBreaks = (s: string) => s.replace(/[^\n]/g, " ");
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === "/" && next === "/") {
      const end = text.indexOf("\n", i);
      const stop = end === -1 ? text.length : end;
      out += keepBreaks(text.slice(i, stop));
      i = stop;
    } else if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      const stop = end === -1 ? text.length : end + 2;
      out += keepBreaks(text.slice(i, stop));
      i = stop;
    } else if (c === '"' || c === "'" || c === "`") {
      // Keep the quotes and plain string bodies (module specifiers are strings); templates are blanked.
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === "\\" ? 2 : 1;
      const body = text.slice(i + 1, j);
      out += c + (c === "`" ? keepBreaks(body) : body) + (j < text.length ? c : "");
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** The module a relative specifier names, relative to src/, or undefined when it is outside src/. */
function resolveSpecifier(fromFile: string, specifier: string, files: Set<string>): string | undefined {
  const base = resolve(dirname(fromFile), specifier);
  for (const candidate of [base, `${base}.ts`, join(base, "index.ts")]) {
    if (files.has(candidate)) return relative(SRC, candidate);
  }
  return undefined;
}

const STATIC_IMPORT =
  /^[ \t]*(import|export)\b(\s+type\b)?([^;'"]*?)\bfrom\s*(["'])([^"'\n]+)\4|^[ \t]*import\s*(["'])([^"'\n]+)\6/gm;
const DYNAMIC_IMPORT = /\bimport\s*\(\s*(["'])([^"'\n]+)\1\s*\)/g;

/** Whether an import clause names types only: `import type`, or braces whose every name says `type`. */
function namesTypesOnly(typeKeyword: string | undefined, clause: string): boolean {
  if (typeKeyword) return true;
  const braces = clause.match(/^\s*\{([^}]*)\}\s*$/);
  if (!braces) return false;
  const names = braces[1]
    .split(",")
    .map((n) => n.trim())
    .filter(Boolean);
  return names.length > 0 && names.every((n) => /^type\s/.test(n));
}

/** Every relative import between files of src/. */
function importEdges(): { edges: ImportEdge[]; outside: string[]; files: string[] } {
  const paths = sourceFiles(SRC);
  const files = new Set(paths);
  const edges: ImportEdge[] = [];
  const outside: string[] = [];
  for (const path of paths) {
    const code = codeOnly(readFileSync(path, "utf8"));
    const lineAt = (offset: number) => code.slice(0, offset).split("\n").length;
    const add = (specifier: string, offset: number, typeOnly: boolean) => {
      if (!specifier.startsWith(".")) return; // a package
      const from = relative(SRC, path);
      const to = resolveSpecifier(path, specifier, files);
      if (to === undefined) outside.push(`${from}:${lineAt(offset)} → ${specifier}`);
      else edges.push({ from, to, line: lineAt(offset), typeOnly });
    };
    for (const m of code.matchAll(STATIC_IMPORT)) {
      if (m[5] !== undefined) add(m[5], m.index, namesTypesOnly(m[2], m[3]));
      else add(m[7], m.index, false);
    }
    // `import("./x")` as a value is a lazy runtime import; in a type position, a type-only one.
    for (const m of code.matchAll(DYNAMIC_IMPORT)) add(m[2], m.index, false);
  }
  return { edges, outside, files: paths.map((p) => relative(SRC, p)) };
}

/** The circles of the graph, each as a path that ends where it starts: one per back edge of a depth-first walk. */
function importCycles(edges: ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) {
    const targets = next.get(e.from) ?? [];
    if (!targets.includes(e.to)) targets.push(e.to);
    next.set(e.from, targets);
  }
  for (const targets of next.values()) targets.sort();
  const cycles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, "open");
    stack.push(node);
    for (const target of next.get(node) ?? []) {
      const seen = state.get(target);
      if (seen === "open") cycles.push([...stack.slice(stack.indexOf(target)), target]);
      else if (seen === undefined) visit(target);
    }
    stack.pop();
    state.set(node, "done");
  };
  for (const node of [...next.keys()].sort()) if (!state.has(node)) visit(node);
  return cycles;
}

// The layers of docs/architecture.md, lowest first ("Layout"). Files of one layer may import each other; a domain
// imports only from itself or a domain listed before it. Route files (`routes.ts`, `*-routes.ts`)
// belong to the top layer, whatever their folder.
/** Layer 1: what every domain shares. */
const SHARED = ["core", "db", "workspace", "observability", "deployment", "limits-guard"];
/** Layer 2: the domains, in the order docs/architecture.md lists them. */
const DOMAINS = [
  "tenancy",
  "tracing",
  "export",
  "store",
  "assistants",
  "threads",
  "crons",
  "a2a",
  "mcp",
  "ui",
  "console",
  "system",
];
const HTTP_RANK = 100;
const AUTH_RANK = 101;
const TOP_RANK = 102;

/** Where a file of src/ sits: its rank (lower is lower), and the name the rule reports. */
function layerOf(file: string): { rank: number; name: string } {
  const [folder] = file.split("/");
  const name = file.split("/").at(-1) ?? file;
  if (name === "routes.ts" || name.endsWith("-routes.ts")) return { rank: TOP_RANK, name: "routes" };
  if (!file.includes("/") || folder === "background") return { rank: TOP_RANK, name: "entry" };
  if (SHARED.includes(folder)) return { rank: 0, name: "shared" };
  const domain = DOMAINS.indexOf(folder);
  if (domain !== -1) return { rank: 1 + domain, name: `domain ${folder}` };
  if (folder === "http") return { rank: HTTP_RANK, name: "http" };
  if (folder === "auth") return { rank: AUTH_RANK, name: "auth" };
  throw new Error(`${file}: its folder ${folder}/ is in no layer; add it to the table in this test`);
}

/** Whether `edge` imports from a higher layer, or from a domain listed after its own. */
function isUpward(edge: ImportEdge): boolean {
  return layerOf(edge.to).rank > layerOf(edge.from).rank;
}

const show = (e: ImportEdge) =>
  `${e.from}:${e.line} → ${e.to} (${layerOf(e.from).name} → ${layerOf(e.to).name}${e.typeOnly ? ", type-only" : ""})`;

describe("the import graph of src/", () => {
  const { edges, outside, files } = importEdges();

  it("parses the imports of every file", () => {
    expect(files.length).toBeGreaterThan(100);
    expect(edges.length).toBeGreaterThan(500);
    // The one import that leaves src/: the registry the build generates.
    expect(outside).toEqual([expect.stringMatching(/^deployment\/index\.ts:\d+ → .*dist\/registry\.generated\.ts$/)]);
  });

  it("places every file in a layer", () => {
    for (const file of files) expect(() => layerOf(file)).not.toThrow();
  });

  it("has no import circle, type-only imports included", () => {
    const cycles = importCycles(edges).map((cycle) => cycle.join(" → "));
    expect(cycles).toEqual([]);
  });

  it("imports nothing from a higher layer or a later domain, type-only imports included", () => {
    expect(edges.filter(isUpward).map(show)).toEqual([]);
  });
});

describe("the checker itself", () => {
  const edge = (from: string, to: string): ImportEdge => ({ from, to, line: 1, typeOnly: false });

  it("finds a circle and reports it as a path", () => {
    const cycles = importCycles([
      edge("a.ts", "b.ts"),
      edge("b.ts", "c.ts"),
      edge("c.ts", "a.ts"),
      edge("c.ts", "d.ts"),
    ]);
    expect(cycles).toEqual([["a.ts", "b.ts", "c.ts", "a.ts"]]);
    expect(importCycles([edge("a.ts", "b.ts"), edge("a.ts", "c.ts"), edge("b.ts", "c.ts")])).toEqual([]);
  });

  it.each([
    ["threads/service.ts", "assistants/resolve.ts", false],
    ["assistants/resolve.ts", "threads/client.ts", true],
    ["http/app-env.ts", "auth/guards.ts", true],
    ["threads/routes.ts", "auth/guards.ts", false],
    ["threads/service.ts", "threads/routes.ts", true],
    ["db/schema.ts", "crons/schemas.ts", true],
    ["core/limits.ts", "db/sql.ts", false],
    ["limits-guard/guard.ts", "core/bytes.ts", false],
    ["db/client.ts", "limits-guard/guard.ts", false],
    ["background/cron.ts", "threads/runs/routes.ts", false],
  ])("%s → %s is upward: %s", (from, to, upward) => {
    expect(isUpward(edge(from, to))).toBe(upward);
  });
});
