// `npm start [-- --config path/to/langgraph.json] [--port 8787] [...wrangler dev flags]`
// Serves the platform on wrangler dev's local state (.wrangler/): builds the deployment, makes sure
// .dev.vars has a bootstrap API key, applies the D1 migrations, then runs `wrangler dev` and, once it
// answers, fires the Worker's scheduled handler at every minute as the deployed Cron Trigger does.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BuildError, buildDeployment, configPathFromArgs, PROJECT_ROOT } from "./lib/deployment.ts";
import { configuredCrons, localBaseUrl, type MinuteTicker, startMinuteTicker } from "./lib/minute-tick.ts";
import { applyLocalMigrations, DEV_API_KEY, offlineEnv, spawnWrangler, waitForOk } from "./lib/wrangler.ts";

const argv = process.argv.slice(2);
const option = (name: string, fallback: string): [string, string[]] => {
  const at = argv.findIndex((arg) => arg === name || arg.startsWith(`${name}=`));
  if (at < 0) return [fallback, []];
  const value = argv[at].includes("=") ? argv[at].split("=", 2)[1] : argv[at + 1];
  return [value, argv[at].includes("=") ? [argv[at]] : [argv[at], argv[at + 1]]];
};

/** Local secrets `npm start` needs, written to .dev.vars when missing (never overwritten). */
function ensureDevVars(): void {
  const file = join(PROJECT_ROOT, ".dev.vars");
  let current = existsSync(file) ? readFileSync(file, "utf8") : "";
  const add = (name: string, value: string, note: string) => {
    if (new RegExp(`^\\s*${name}\\s*=`, "m").test(current)) return;
    current = `${current && !current.endsWith("\n") ? `${current}\n` : current}${name}=${value}\n`;
    writeFileSync(file, current);
    console.log(`Wrote ${note} to .dev.vars`);
  };
  add("BOOTSTRAP_API_KEY", DEV_API_KEY, `the development API key (X-Api-Key: ${DEV_API_KEY})`);
  add("EXPORT_ENCRYPTION_KEY", randomBytes(32).toString("base64url"), "a random key for bulk-export credentials");
}

let configPath: string;
try {
  configPath = configPathFromArgs(argv);
  const { graphs } = await buildDeployment(configPath);
  console.log(`Deployment ${configPath}: graphs ${graphs.join(", ")}`);
} catch (error) {
  console.error(error instanceof BuildError ? `Build failed: ${error.message}` : error);
  process.exit(1);
}

ensureDevVars();
const [port, portArgs] = option("--port", "8787");
const [ip, ipArgs] = option("--ip", "127.0.0.1");
const [persistTo, persistArgs] = option("--persist-to", "");
const [, configArgs] = option("--config", "");
const consumed = new Set([...portArgs, ...ipArgs, ...persistArgs, ...configArgs]);
const passThrough = argv.filter((arg) => !consumed.has(arg));

// wrangler dev re-runs the [build] command; LANGGRAPH_JSON makes it build the same config.
const env = offlineEnv({ LANGGRAPH_JSON: configPath });
try {
  await applyLocalMigrations(persistTo || undefined, env);
} catch (error) {
  console.error(`Applying the D1 migrations failed: ${(error as Error).message}`);
  process.exit(1);
}

const persist = persistTo ? ["--persist-to", persistTo] : [];
const crons = configuredCrons().catch((error: Error) => {
  console.error(`Cannot read the crons of wrangler.toml, so no minute tick: ${error.message}`);
  return [] as string[];
});
const child = spawnWrangler(["dev", "--ip", ip, "--port", port, ...persist, ...passThrough], { env });
let ticker: MinuteTicker | undefined;
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
child.on("exit", (code) => {
  ticker?.stop();
  process.exit(code ?? 0);
});

// The minute tick starts once the Worker answers, so no tick is lost to a server still starting.
const baseUrl = localBaseUrl(ip, port);
try {
  await waitForOk(`${baseUrl}/ok`, 300_000, child);
  const expressions = await crons;
  if (expressions.length) {
    ticker = startMinuteTicker({ baseUrl, crons: expressions });
    console.log(
      `Firing the scheduled handler at every minute boundary for crons ${expressions.map((c) => `"${c}"`).join(", ")}, as the deployed Cron Trigger does`,
    );
  }
} catch (error) {
  if (child.exitCode === null) console.error(`No minute tick: ${(error as Error).message}`);
}
