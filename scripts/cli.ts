// `agent-platform <dev|build|deploy|new>`: the platform's command line, run from an agent project's own
// folder (bin/agent-platform.mjs). Reads ./langgraph.json or --config, like the LangGraph CLI.
//   dev     builds the project and serves it locally (local D1/DO/Queues/R2 state in .agent-platform/),
//           rebuilding and reloading it on change (scripts/lib/live-reload.ts)
//   build   builds the project and bundles its Worker into .agent-platform/build
//   deploy  builds, creates what the Cloudflare account lacks (D1 database, queue, R2 bucket, secrets),
//           applies the D1 migrations to the remote database and runs `wrangler deploy` (lib/deploy.ts)
//   new     writes a new project from a template (lib/new-project.ts); needs no langgraph.json
import { statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ensureDevVars } from "./lib/cli.ts";
import { DeployError, deploy, WRANGLER_OVERRIDE, wranglerRunner } from "./lib/deploy.ts";
import { BuildError, envFileValues, readConfig } from "./lib/deployment.ts";
import { sourceHashes, startLiveReload } from "./lib/live-reload.ts";
import { bundleWorker } from "./lib/local-runtime.ts";
import { runNew } from "./lib/new-project.ts";
import { peerMessage, peerProblems } from "./lib/peers.ts";
import { buildProject, type ProjectDeployment, projectBuildDir } from "./lib/project.ts";
import { PLATFORM_ROOT } from "./lib/root.ts";
import { parsePort, parseVars, serveLocally } from "./lib/serve.ts";
import { offlineEnv } from "./lib/wrangler.ts";

const USAGE = `Usage: agent-platform <command> [options]

Commands:
  dev      Build the project and serve it on the local Workers runtime
  build    Build the project and bundle its Worker (into .agent-platform/build)
  deploy   Build, create what the Cloudflare account lacks (D1 database, queue, R2 bucket, secrets),
           apply the D1 migrations, and wrangler deploy. Run again, it creates nothing twice
  new      Write a new project from a template: agent-platform new <folder> [--template <name>]
           (agent-platform new --help lists the templates)

Options (all commands):
  --config <path>          langgraph.json to use (default ./langgraph.json)
Options (dev):
  --port <port>            default 2024, as langgraph dev
  --host <address>         default 127.0.0.1
  --persist-to <dir>       local state (default .agent-platform/state)
  --var NAME:value         a Worker var over the config's (repeatable)
  --inspector-port <port>  expose workerd's V8 inspector
  --no-reload              do not watch the project (by default a change to langgraph.json, .env, .dev.vars,
                           wrangler config, graph, auth, http.app or ui file or a module they import
                           rebuilds and reloads the Worker in place: threads, runs, store and traces stay;
                           a run in flight is cut off and, within 30 s, resumes from its last checkpoint
                           on the new code, as after a restart; a failed rebuild prints its error and
                           keeps the last good build serving)
  --no-browser             accepted as langgraph dev does; this server never opens a browser
Options (deploy):
  --dry-run                print the plan (each step: create or exists) and bundle, changing nothing
  Anything after -- goes to wrangler deploy.
  ${WRANGLER_OVERRIDE}=<executable>  another wrangler for the deploy's Cloudflare calls`;

function fail(message: string, code = 1): never {
  console.error(message);
  process.exit(code);
}

const [command, ...rest] = process.argv.slice(2);
if (!command || command === "help" || command === "--help" || command === "-h") {
  console.log(USAGE);
  process.exit(command ? 0 : 2);
}
// `new` takes its own arguments and runs where there is no project yet.
if (command === "new") process.exit(runNew(rest));
if (!["dev", "build", "deploy"].includes(command)) fail(`Unknown command "${command}".\n\n${USAGE}`, 2);

const dashDash = rest.indexOf("--");
const passThrough = dashDash >= 0 ? rest.slice(dashDash + 1) : [];
const OPTIONS = {
  config: { type: "string" },
  port: { type: "string", default: "2024" },
  host: { type: "string", default: "127.0.0.1" },
  "persist-to": { type: "string" },
  var: { type: "string", multiple: true },
  "inspector-port": { type: "string" },
  "no-browser": { type: "boolean" },
  "no-reload": { type: "boolean" },
  "dry-run": { type: "boolean" },
} as const;
/** Flags only some commands take. */
const ONLY_FOR: Record<string, string> = {
  port: "dev",
  host: "dev",
  "persist-to": "dev",
  var: "dev",
  "inspector-port": "dev",
  "no-browser": "dev",
  "no-reload": "dev",
  "dry-run": "deploy",
};

let flags: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; strict: true }>>["values"];
try {
  const parsed = parseArgs({
    args: dashDash >= 0 ? rest.slice(0, dashDash) : rest,
    strict: true,
    options: OPTIONS,
    tokens: true,
  });
  for (const token of parsed.tokens) {
    if (token.kind === "option" && ONLY_FOR[token.name] && ONLY_FOR[token.name] !== command) {
      throw new Error(`--${token.name} is an option of "${ONLY_FOR[token.name]}", not of "${command}"`);
    }
  }
  flags = parsed.values;
} catch (error) {
  fail(`${(error as Error).message}\n\n${USAGE}`, 2);
}

const configPath = resolve(flags.config ?? "langgraph.json");
if (!statSync(configPath, { throwIfNoEntry: false })?.isFile()) {
  fail(
    `No ${relative(process.cwd(), configPath) || configPath} here: run agent-platform from your agent's folder, or pass --config`,
    2,
  );
}
const projectDir = resolve(configPath, "..");
const stateDir = join(projectDir, ".agent-platform");
// Packaging: wrangler's logs go to the project's folder too (the platform's may be a read-only install),
// and the shared LangGraph packages (peer dependencies) must be installed in matching versions.
process.env.WRANGLER_LOG_PATH ??= join(stateDir, "logs");
checkPeerDependencies();

/** Stops on a missing peer dependency (the build cannot bundle without it); warns on a version out of range. */
function checkPeerDependencies(): void {
  const problems = peerProblems(PLATFORM_ROOT);
  if (problems.length === 0) return;
  if (problems.some((problem) => problem.installed === undefined)) fail(peerMessage(problems), 2);
  console.warn(peerMessage(problems));
}

/** Warns when the running Node is older than the deployment's `node_version`. */
function checkNodeVersion(): void {
  const wanted = readConfig(configPath).node_version;
  const running = Number(process.versions.node.split(".")[0]);
  if (wanted && running < Number(wanted)) {
    console.warn(`langgraph.json asks for node_version ${wanted}; the build runs on Node ${process.versions.node}`);
  }
}

/** What the last build started from (live reload rebuilds on what changed since). */
let builtFrom: { hashes: Map<string, string>; since: number } | undefined;

async function build(): Promise<ProjectDeployment> {
  try {
    checkNodeVersion();
    // The Worker's local secrets (a development API key...) live in the project's .dev.vars.
    if (command === "dev") ensureDevVars(projectDir);
    if (command === "dev") {
      builtFrom = { since: Date.now(), hashes: sourceHashes(configPath, projectBuildDir(configPath)) };
    }
    // A deploy's Worker carries no value of the env file: the deploy sets them as secrets (lib/deploy.ts).
    const project = await buildProject(configPath, { omitEnvFile: command === "deploy" });
    console.log(`Built ${relative(process.cwd(), configPath) || configPath}: graphs ${project.graphs.join(", ")}`);
    return project;
  } catch (error) {
    fail(error instanceof BuildError ? `Build failed: ${error.message}` : String((error as Error).stack ?? error));
  }
}

/** `deploy`: the plan (with --dry-run), or the resources, secrets, migrations and `wrangler deploy`. */
async function deployProject(project: ProjectDeployment, dryRun: boolean): Promise<void> {
  try {
    await deploy({
      projectDir,
      stateDir,
      wranglerConfig: project.wranglerConfig,
      dryRun,
      passThrough,
      wrangler: wranglerRunner(projectDir, offlineEnv()),
      rebuild: async () => (await build()).wranglerConfig,
      envFile: envFileValues(configPath),
    });
  } catch (error) {
    fail(error instanceof DeployError ? `Deploy failed: ${error.message}` : String((error as Error).stack ?? error));
  }
}

const project = await build();
if (command === "dev") {
  try {
    const port = parsePort(flags.port, "--port");
    const inspectorPort =
      flags["inspector-port"] === undefined ? undefined : parsePort(flags["inspector-port"], "--inspector-port", false);
    const serving = await serveLocally({
      wranglerConfig: project.wranglerConfig,
      ip: flags.host,
      port,
      persistTo: resolve(flags["persist-to"] ?? join(stateDir, "state")),
      vars: parseVars(flags.var),
      inspectorPort,
    });
    if (flags["no-reload"]) console.log("Live reload off (--no-reload): restart to serve a change");
    else {
      startLiveReload({
        configPath,
        project,
        builtFrom,
        build: buildProject,
        reload: serving.reload,
      });
      console.log(
        "Watching the project: a change rebuilds and reloads the Worker (a run in flight is cut off and, within 30 s, resumes from its last checkpoint on the new code, as after a restart)",
      );
    }
  } catch (error) {
    fail((error as Error).message, 2);
  }
} else if (command === "build" || flags["dry-run"]) {
  if (flags["dry-run"]) await deployProject(project, true);
  const outDir = join(stateDir, "build");
  try {
    await bundleWorker(outDir, offlineEnv(), project.wranglerConfig);
  } catch (error) {
    fail(`Bundling the Worker failed: ${(error as Error).message}`);
  }
  console.log(`Worker bundled into ${relative(process.cwd(), outDir)} (wrangler config ${project.wranglerConfig})`);
} else {
  await deployProject(project, false);
}
