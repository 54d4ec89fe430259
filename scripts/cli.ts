// `agent-platform <dev|build|deploy|new>`: the platform's command line, run from an agent project's own
// folder (bin/agent-platform.mjs). Reads ./langgraph.json or --config, like the LangGraph CLI.
//   dev     builds the project and serves it locally (local D1/DO/Queues/R2 state in .agent-platform/)
//   build   builds the project and bundles its Worker into .agent-platform/build
//   deploy  builds, applies the D1 migrations to the remote database and runs `wrangler deploy`
//   new     writes a new project from a template (lib/new-project.ts); needs no langgraph.json
import { statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ensureDevVars } from "./lib/cli.ts";
import { BuildError, readConfig } from "./lib/deployment.ts";
import { bundleWorker } from "./lib/local-runtime.ts";
import { runNew } from "./lib/new-project.ts";
import { buildProject, type ProjectDeployment } from "./lib/project.ts";
import { parsePort, parseVars, serveLocally } from "./lib/serve.ts";
import { offlineEnv, spawnWrangler } from "./lib/wrangler.ts";

const USAGE = `Usage: agent-platform <command> [options]

Commands:
  dev      Build the project and serve it on the local Workers runtime
  build    Build the project and bundle its Worker (into .agent-platform/build)
  deploy   Build, apply the D1 migrations to the remote database, and wrangler deploy
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
  --no-browser, --no-reload  accepted as langgraph dev does; this server never opens a browser or reloads
Options (deploy):
  --dry-run                bundle and check, without deploying or migrating
  Anything after -- goes to wrangler deploy.`;

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

/** Warns when the running Node is older than the deployment's `node_version`. */
function checkNodeVersion(): void {
  const wanted = readConfig(configPath).node_version;
  const running = Number(process.versions.node.split(".")[0]);
  if (wanted && running < Number(wanted)) {
    console.warn(`langgraph.json asks for node_version ${wanted}; the build runs on Node ${process.versions.node}`);
  }
}

async function build(): Promise<ProjectDeployment> {
  try {
    checkNodeVersion();
    // The Worker's local secrets (a development API key...) live in the project's .dev.vars.
    if (command === "dev") ensureDevVars(projectDir);
    const project = await buildProject(configPath);
    console.log(`Built ${relative(process.cwd(), configPath) || configPath}: graphs ${project.graphs.join(", ")}`);
    return project;
  } catch (error) {
    fail(error instanceof BuildError ? `Build failed: ${error.message}` : String((error as Error).stack ?? error));
  }
}

function runWranglerCommand(args: string[]): Promise<number> {
  return new Promise((done) => {
    const child = spawnWrangler(args, { cwd: projectDir, stdio: "inherit", env: offlineEnv() });
    child.on("exit", (code) => done(code ?? 1));
  });
}

const project = await build();
if (command === "dev") {
  try {
    const port = parsePort(flags.port, "--port");
    const inspectorPort =
      flags["inspector-port"] === undefined ? undefined : parsePort(flags["inspector-port"], "--inspector-port", false);
    await serveLocally({
      wranglerConfig: project.wranglerConfig,
      ip: flags.host,
      port,
      persistTo: resolve(flags["persist-to"] ?? join(stateDir, "state")),
      vars: parseVars(flags.var),
      inspectorPort,
    });
  } catch (error) {
    fail((error as Error).message, 2);
  }
} else if (command === "build" || flags["dry-run"]) {
  const outDir = join(stateDir, "build");
  try {
    await bundleWorker(outDir, offlineEnv(), project.wranglerConfig);
  } catch (error) {
    fail(`Bundling the Worker failed: ${(error as Error).message}`);
  }
  console.log(`Worker bundled into ${relative(process.cwd(), outDir)} (wrangler config ${project.wranglerConfig})`);
} else {
  const config = ["--config", project.wranglerConfig];
  const migrated = await runWranglerCommand(["d1", "migrations", "apply", "DB", "--remote", ...config]);
  if (migrated !== 0) fail("Applying the D1 migrations to the remote database failed; nothing was deployed");
  process.exit(await runWranglerCommand(["deploy", ...config, ...passThrough]));
}
