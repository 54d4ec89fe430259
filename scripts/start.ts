// `npm start [-- --config path/to/langgraph.json] [--port 8787] [--ip 127.0.0.1] [--persist-to dir]
//              [--var NAME:value]... [--inspector-port 9229]`
// Serves the platform on the local Workers runtime with local D1/DO/Queues/R2 state (.wrangler/state,
// the same as `wrangler dev`'s): builds the deployment, makes sure .dev.vars has a bootstrap API key,
// applies the D1 migrations, bundles the Worker as `wrangler deploy` does and serves it with Miniflare
// directly (scripts/lib/local-runtime.ts); then fires the scheduled handler at every minute boundary as
// the deployed Cron Trigger does. `npm run dev` is the same on `wrangler dev` (file watching).
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ensureDevVars } from "./lib/cli.ts";
import { BuildError, buildDeployment, configPathFromArgs, PROJECT_ROOT } from "./lib/deployment.ts";
import { bundleWorker, type LocalRuntime, serveWorker, stateDirectory } from "./lib/local-runtime.ts";
import { configuredCrons, localBaseUrl, type MinuteTicker, startMinuteTicker } from "./lib/minute-tick.ts";
import { applyLocalMigrations, offlineEnv } from "./lib/wrangler.ts";

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

const port = Number(flags.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535) fail(`--port must be a TCP port, got ${flags.port}`, 2);
const inspectorPort = flags["inspector-port"] === undefined ? undefined : Number(flags["inspector-port"]);
if (inspectorPort !== undefined && !(Number.isInteger(inspectorPort) && inspectorPort > 0 && inspectorPort <= 65_535))
  fail(`--inspector-port must be a TCP port, got ${flags["inspector-port"]}`, 2);
const vars: Record<string, string> = {};
for (const pair of flags.var ?? []) {
  const at = pair.indexOf(":");
  if (at <= 0) fail(`--var takes NAME:value, got ${pair}`, 2);
  vars[pair.slice(0, at)] = pair.slice(at + 1);
}

let configPath: string;
try {
  configPath = configPathFromArgs(flags.config ? ["--config", flags.config] : []);
  const { graphs } = await buildDeployment(configPath);
  console.log(`Deployment ${configPath}: graphs ${graphs.join(", ")}`);
} catch (error) {
  fail(error instanceof BuildError ? `Build failed: ${error.message}` : String((error as Error).stack ?? error));
}

ensureDevVars();
// wrangler (migrations, the bundle) runs in the project root: a relative path means the same for Miniflare.
const persistTo = flags["persist-to"] && resolve(PROJECT_ROOT, flags["persist-to"]);
// wrangler's bundle re-runs the [build] command; LANGGRAPH_JSON makes it build the same config.
const env = offlineEnv({ LANGGRAPH_JSON: configPath });
const bundleDir = join(stateDirectory(persistTo), "bundle");
try {
  await applyLocalMigrations(persistTo, env);
  await bundleWorker(bundleDir, env);
} catch (error) {
  fail(`Preparing the Worker failed: ${(error as Error).message}`);
}

let runtime: LocalRuntime | undefined;
let ticker: MinuteTicker | undefined;
let stopping = false;
// Installed before workerd starts: a signal during startup ends this process (workerd, in its process
// group, gets the terminal's signal too); once up, workerd is disposed of first.
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => {
    if (stopping || !runtime) process.exit(stopping ? 1 : 0);
    stopping = true;
    ticker?.stop();
    runtime.dispose().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });

try {
  runtime = await serveWorker({ bundleDir, ip: flags.ip, port, persistTo, vars, inspectorPort });
} catch (error) {
  fail(`The local Workers runtime did not start: ${(error as Error).stack ?? error}`);
}
// With --port 0 the system picks the port; the runtime knows which.
const baseUrl = port === 0 ? (await runtime.ready).origin : localBaseUrl(flags.ip, port);
console.log(`Agent Platform listening on ${baseUrl} (state ${stateDirectory(persistTo)})`);
if (inspectorPort) console.log(`V8 inspector: ws://127.0.0.1:${inspectorPort}/core:user:agent-platform`);

try {
  const crons = await configuredCrons();
  if (crons.length) {
    ticker = startMinuteTicker({ baseUrl, crons });
    console.log(
      `Firing the scheduled handler at every minute boundary for crons ${crons.map((c) => `"${c}"`).join(", ")}, as the deployed Cron Trigger does`,
    );
  }
} catch (error) {
  console.error(`Cannot read the crons of wrangler.toml, so no minute tick: ${(error as Error).message}`);
}
