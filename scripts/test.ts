// `npm test`: the whole suite. Builds the deployment, type-checks every project, checks formatting and
// lint (Biome), runs the Workers tests inside workerd and the Node tests (build step + end to end against
// npm start's runtime), then prints one line per suite and a final `N passed, M failed` line that CI reads.
// `npm test -- --fast` skips the slow tier (tests of real time: the minute tick, servers killed and
// restarted), for the inner loop; CI runs everything.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { CHROMIUM_MISSING, findChromium, SCREENSHOT_DIR } from "./lib/chromium.ts";
import { BuildError, buildDeployment, PROJECT_ROOT } from "./lib/deployment.ts";
import { offlineEnv, runWrangler } from "./lib/wrangler.ts";

interface SuiteResult {
  name: string;
  passed: number;
  failed: number;
  seconds: number;
}

const results: SuiteResult[] = [];
const reportsDir = join(PROJECT_ROOT, ".tmp/test-reports");

function run(command: string, args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: PROJECT_ROOT, stdio: "inherit", env: offlineEnv() });
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    child.on("error", () => resolve(1));
  });
}

async function timed(name: string, body: () => Promise<{ passed: number; failed: number }>): Promise<void> {
  const started = Date.now();
  console.log(`\n=== ${name} ===`);
  const outcome = await body().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    return { passed: 0, failed: 1 };
  });
  results.push({ name, ...outcome, seconds: (Date.now() - started) / 1000 });
}

const fast = process.argv.slice(2).includes("--fast");

/** Runs one vitest config and reads its pass/fail counts from the JSON report. */
async function vitest(
  config: string,
  report: string,
  extra: string[] = [],
): Promise<{ passed: number; failed: number }> {
  const outputFile = join(reportsDir, report);
  rmSync(outputFile, { force: true });
  const code = await run(process.execPath, [
    join(PROJECT_ROOT, "node_modules/vitest/vitest.mjs"),
    "run",
    "--config",
    config,
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=${outputFile}`,
    ...extra,
  ]);
  if (!existsSync(outputFile)) return { passed: 0, failed: 1 };
  const summary = JSON.parse(readFileSync(outputFile, "utf8")) as { numPassedTests: number; numFailedTests: number };
  // A crash outside any test (a failing setup file, say) must still count as a failure.
  const failed = summary.numFailedTests || (code === 0 ? 0 : 1);
  return { passed: summary.numPassedTests, failed };
}

mkdirSync(reportsDir, { recursive: true });

await timed("build (langgraph.json → registry)", async () => {
  try {
    await buildDeployment(join(PROJECT_ROOT, "langgraph.json"));
    return { passed: 1, failed: 0 };
  } catch (error) {
    if (error instanceof BuildError) console.error(`Build failed: ${error.message}`);
    throw error;
  }
});

await timed("typecheck (tsc --noEmit)", async () => {
  const types = join(PROJECT_ROOT, "worker-configuration.d.ts");
  const config = join(PROJECT_ROOT, "wrangler.toml");
  if (!existsSync(types) || statSync(types).mtimeMs < statSync(config).mtimeMs) await runWrangler(["types"]);
  let passed = 0;
  let failed = 0;
  const tsc = join(PROJECT_ROOT, "node_modules/typescript/bin/tsc");
  for (const project of ["tsconfig.json", "tsconfig.node.json", "test/worker/tsconfig.json", "console/tsconfig.json"]) {
    const code = await run(process.execPath, [tsc, "--noEmit", "-p", project]);
    console.log(`tsc -p ${project}: ${code === 0 ? "ok" : "errors"}`);
    if (code === 0) passed++;
    else failed++;
  }
  return { passed, failed };
});

// Formatting and lint findings fail the suite like a type error; warnings count too. `npm run format`
// applies the formatting and the safe fixes.
await timed("lint (biome check)", async () => {
  const biome = join(PROJECT_ROOT, "node_modules/@biomejs/biome/bin/biome");
  const code = await run(process.execPath, [biome, "check", "--error-on-warnings", "--max-diagnostics=none", "."]);
  return code === 0 ? { passed: 1, failed: 0 } : { passed: 0, failed: 1 };
});

await timed("workers (vitest in workerd)", () => vitest("vitest.config.ts", "workers.json"));
await timed(`node (build step + end to end on npm start's runtime${fast ? ", slow tier skipped" : ""})`, () =>
  vitest("vitest.node.config.ts", "node.json", fast ? ["--project", "node", "--project", "e2e-shared"] : []),
);

// The console's flows in a real browser, when the system has Chromium (.ci/run installs it).
if (findChromium()) {
  await timed("browser (console flows in Chromium)", async () => {
    rmSync(SCREENSHOT_DIR, { recursive: true, force: true });
    const outcome = await vitest("vitest.browser.config.ts", "browser.json");
    const shots = existsSync(SCREENSHOT_DIR) ? readdirSync(SCREENSHOT_DIR).sort() : [];
    if (shots.length) console.log(`\nScreenshots (${SCREENSHOT_DIR}):\n${shots.map((s) => `  ${s}`).join("\n")}`);
    return outcome;
  });
} else {
  console.log(`\n${CHROMIUM_MISSING}`);
}

console.log("\n=== summary ===");
for (const r of results) console.log(`${r.name}: ${r.passed} passed, ${r.failed} failed (${r.seconds.toFixed(1)} s)`);
const passed = results.reduce((sum, r) => sum + r.passed, 0);
const failed = results.reduce((sum, r) => sum + r.failed, 0);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
