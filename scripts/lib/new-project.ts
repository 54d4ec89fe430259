/**
 * `agent-platform new <folder> [--template <name>]`: writes a ready agent project from one of the
 * templates shipped inside the package (`templates/<name>/`), offline. The copy is the template as it
 * is, except:
 *   - `gitignore` becomes `.gitignore` (npm leaves a `.gitignore` out of a packed tarball);
 *   - `.env` is written from `.env.example` (langgraph.json's `env` names it, and the build needs it);
 *   - package.json takes the folder's name, and its `agent-platform` devDependency where this package
 *     came from (`platformSource`), never a bare version.
 * It needs no langgraph.json where it runs, and never writes into a folder that has something in it.
 */

import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { PROJECT_ROOT } from "./deployment.ts";
import { FROM_SOURCES } from "./root.ts";

export const TEMPLATES_DIR = join(PROJECT_ROOT, "templates");
export const DEFAULT_TEMPLATE = "agent";

/** Left out of a copy: what a template's own test run or a local `dev` may have left in the package's tree. */
const NOT_COPIED = new Set(["node_modules", ".agent-platform", ".wrangler", ".dev.vars", ".env"]);

export const NEW_USAGE = "Usage: agent-platform new <folder> [--template <name>]";

/** A refusal with the exit code the command ends with (2: a usage error). */
export class NewProjectError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

export interface TemplateInfo {
  name: string;
  /** Its package.json's description. */
  description: string;
}

/** The templates shipped with the package: every folder of `templates/` with a langgraph.json, by name. */
export function listTemplates(dir: string = TEMPLATES_DIR): TemplateInfo[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => existsSync(join(dir, name, "langgraph.json")))
    .sort()
    .map((name) => {
      const manifest = join(dir, name, "package.json");
      const description = existsSync(manifest)
        ? String((JSON.parse(readFileSync(manifest, "utf8")) as { description?: unknown }).description ?? "")
        : "";
      return { name, description };
    });
}

/** The templates, one a line, the default marked: what `new` prints with a refusal about them. */
export function describeTemplates(templates: TemplateInfo[] = listTemplates()): string {
  const width = Math.max(...templates.map((t) => t.name.length));
  return templates
    .map((t) => `  ${t.name.padEnd(width)}  ${t.description}${t.name === DEFAULT_TEMPLATE ? " (default)" : ""}`)
    .join("\n");
}

/** An npm package name from a folder's name: lower case, only the characters npm allows. */
export function packageName(folder: string): string {
  const name = basename(folder)
    .toLowerCase()
    .replace(/[^a-z0-9._~-]+/g, "-")
    .replace(/^[._-]+|-+$/g, "");
  return name.slice(0, 214) || "agent-project";
}

/**
 * Where this package came from, as a spec the project's npm installs it from again, for the project's
 * `agent-platform` devDependency. Never a bare version: the name `agent-platform` on the npm registry
 * is another publisher's package, so "0.1.0" would install a stranger's code.
 * - run from a checkout (sources): `file:<checkout>`;
 * - installed (by npm or npx) from a tarball or a folder: the `resolved` of its entry in the installing
 *   folder's lockfile, made absolute (`file:/path/agent-platform-0.1.0.tgz`);
 * - installed from a registry: that version;
 * - else undefined: the project gets no entry, and the next steps say how to add it.
 */
export function platformSource(root: string = PROJECT_ROOT, fromSources: boolean = FROM_SOURCES): string | undefined {
  if (fromSources) return `file:${root}`;
  if (basename(dirname(root)) !== "node_modules") return undefined;
  const base = dirname(dirname(root));
  for (const lock of [join(base, "node_modules/.package-lock.json"), join(base, "package-lock.json")]) {
    if (!existsSync(lock)) continue;
    const entry = (
      JSON.parse(readFileSync(lock, "utf8")) as { packages?: Record<string, { resolved?: string; version?: string }> }
    ).packages?.["node_modules/agent-platform"];
    const resolved = entry?.resolved;
    if (!resolved) continue;
    if (resolved.startsWith("file:")) return `file:${resolve(base, resolved.slice("file:".length))}`;
    if (/^https?:/.test(resolved) && entry.version) return entry.version;
  }
  return undefined;
}

export interface NewProject {
  dir: string;
  template: string;
  /** The project's `agent-platform` devDependency; undefined when where this package came from is unknown. */
  platform?: string;
  /** The files written, relative to `dir`, sorted. */
  files: string[];
}

function filesUnder(dir: string, prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`],
  );
}

/**
 * Writes the template `template` into `target` (created if missing; refused unless empty). `shownAs`
 * is how messages name the folder (as the user typed it).
 */
export function createProject(
  target: string,
  template: string = DEFAULT_TEMPLATE,
  options: { templatesDir?: string; source?: string; shownAs?: string } = {},
): NewProject {
  const shown = options.shownAs ?? target;
  const templatesDir = options.templatesDir ?? TEMPLATES_DIR;
  const templates = listTemplates(templatesDir);
  if (!templates.length) {
    throw new NewProjectError(
      `No templates in ${templatesDir}: this install of agent-platform lacks its templates/ folder`,
    );
  }
  if (!templates.some((t) => t.name === template)) {
    throw new NewProjectError(`Unknown template "${template}". The templates are:\n${describeTemplates(templates)}`, 2);
  }
  const dir = resolve(target);
  const existing = statSync(dir, { throwIfNoEntry: false });
  if (existing && !existing.isDirectory()) {
    throw new NewProjectError(`${shown} is a file: give agent-platform new a new or empty folder`);
  }
  if (existing && readdirSync(dir).length > 0) {
    throw new NewProjectError(
      `${shown} is not empty: agent-platform new writes only into a new or empty folder, so it overwrites nothing`,
    );
  }
  mkdirSync(dir, { recursive: true });
  const source = join(templatesDir, template);
  cpSync(source, dir, {
    recursive: true,
    filter: (path) => path === source || !NOT_COPIED.has(basename(path)),
  });

  // The copies are the user's to edit: a read-only install (or npm's cache) hands its files over read-only.
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if (!entry.isSymbolicLink()) chmodSync(path, statSync(path).mode | (entry.isDirectory() ? 0o700 : 0o600));
  }
  const ignore = join(dir, "gitignore");
  if (existsSync(ignore)) renameSync(ignore, join(dir, ".gitignore"));
  const example = join(dir, ".env.example");
  if (existsSync(example)) writeFileSync(join(dir, ".env"), readFileSync(example));

  const manifestPath = join(dir, "package.json");
  if (existsSync(manifestPath)) {
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as {
      name?: string;
      devDependencies?: Record<string, string>;
    };
    manifest.name = packageName(dir);
    if (manifest.devDependencies?.["agent-platform"] !== undefined) {
      const source = "source" in options ? options.source : platformSource();
      if (source) manifest.devDependencies["agent-platform"] = source;
      else delete manifest.devDependencies["agent-platform"];
    }
    writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  }
  const written = existsSync(manifestPath)
    ? (JSON.parse(readFileSync(manifestPath, "utf8")) as { devDependencies?: Record<string, string> })
    : {};
  return { dir, template, files: filesUnder(dir).sort(), platform: written.devDependencies?.["agent-platform"] };
}

/** What to do next, printed after the project is written. */
function nextSteps(project: NewProject, cwd: string): string {
  const path = relative(cwd, project.dir) || ".";
  // Quoted when a shell would split or expand it.
  const shown = /^[\w./-]+$/.test(path) ? path : JSON.stringify(path);
  // A template whose settings name an API key needs one before it runs.
  const example = join(project.dir, ".env.example");
  const usesModel = existsSync(example) && /^OPENAI_API_KEY=/m.test(readFileSync(example, "utf8"));
  return [
    `Created ${shown} from the "${project.template}" template (${project.files.length} files).`,
    "",
    "Next:",
    ...(shown === "." ? [] : [`  cd ${shown}`]),
    ...(project.platform
      ? ["  npm install"]
      : ["  npm install -D <the agent-platform tarball or folder you ran this from>   # then: npm install"]),
    ...(usesModel ? ["  # put OPENAI_API_KEY (or ANTHROPIC_API_KEY) in .env"] : []),
    "  npm test                 # the template's own test, offline",
    "  npx agent-platform dev   # serves it on http://127.0.0.1:2024",
    "",
    "The README in the folder says more.",
  ].join("\n");
}

/** The `new` command: parses its arguments, writes the project, prints what to do next; answers the exit code. */
export function runNew(args: string[], cwd: string = process.cwd()): number {
  let folder: string | undefined;
  let template: string;
  try {
    const { values, positionals } = parseArgs({
      args,
      strict: true,
      allowPositionals: true,
      options: { template: { type: "string", short: "t" }, help: { type: "boolean", short: "h" } },
    });
    if (values.help) {
      console.log(`${NEW_USAGE}\n\nTemplates:\n${describeTemplates()}`);
      return 0;
    }
    if (positionals.length !== 1) {
      throw new Error(positionals.length ? `One folder, not ${positionals.length}` : "Name the folder to create");
    }
    [folder] = positionals;
    template = values.template ?? DEFAULT_TEMPLATE;
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${NEW_USAGE}\n\nTemplates:\n${describeTemplates()}`);
    return 2;
  }
  try {
    const project = createProject(resolve(cwd, folder), template, { shownAs: folder });
    console.log(nextSteps(project, cwd));
    return 0;
  } catch (error) {
    if (error instanceof NewProjectError) {
      console.error(error.message);
      return error.exitCode;
    }
    throw error;
  }
}
