// `npm start [-- --config path/to/langgraph.json] [--port 8787] [--ip 127.0.0.1] [--persist-to dir]
//              [--var NAME:value]... [--inspector-port 9229]`
// Serves the platform on the local Workers runtime with local D1/DO/Queues/R2 state (.wrangler/state,
// the same as `wrangler dev`'s): builds the deployment, makes sure .dev.vars has a bootstrap API key,
// applies the D1 migrations, bundles the Worker as `wrangler deploy` does and serves it with Miniflare
// directly (scripts/lib/local-runtime.ts); then fires the scheduled handler at every minute boundary as
// the deployed Cron Trigger does. `npm run dev` is the same on `wrangler dev` (file watching).
import { copyFileSync, existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ensureDevVars } from "./lib/cli.ts";
import { BuildError, buildDeployment, configPathFromArgs, PROJECT_ROOT } from "./lib/deployment.ts";
import { buildProject } from "./lib/project.ts";
import { parsePort, parseVars, serveLocally } from "./lib/serve.ts";
import { WRANGLER_CONFIG } from "./lib/wrangler.ts";

const ROOT_CONFIG = join(PROJECT_ROOT, "langgraph.json");

function fail(message: string, code = 1): never {
  console.error(message);
  process.exit(code);
}

let flags: {
  config?: string;
  port: string;
  ip: string;
  "persist-to"?: string;
  var?: string[];
  "inspector-port"?: string;
};
try {
  flags = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: {
      config: { type: "string" },
      port: { type: "string", default: "8787" },
      ip: { type: "string", default: "127.0.0.1" },
      "persist-to": { type: "string" },
      var: { type: "string", multiple: true },
      "inspector-port": { type: "string" },
    },
  }).values;
} catch (error) {
  fail(
    `${(error as Error).message}\n(npm start takes --config, --port, --ip, --persist-to, --var NAME:value and --inspector-port; for other wrangler dev flags use npm run dev)`,
    2,
  );
}

let port: number;
let inspectorPort: number | undefined;
let vars: Record<string, string>;
try {
  port = parsePort(flags.port, "--port");
  inspectorPort =
    flags["inspector-port"] === undefined ? undefined : parsePort(flags["inspector-port"], "--inspector-port", false);
  vars = parseVars(flags.var);
} catch (error) {
  fail((error as Error).message, 2);
}

// This repository's langgraph.json builds into dist/ (what `npm run deploy` deploys). Any other config
// builds into a folder of its own with a generated wrangler config, as the agent-platform CLI does, so
// servers of different deployments run side by side and none rewrites another's registry.
let configPath: string;
let wranglerConfig = WRANGLER_CONFIG;
ensureDevVars();
try {
  configPath = configPathFromArgs(flags.config ? ["--config", flags.config] : []);
  let graphs: string[];
  if (configPath === ROOT_CONFIG) ({ graphs } = await buildDeployment(configPath));
  else {
    const project = await buildProject(configPath);
    graphs = project.graphs;
    wranglerConfig = project.wranglerConfig;
    // Its local secrets: the project's own .dev.vars when it has one (with what the Worker needs added
    // if missing), this repository's otherwise.
    const devVars = join(project.buildDir, ".dev.vars");
    if (!existsSync(join(project.projectDir, ".dev.vars"))) copyFileSync(join(PROJECT_ROOT, ".dev.vars"), devVars);
    else ensureDevVars(project.buildDir);
  }
  console.log(`Deployment ${configPath}: graphs ${graphs.join(", ")}`);
} catch (error) {
  fail(error instanceof BuildError ? `Build failed: ${error.message}` : String((error as Error).stack ?? error));
}

await serveLocally({
  wranglerConfig,
  ip: flags.ip,
  port,
  // wrangler (migrations, the bundle) runs in the project root: a relative path means the same for Miniflare.
  persistTo: flags["persist-to"] && resolve(PROJECT_ROOT, flags["persist-to"]),
  vars,
  inspectorPort,
  // wrangler's bundle re-runs the [build] command; LANGGRAPH_JSON makes it build the same config.
  env: { LANGGRAPH_JSON: configPath },
});
