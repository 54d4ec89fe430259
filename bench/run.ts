// `npm run bench [-- --url http://host:port --api-key KEY] [--duration 5] [--concurrency 8]
//                 [--scenario name]... [--var NAME=value]... [--json]`
// Without --url it starts the platform on a fresh local state (wrangler dev on loopback), runs the
// scenarios against it and stops it again; a scenario that needs a deployment of its own (e.g.
// store-search, with a semantic store index) gets a local server of that deployment. With --url it
// only ever talks to that server.

import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { availableParallelism, cpus } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { Client } from "@langchain/langgraph-sdk";
import { PROJECT_ROOT } from "../scripts/lib/deployment.ts";
import { type LocalServer, startLocalServer } from "../scripts/lib/local-runtime.ts";
import { scratchDir } from "../scripts/lib/scratch.ts";
import { DEV_API_KEY, freePort } from "../scripts/lib/wrangler.ts";
import { type BenchContext, makeRequest, type Scenario } from "./context.ts";
import { type HeapSampler, sampleIsolateHeap, workerInspectorUrl } from "./isolate-heap.ts";
import { runScenario, type ScenarioResult } from "./load.ts";
import { anchorCost, cloudflareCost } from "./prices.ts";
import { type ReferenceServer, startReference } from "./reference.ts";
import { formatCompareTable, formatTable } from "./report.ts";
import { figure, formatCeilingTable, formatCostTable, formatUnitsTable } from "./report-units.ts";
import { findScenario, SCENARIOS } from "./scenarios.ts";
import { ceilings, connectMeter, type UsageMeter } from "./usage.ts";

const HELP = `Usage: npm run bench -- [options]

  --url <url>          benchmark an already running server (default: start one locally, plus one per
                       deployment a scenario needs, e.g. store-search's bench/fixtures/semantic/langgraph.json)
  --api-key <key>      X-Api-Key for authenticated scenarios (default: the development key)
  --server-pid <pid>   with --url: the server's root process, for server CPU per operation (Linux /proc)
  --inspector <url>    with --url: the Worker's V8 inspector (npm start --inspector-port P:
                       ws://127.0.0.1:P/core:user:agent-platform), for the isolate's peak heap
  --duration <s>       measured seconds per scenario (default 5)
  --warmup <s>         unmeasured warm-up seconds per scenario (default 1)
  --concurrency <n>    concurrent closed-loop workers (default 8)
  --max-ops <n>        cap on measured operations per scenario (default 200000)
  --scenario <name>    run only this scenario; repeatable (default: all)
  --var NAME=value     a Worker var for the local server (e.g. AGENT_TRACING=off); repeatable.
                       LIMITS_GUARD=off runs it without the limits guard, and so without its usage meter
  --json               print the results as a JSON array on stdout (the table goes to stderr)
  --compare            start the platform AND the reference server (the LangGraph.js dev server, via
                       the anchor's start.sh) and run each scenario the reference can run on both,
                       alternating platform, reference, platform, reference; one side-by-side table
  --rounds <n>         with --compare: rounds per scenario (default 2)
  --list               list the scenarios and exit

Under the table: the units each operation used (Worker requests, Durable Object calls and SQLite rows by
class, D1 queries and rows, queue messages, R2 operations, the most subrequests of one invocation), as
the platform's usage meter counts them (it needs the limits guard, on in the local server and npm start,
and the admin key); their price at Cloudflare's list prices beside the anchor's (bench/prices.ts); and
each part's ceiling (bench/ceilings.ts), with bytes stored per operation when the bench started the server.

Scenarios:
${SCENARIOS.map((s) => `  ${s.name.padEnd(18)} ${s.description}`).join("\n")}`;

/** Bounds how long one operation may hang, and so how far a scenario can overrun its duration. */
const OP_TIMEOUT_MS = 10_000;
/** How much server output to keep for the error message when the local server fails to start. */
const SERVER_LOG_LINES = 60;

const CPU_NOTE =
  "cpu ms/op: server CPU (user + system, the whole process tree, from /proc) over the measured window per successful operation; '-' when the bench does not know the server's PID (--server-pid).";

class UsageError extends Error {}

interface Options {
  url?: string;
  apiKey: string;
  serverPid?: number;
  /** The Worker's inspector WebSocket URL, for the isolate heap. */
  inspector?: string;
  durationMs: number;
  warmupMs: number;
  concurrency: number;
  /** --concurrency was given: it then overrides each scenario's own concurrency. */
  concurrencyForced: boolean;
  maxOps: number;
  scenarios: Scenario[];
  /** Worker vars for the local server. */
  vars: Record<string, string>;
  json: boolean;
  compare: boolean;
  rounds: number;
}

function numberOption(raw: string | undefined, name: string, fallback: number, check: (n: number) => boolean): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(value) || !check(value)) throw new UsageError(`invalid --${name}: ${raw}`);
  return value;
}

function parseOptions(argv: string[]): Options | "help" | "list" {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      url: { type: "string" },
      "api-key": { type: "string" },
      "server-pid": { type: "string" },
      inspector: { type: "string" },
      duration: { type: "string" },
      warmup: { type: "string" },
      concurrency: { type: "string" },
      "max-ops": { type: "string" },
      scenario: { type: "string", multiple: true },
      var: { type: "string", multiple: true },
      json: { type: "boolean", default: false },
      compare: { type: "boolean", default: false },
      rounds: { type: "string" },
      list: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) return "help";
  if (values.list) return "list";

  let url: string | undefined;
  if (values.url !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(values.url);
    } catch {
      throw new UsageError(`invalid --url: ${values.url}`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
      throw new UsageError(`--url must be http(s): ${values.url}`);
    // Keep any path prefix (a server behind a proxy), drop the trailing slash so paths join cleanly.
    url = `${parsed.origin}${parsed.pathname}`.replace(/\/+$/, "");
  }

  const names = (values.scenario ?? [])
    .flatMap((value) => value.split(","))
    .map((name) => name.trim())
    .filter(Boolean);
  const scenarios = names.length
    ? [...new Set(names)].map((name) => {
        const scenario = findScenario(name);
        if (!scenario)
          throw new UsageError(`unknown scenario "${name}"; available: ${SCENARIOS.map((s) => s.name).join(", ")}`);
        return scenario;
      })
    : [...SCENARIOS];

  const vars: Record<string, string> = {};
  for (const entry of values.var ?? []) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(entry);
    if (!match) throw new UsageError(`invalid --var ${entry}: expected NAME=value`);
    vars[match[1]] = match[2];
  }
  if (url && Object.keys(vars).length)
    throw new UsageError("--var sets the local server's vars; it has no effect with --url");

  const compare = values.compare ?? false;
  if (compare && url) throw new UsageError("--compare starts both servers itself; it does not take --url");
  if (!compare && values.rounds !== undefined) throw new UsageError("--rounds is for --compare");
  const serverPid = numberOption(values["server-pid"], "server-pid", 0, (n) => Number.isInteger(n) && n > 0);
  if (serverPid && !url) throw new UsageError("--server-pid is for --url; the bench knows the local server's PID");
  if (values.inspector && !url) throw new UsageError("--inspector is for --url; the bench opens the local server's");

  return {
    url,
    vars,
    serverPid: serverPid || undefined,
    inspector: values.inspector,
    apiKey: values["api-key"] ?? DEV_API_KEY,
    durationMs: numberOption(values.duration, "duration", 5, (n) => n > 0 && n <= 3600) * 1000,
    warmupMs: numberOption(values.warmup, "warmup", 1, (n) => n >= 0 && n <= 600) * 1000,
    concurrency: numberOption(values.concurrency, "concurrency", 8, (n) => Number.isInteger(n) && n >= 1 && n <= 1024),
    concurrencyForced: values.concurrency !== undefined,
    maxOps: numberOption(
      values["max-ops"],
      "max-ops",
      200_000,
      (n) => Number.isInteger(n) && n >= 1 && n <= 10_000_000,
    ),
    scenarios,
    json: values.json ?? false,
    compare,
    rounds: numberOption(values.rounds, "rounds", 2, (n) => Number.isInteger(n) && n >= 1 && n <= 100),
  };
}

/** One server the scenarios run against. */
interface Target {
  url: string;
  /** Undefined: send no key (the reference server needs none). */
  apiKey?: string;
  serverPid?: number;
  serverLog?: () => string[];
  /** The platform's usage meter, when it has one (limits guard on), and its local state directory. */
  usage?: UsageMeter;
  persistDir?: string;
}

/** A platform the scenarios run on: its target, and its isolate's heap sampler when the bench has one. */
interface Platform {
  target: Target;
  heap?: HeapSampler;
}

/**
 * A scenario's absolute targets, met or missed: for figures the reference cannot give a ratio for (it
 * has no such feature), with the units per operation the meter counted.
 */
function targetLines(result: ScenarioResult): string[] {
  const { targets } = result;
  if (!targets || result.failed) return [];
  const check = (name: string, value: number | undefined, target: number | undefined) =>
    target === undefined
      ? []
      : [
          `${name} ${value === undefined ? "-" : value.toFixed(2)} ms, target ≤ ${target} ms: ${
            value === undefined ? "not measured" : value <= target ? "met" : "MISSED"
          }`,
        ];
  const perOp = result.units?.perOp;
  return [
    "absolute targets (the reference server has no semantic search: no ratio):",
    ...check("  p50", result.p50, targets.p50Ms).concat(
      check("  server CPU per op", result.cpuMsPerOp, targets.cpuMsPerOp),
    ),
    ...(perOp
      ? [
          `  per op: Durable Object rows read ${figure(perOp.objectRowsRead)}, D1 rows read ${figure(perOp.d1RowsRead)},` +
            ` object calls ${figure(perOp.objectRequests)}, Worker requests ${figure(perOp.workerRequests)}`,
        ]
      : []),
  ];
}

/** A fresh context per scenario run, so setups cannot leak into each other. */
function contextFor(target: Target, heap?: HeapSampler): BenchContext {
  return {
    baseUrl: target.url,
    apiKey: target.apiKey,
    client: new Client({
      apiUrl: target.url,
      apiKey: target.apiKey ?? null,
      timeoutMs: OP_TIMEOUT_MS,
      // The SDK queues calls beyond 4 at a time by default: the load generator sets the concurrency.
      callerOptions: { maxRetries: 0, maxConcurrency: Number.POSITIVE_INFINITY },
    }),
    timeoutMs: OP_TIMEOUT_MS,
    state: {},
    request: makeRequest(target.url, target.apiKey, OP_TIMEOUT_MS),
    serverPid: target.serverPid,
    notes: [],
    serverLog: target.serverLog,
    usage: target.usage,
    persistDir: target.persistDir,
    heap,
  };
}

const log = (message: string) => process.stderr.write(`${message}\n`);

function environmentLine(options: Options, url: string, local: boolean): string {
  const cpuModel = cpus()[0]?.model.trim() ?? "unknown CPU";
  return [
    `node ${process.version}`,
    `${availableParallelism()} CPUs (${cpuModel})`,
    `target ${url}${local ? " (local npm start, fresh state)" : ""}`,
    `concurrency ${options.concurrency}`,
    `duration ${options.durationMs / 1000} s/scenario (+${options.warmupMs / 1000} s warm-up)`,
  ].join(" | ");
}

async function main(): Promise<number> {
  let options: Options;
  try {
    const parsed = parseOptions(process.argv.slice(2));
    if (parsed === "help" || parsed === "list") {
      console.log(parsed === "help" ? HELP : SCENARIOS.map((s) => `${s.name}\t${s.description}`).join("\n"));
      return 0;
    }
    options = parsed;
  } catch (error) {
    log(`${(error as Error).message}\n\n${HELP}`);
    return 2;
  }

  // First Ctrl-C: stop issuing operations, print what was measured, stop the servers. A second one
  // leaves at once (after a hard kill of each local server's process group, if it is up yet).
  const controller = new AbortController();
  /** The local servers the bench started (one per deployment), for the signal handler and cleanup. */
  const started: { server?: LocalServer; stateDir: string }[] = [];
  let reference: ReferenceServer | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (!controller.signal.aborted) {
      log(`\n${signal}: stopping (press Ctrl-C again to quit immediately)`);
      controller.abort();
      return;
    }
    for (const { server, stateDir } of started) {
      if (server?.child.pid) {
        try {
          process.kill(-server.child.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      rmSync(stateDir, { recursive: true, force: true });
    }
    process.exit(130);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  const serverLog: string[] = [];
  /** The export writer's per-file log lines (they carry the encoder's memory). */
  const exportLog: string[] = [];
  const results: ScenarioResult[] = [];
  /** The platform per deployment (undefined: this repository's langgraph.json, or --url). */
  const platforms = new Map<string | undefined, Platform>();

  /** A local server of `config` (a langgraph.json relative to the project root; default: this repository's). */
  const startPlatform = async (config: string | undefined): Promise<Platform> => {
    const stateDir = scratchDir("bench-state");
    const entry: (typeof started)[number] = { stateDir };
    started.push(entry);
    const inspectorPort = await freePort();
    log(`Starting the platform locally${config ? ` with ${config}` : ""} (state in ${stateDir}) ...`);
    const startedAt = Date.now();
    const server = await startLocalServer({
      persistTo: stateDir,
      ...(config ? { config: join(PROJECT_ROOT, config) } : {}),
      inspectorPort,
      // A throw-away key for bulk-export credentials (the state dir is deleted afterwards anyway).
      vars: {
        EXPORT_ENCRYPTION_KEY: randomBytes(24).toString("base64url"),
        // The limits guard, as in npm start: its usage meter counts the units each operation costs
        // (`--var LIMITS_GUARD=off` measures without it, and without units).
        LIMITS_GUARD: "paid",
        ...options.vars,
        BOOTSTRAP_API_KEY: options.apiKey,
      },
      // wrangler dev runs the [build] command with the `node` on PATH: make it this Node 22, even
      // when the bench is started as `node bench/run.ts` outside npm (which would put
      // node_modules/.bin first).
      env: { PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}` },
      log: (chunk) => {
        const lines = chunk.split("\n").filter((line) => line.trim());
        serverLog.push(...lines);
        for (const line of lines) if (line.includes('"export file written"')) exportLog.push(line);
        if (serverLog.length > SERVER_LOG_LINES) serverLog.splice(0, serverLog.length - SERVER_LOG_LINES);
      },
    }).catch((error: Error) => {
      throw new Error(
        `the local server did not start: ${error.message}\n--- server output ---\n${serverLog.join("\n")}`,
      );
    });
    entry.server = server;
    log(
      `Server up at ${server.url} after ${((Date.now() - startedAt) / 1000).toFixed(1)} s (server pid ${server.child.pid})`,
    );
    return connectPlatform(server.url, workerInspectorUrl(inspectorPort), server.child.pid, stateDir);
  };

  const connectPlatform = async (
    url: string,
    inspector: string | undefined,
    serverPid: number | undefined,
    persistDir: string | undefined,
  ): Promise<Platform> => {
    const heap = inspector
      ? await sampleIsolateHeap(inspector).catch((error: Error) => {
          log(`No isolate heap figures: ${error.message}`);
          return undefined;
        })
      : undefined;
    const usage = await connectMeter(url, options.apiKey);
    if (!usage) log("No usage meter on the server (limits guard off, or not the admin key): no units per operation.");
    return {
      target: { url, apiKey: options.apiKey, serverPid, serverLog: () => [...exportLog], usage, persistDir },
      heap,
    };
  };

  /** The platform a scenario runs on: --url, or the local server of its deployment (started on first use). */
  const platformFor = async (scenario?: Scenario): Promise<Platform> => {
    const config = options.url ? undefined : scenario?.deployment;
    let platform = platforms.get(config);
    if (!platform) {
      platform = options.url
        ? await connectPlatform(options.url, options.inspector, options.serverPid, undefined)
        : await startPlatform(config);
      platforms.set(config, platform);
    }
    return platform;
  };

  try {
    const platform = await platformFor(options.scenarios.find((s) => !s.deployment) ?? options.scenarios[0]);
    let env = environmentLine(options, platform.target.url, !options.url);
    if (options.compare) {
      reference = await startReference(log);
      env += ` | reference ${reference.url} (LangGraph.js dev server, pid ${reference.pid}) | ${options.rounds} round(s)`;
    }
    log(env);

    const scenarios = options.compare ? options.scenarios.filter((s) => s.reference !== false) : options.scenarios;
    const skipped = options.scenarios.filter((s) => !scenarios.includes(s)).map((s) => s.name);
    if (skipped.length) log(`The reference cannot run ${skipped.join(", ")}: skipped.`);
    for (const scenario of scenarios) {
      if (controller.signal.aborted) break;
      log(`- ${scenario.name}: ${scenario.description}`);
      const { target: platform, heap } = await platformFor(scenario);
      // The reference needs no API key: its client sends none (null also skips the SDK's env lookup).
      const targets: [Target, ScenarioResult["server"]][] = reference
        ? [
            [platform, "platform"],
            [{ url: reference.url, serverPid: reference.pid }, "reference"],
          ]
        : [[platform, undefined]];
      for (let round = 1; round <= (options.compare ? options.rounds : 1); round++) {
        for (const [target, label] of targets) {
          if (controller.signal.aborted) break;
          if (label) log(`  round ${round}, ${label}`);
          const onPlatform = target === platform;
          if (onPlatform) heap?.reset();
          const measured = await runScenario(scenario, contextFor(target, onPlatform ? heap : undefined), {
            concurrency: options.concurrencyForced
              ? options.concurrency
              : (scenario.concurrency ?? options.concurrency),
            durationMs: options.durationMs,
            warmupMs: options.warmupMs,
            maxOps: options.maxOps,
            signal: controller.signal,
          });
          const heapPeakMb = onPlatform ? heap?.peakMb() : undefined;
          const result = heapPeakMb === undefined ? measured : measured.map((row) => ({ ...row, heapPeakMb }));
          results.push(...(label ? result.map((row) => ({ ...row, server: label, round })) : result));
        }
      }
    }

    const notes = [
      "Latencies and ops/s cover successful operations; errors are non-2xx responses or exceptions.",
      CPU_NOTE,
    ];
    for (const result of results) {
      const lines = [...(result.notes ?? []), ...targetLines(result)];
      if (lines.length) notes.push("", `${result.scenario}:`, ...lines.map((line) => `  ${line}`));
    }
    if (controller.signal.aborted)
      notes.push("Interrupted: the last scenario covers a partial run; later ones did not run.");
    const detail = options.compare
      ? `${formatCompareTable(results)}\n\nEach run:\n${formatTable(
          results.map((row) => ({ ...row, scenario: `${row.scenario} [${row.server} ${row.round}]` })),
        )}`
      : formatTable(results);
    const unitRows = options.compare
      ? results.map((row) => ({ ...row, scenario: `${row.scenario} [${row.round}]` }))
      : results;
    const units = results.some((row) => row.units)
      ? [
          "Units per operation, counted by the platform's usage meter (src/limits-guard/usage.ts) over each measured window:",
          formatUnitsTable(unitRows),
          "req/op: Worker invocations (HTTP, plus cron ticks and queue batches); DO calls/op: requests each class received (RPC calls,",
          "fetches, alarms); DO rows r/w: its SQLite rows read/written (setAlarm writes one); D1 q r/w: D1 queries that read / write;",
          "max subreq/inv: the most subrequests one invocation made in the window, and where. Work in flight at the window's edges",
          "(the minute tick, index writes after a response) lands in the window it finishes in.",
          "",
          formatCostTable(unitRows),
          "",
          formatCeilingTable(unitRows),
        ].join("\n")
      : "";
    const table = `${env}\n\n${detail}\n\n${notes.join("\n")}${units ? `\n\n${units}` : ""}`;
    if (options.json) {
      log(`\n${table}`);
      const enriched = results.map((row) =>
        row.units
          ? {
              ...row,
              cost: cloudflareCost(row.units.perOp),
              anchor: anchorCost(row.work),
              ceilings: ceilings(row.units),
            }
          : row,
      );
      console.log(JSON.stringify(enriched, null, 2));
    } else {
      console.log(`\n${table}`);
    }
    if (controller.signal.aborted) return 130;
    return results.some((result) => result.failed) ? 1 : 0;
  } catch (error) {
    log(`bench: ${(error as Error).message}`);
    return controller.signal.aborted ? 130 : 1;
  } finally {
    for (const platform of platforms.values()) platform.heap?.close();
    for (const { server, stateDir } of started) {
      if (server) {
        log("Stopping the local server ...");
        await server.stop();
      }
      rmSync(stateDir, { recursive: true, force: true });
    }
    if (reference) await reference.stop();
  }
}

process.exitCode = await main();
