// `npm run dev [-- --config path/to/langgraph.json] [--port 8787] [...wrangler dev flags]`
// `npm start` on `wrangler dev` instead of Miniflare directly: the same state (.wrangler/), plus
// wrangler's file watching (src/, graphs/: rebuild and reload), inspector and request log. Builds the
// deployment, makes sure .dev.vars has a bootstrap API key, applies the D1 migrations, then runs
// `wrangler dev` and, once it answers, fires the scheduled handler at every minute as a Cron Trigger does.

import { ensureDevVars, option as optionOf } from "./lib/cli.ts";
import { BuildError, buildDeployment, configPathFromArgs } from "./lib/deployment.ts";
import { LOCAL_LIMITS_GUARD } from "./lib/local-runtime.ts";
import {
  configuredCrons,
  localBaseUrl,
  type MinuteTicker,
  startMinuteTicker,
  WRANGLER_DEV_SCHEDULED_PATH,
} from "./lib/minute-tick.ts";
import { limitsGuardNotice } from "./lib/serve.ts";
import { applyLocalMigrations, offlineEnv, spawnWrangler, waitForOk } from "./lib/wrangler.ts";

const argv = process.argv.slice(2);
const option = (name: string, fallback: string) => optionOf(argv, name, fallback);

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
// The limits guard is on, as in npm start (a later `--var LIMITS_GUARD:...` of the caller wins).
const guard = ["--var", `LIMITS_GUARD:${LOCAL_LIMITS_GUARD}`];
const guardMode =
  passThrough
    .filter((arg, i) => passThrough[i - 1] === "--var" && arg.startsWith("LIMITS_GUARD:"))
    .at(-1)
    ?.slice("LIMITS_GUARD:".length) ?? LOCAL_LIMITS_GUARD;
const child = spawnWrangler(["dev", "--ip", ip, "--port", port, ...persist, ...guard, ...passThrough], { env });
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
  console.log(limitsGuardNotice(guardMode));
  const expressions = await crons;
  if (expressions.length) {
    ticker = startMinuteTicker({ baseUrl, crons: expressions, scheduledPath: WRANGLER_DEV_SCHEDULED_PATH });
    console.log(
      `Firing the scheduled handler at every minute boundary for crons ${expressions.map((c) => `"${c}"`).join(", ")}, as the deployed Cron Trigger does`,
    );
  }
} catch (error) {
  if (child.exitCode === null) console.error(`No minute tick: ${(error as Error).message}`);
}
