import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Account,
  DeployError,
  deploy,
  PROGRESS_FILE,
  planDeploy,
  recordInConfig,
  type Wanted,
  WRANGLER_OVERRIDE,
  wantedResources,
  wranglerRunner,
} from "../../scripts/lib/deploy.ts";
import { PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import { projectBuildDir, projectWranglerConfig, renderWranglerConfig, workerName } from "../../scripts/lib/project.ts";
import { offlineEnv } from "../../scripts/lib/wrangler.ts";

// `agent-platform deploy` against a stand-in `wrangler` on PATH (test/fixtures/wrangler-stand-in.mjs),
// which plays a Cloudflare account and records every call with its stdin: the plan, the order of
// calls, a failure in the middle and the rerun that continues, a third run that changes nothing, and
// where the generated secrets go (wrangler's stdin only; the bootstrap key printed once).

const BIN = join(PROJECT_ROOT, "bin/agent-platform.mjs");
const NODE = join(PROJECT_ROOT, "node_modules/node/bin/node");
const STAND_IN = join(PROJECT_ROOT, "test/fixtures/wrangler-stand-in.mjs");
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

interface Call {
  args: string[];
  stdin?: string;
}

/** A stand-in Cloudflare account: `wrangler` on PATH, its recorded calls, its state. */
function standIn() {
  const root = tempDir("wrangler-stand-in-");
  const bin = join(root, "bin");
  const state = join(root, "account");
  mkdirSync(bin);
  mkdirSync(state);
  symlinkSync(STAND_IN, join(bin, "wrangler"));
  const env = (extra: Record<string, string> = {}) =>
    offlineEnv({
      PATH: `${bin}:${process.env.PATH}`,
      // The stand-in is found on PATH by its name, as a user's own wrangler would be.
      [WRANGLER_OVERRIDE]: "wrangler",
      STANDIN_DIR: state,
      ...extra,
    });
  const calls = (): Call[] => {
    const file = join(state, "calls.jsonl");
    return existsSync(file)
      ? readFileSync(file, "utf8")
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line) as Call)
      : [];
  };
  const seed = (account: object) =>
    writeFileSync(
      join(state, "account.json"),
      JSON.stringify({
        databases: [],
        queues: [],
        buckets: [],
        worker: null,
        secrets: [],
        migrations: 0,
        deploys: 0,
        nextId: 1,
        ...account,
      }),
    );
  const account = () => JSON.parse(readFileSync(join(state, "account.json"), "utf8"));
  return { env, calls, seed, account };
}

/** A call as "d1 create my-agent": its words and flags without the generated `--config <file>`. */
function summary(call: Call): string {
  const at = call.args.indexOf("--config");
  return (at >= 0 ? [...call.args.slice(0, at), ...call.args.slice(at + 2)] : call.args).join(" ");
}

/** Calls that change the account. */
const WRITES =
  /^(d1 create|queues create|r2 bucket create|d1 migrations apply|secret put|secret bulk|deploy(?! --dry-run))/;

const READS = (worker: string) => [
  "whoami --json",
  "d1 list --json",
  `queues info ${worker}-work`,
  "r2 bucket list",
  "secret list --format json",
];

describe("the deploy plan", () => {
  const wanted = (own: Record<string, unknown> = {}, name = "my-agent"): Wanted => wantedResources(own, { name }, {});

  it("deploys a project whose config names no Worker as its package, not as the platform", async () => {
    // Two projects on one account must not both deploy as "agent-platform": the generated config, which
    // every wrangler call of the deploy passes, carries the package's name.
    expect(workerName("My_Agent.v2")).toBe("my-agent-v2");
    expect(workerName("@acme/support-bot")).toBe("support-bot");
    expect(workerName("___")).toBeUndefined();
    expect(workerName("a".repeat(80))).toHaveLength(63);
    const dir = mkdtempSync(join(tmpdir(), "deploy-name-"));
    try {
      expect((await renderWranglerConfig(dir, undefined, undefined, "my-agent-v2")).name).toBe("my-agent-v2");
      expect(wantedResources({}, { name: "my-agent-v2" }, {})).toMatchObject({
        worker: "my-agent-v2",
        queue: "my-agent-v2-work",
        recorded: { worker: false },
      });
      // The project's own name wins over its package's.
      const own = join(dir, "wrangler.jsonc");
      writeFileSync(own, JSON.stringify({ name: "mine" }));
      expect((await renderWranglerConfig(dir, own, undefined, "my-agent-v2")).name).toBe("mine");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("names what the project's config does not after the Worker, and uses what it does", () => {
    expect(wanted()).toMatchObject({
      worker: "my-agent",
      database: { name: "my-agent" },
      queue: "my-agent-work",
      bucket: "my-agent-exports",
      recorded: { worker: false, queue: false, bucket: false },
    });
    const own = {
      name: "my-agent",
      d1_databases: [{ binding: "DB", database_name: "db", database_id: "11111111-2222-3333-4444-555555555555" }],
      queues: { producers: [{ binding: "QUEUE", queue: "q-1" }] },
      r2_buckets: [{ binding: "EXPORT_BUCKET", bucket_name: "b-1" }],
    };
    expect(wanted(own)).toMatchObject({
      database: { name: "db", id: "11111111-2222-3333-4444-555555555555" },
      queue: "q-1",
      bucket: "b-1",
      recorded: { worker: true, queue: true, bucket: true },
    });
    // The platform's placeholder id records nothing.
    const placeholder = { d1_databases: [{ binding: "DB", database_id: "00000000-0000-0000-0000-000000000000" }] };
    expect(wanted(placeholder).database.id).toBeUndefined();
  });

  it("refuses a queue or bucket name Cloudflare would refuse, naming the key to set", () => {
    expect(() => wanted({}, `a${"b".repeat(55)}`)).toThrow(/The R2 bucket name "a.*-exports" is not valid.*r2_buckets/);
    expect(() => wanted({ queues: { producers: [{ binding: "QUEUE", queue: "Work_Queue" }] } })).toThrow(
      /The queue name "Work_Queue" is not valid.*queues\.producers/,
    );
  });

  it("creates what the account lacks and keeps what it has", () => {
    const empty: Account = { databases: [], queueExists: false, buckets: [], secrets: [] };
    expect(planDeploy(wanted(), empty).map((step) => `${step.id} ${step.action}`)).toEqual([
      "database create",
      "queue create",
      "bucket create",
      "migrations apply",
      "secret:BOOTSTRAP_API_KEY set",
      "secret:EXPORT_ENCRYPTION_KEY set",
      "deploy deploy",
    ]);
    const full: Account = {
      databases: [{ name: "my-agent", uuid: "db-uuid" }],
      queueExists: true,
      buckets: ["other", "my-agent-exports"],
      secrets: ["BOOTSTRAP_API_KEY", "EXPORT_ENCRYPTION_KEY", "OPENAI_API_KEY"],
    };
    const steps = planDeploy(wanted(), full);
    expect(steps.map((step) => `${step.id} ${step.action}`)).toEqual([
      "database exists",
      "queue exists",
      "bucket exists",
      "migrations apply",
      "secret:BOOTSTRAP_API_KEY kept",
      "secret:EXPORT_ENCRYPTION_KEY kept",
      "deploy deploy",
    ]);
    // A database found by name is adopted: its id is recorded, nothing is created.
    expect(steps[0].databaseId).toBe("db-uuid");
  });

  it("refuses a recorded database id the account does not have", () => {
    const own = { d1_databases: [{ binding: "DB", database_id: "11111111-2222-3333-4444-555555555555" }] };
    expect(() => planDeploy(wanted(own), { databases: [{ name: "my-agent", uuid: "other" }] })).toThrow(
      /records the D1 database id 11111111-2222-3333-4444-555555555555 .* which this account does not have/,
    );
  });

  it("says what it could not check when nobody is logged in", () => {
    const steps = planDeploy(wanted(), {});
    expect(steps[1]).toMatchObject({ action: "create", note: "unless it exists; not checked: not logged in" });
    expect(steps[4].note).toBe("generated, printed once, unless set already; not checked: not logged in");
  });
});

describe("recording the resources in the project's own config", () => {
  it("keeps the config's comments and other bindings, and replaces its own entry rather than adding one", async () => {
    const dir = tempDir("deploy-record-");
    const file = join(dir, "wrangler.jsonc");
    writeFileSync(
      file,
      `// my settings\n{\n  "name": "my-agent", // the Worker\n  "d1_databases": [{ "binding": "OTHER", "database_name": "o", "database_id": "o-id" }],\n  "vars": { "A": "1" }\n}\n`,
    );
    expect(await recordInConfig(dir, { database: { name: "my-agent", id: "first" }, queue: "my-agent-work" })).toBe(
      file,
    );
    await recordInConfig(dir, { database: { name: "my-agent", id: "second" }, bucket: "my-agent-exports" });
    const text = readFileSync(file, "utf8");
    expect(text).toContain("// my settings");
    expect(text).toContain("// the Worker");
    const { experimental_readRawConfig } = await import("wrangler");
    const config = experimental_readRawConfig({ config: file }).rawConfig;
    expect(config.d1_databases).toEqual([
      { binding: "OTHER", database_name: "o", database_id: "o-id" },
      { binding: "DB", database_name: "my-agent", database_id: "second" },
    ]);
    expect(config.queues).toEqual({ producers: [{ binding: "QUEUE", queue: "my-agent-work" }] });
    expect(config.r2_buckets).toEqual([{ binding: "EXPORT_BUCKET", bucket_name: "my-agent-exports" }]);
    expect(config.vars).toEqual({ A: "1" });
  });

  it("creates wrangler.jsonc when the project has no config", async () => {
    const dir = tempDir("deploy-record-");
    await recordInConfig(dir, { worker: "agent-platform", bucket: "agent-platform-exports" });
    expect(projectWranglerConfig(dir)).toBe(join(dir, "wrangler.jsonc"));
    const { experimental_readRawConfig } = await import("wrangler");
    expect(experimental_readRawConfig({ config: join(dir, "wrangler.jsonc") }).rawConfig).toEqual({
      name: "agent-platform",
      r2_buckets: [{ binding: "EXPORT_BUCKET", bucket_name: "agent-platform-exports" }],
    });
  });
});

/** `deploy()` on a project folder without a build: its generated config rendered as the build does. */
async function deployFolder(dir: string, env: NodeJS.ProcessEnv, lines: string[] = []): Promise<string[]> {
  const buildDir = tempDir("deploy-build-");
  const wranglerConfig = join(buildDir, "wrangler.json");
  const render = async () => {
    writeFileSync(wranglerConfig, JSON.stringify(await renderWranglerConfig(buildDir, projectWranglerConfig(dir))));
    return wranglerConfig;
  };
  await render();
  await deploy({
    projectDir: dir,
    stateDir: join(dir, ".agent-platform"),
    wranglerConfig,
    dryRun: false,
    wrangler: wranglerRunner(dir, env),
    rebuild: render,
    log: (line) => lines.push(line),
  });
  return lines;
}

describe("deploy() against the stand-in account", () => {
  it("adopts a database of its name that exists already, recording its id instead of creating one", async () => {
    const account = standIn();
    const uuid = "99999999-0000-4000-8000-000000000009";
    account.seed({ databases: [{ uuid, name: "agent-platform" }], queues: ["agent-platform-work"] });
    const dir = tempDir("deploy-adopt-");
    const lines = await deployFolder(dir, account.env());
    expect(lines.join("\n")).toMatch(new RegExp(`D1 database "agent-platform" +exists \\(id ${uuid}\\)`));
    expect(account.calls().map(summary)).not.toContainEqual(expect.stringMatching(/^(d1|queues) create/));
    expect(account.calls().map(summary)).toContain("r2 bucket create agent-platform-exports");
    const { experimental_readRawConfig } = await import("wrangler");
    const own = experimental_readRawConfig({ config: join(dir, "wrangler.jsonc") }).rawConfig;
    expect(own.d1_databases).toEqual([{ binding: "DB", database_name: "agent-platform", database_id: uuid }]);
    expect(account.account()).toMatchObject({ migrations: 1, deploys: 1 });
  });

  it("says it resumes a deploy that was interrupted without an error (Ctrl-C), and finishes it", async () => {
    const account = standIn();
    const dir = tempDir("deploy-interrupted-");
    mkdirSync(join(dir, ".agent-platform"));
    const started = "2026-01-01T00:00:00.000Z";
    writeFileSync(
      join(dir, ".agent-platform", PROGRESS_FILE),
      JSON.stringify({ worker: "agent-platform", startedAt: started, done: {} }),
    );
    const lines = await deployFolder(dir, account.env());
    expect(lines).toContain(
      `Resuming the deploy of ${started}, which stopped before it finished: what exists is kept, nothing is created twice`,
    );
    expect(JSON.parse(readFileSync(join(dir, ".agent-platform", PROGRESS_FILE), "utf8")).finishedAt).toBeDefined();
  });

  it("refuses a commented wrangler.toml it would have to rewrite before it creates anything", async () => {
    const account = standIn();
    const dir = tempDir("deploy-toml-");
    writeFileSync(join(dir, "wrangler.toml"), `# my Worker\nname = "my-agent"\n`);
    await expect(deployFolder(dir, account.env())).rejects.toThrow(
      /wrangler\.toml has comments, so agent-platform deploy cannot record in it/,
    );
    expect(account.calls().map(summary)).toEqual(READS("my-agent"));
    expect(readFileSync(join(dir, "wrangler.toml"), "utf8")).toBe(`# my Worker\nname = "my-agent"\n`);
  });

  it("never prints a bootstrap key it failed to set, and says how to get a new one", async () => {
    const account = standIn();
    const dir = tempDir("deploy-secret-");
    const lines: string[] = [];
    const error = (await deployFolder(dir, account.env({ STANDIN_FAIL: "secret put" }), lines).then(
      () => new Error("the deploy succeeded"),
      (caught: unknown) => caught,
    )) as Error;
    expect(error.message).toContain("secret BOOTSTRAP_API_KEY: wrangler secret put BOOTSTRAP_API_KEY");
    expect(error.message).toContain("`npx wrangler secret delete BOOTSTRAP_API_KEY` first to get a new one");
    const tried = account.calls().find((call) => call.args[1] === "put")?.stdin;
    expect(tried).toMatch(/^lgp_/);
    expect(lines.join("\n")).not.toContain(tried);
    expect(error.message).not.toContain(tried);
  });

  it("names the override when it cannot be run", async () => {
    const dir = tempDir("deploy-missing-");
    const env = offlineEnv({ [WRANGLER_OVERRIDE]: join(dir, "no-such-wrangler") });
    const error = await deployFolder(dir, env).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DeployError);
    expect((error as Error).message).toContain(
      `${WRANGLER_OVERRIDE}=${join(dir, "no-such-wrangler")} could not be run`,
    );
  });
});

describe("agent-platform deploy, run after a failure and again", () => {
  const account = standIn();
  let project: string;
  /** Everything every run printed. */
  let printed = "";

  function cli(args: string[], extra: Record<string, string> = {}) {
    const before = account.calls().length;
    const run = spawnSync(NODE, [BIN, ...args], {
      cwd: project,
      encoding: "utf8",
      env: account.env(extra),
      timeout: 180_000,
    });
    printed += run.stdout + run.stderr;
    return { ...run, calls: account.calls().slice(before).map(summary) };
  }

  beforeAll(() => {
    project = tempDir("deploy-project-");
    cpSync(join(PROJECT_ROOT, "examples/minimal"), project, { recursive: true });
    // The project's own config, with a comment and a name of its own: the resources are named after it.
    writeFileSync(join(project, "wrangler.jsonc"), `// my agent\n{ "name": "my-agent", "vars": { "MINE": "1" } }\n`);
  });
  afterAll(() => rmSync(projectBuildDir(join(project, "langgraph.json")), { recursive: true, force: true }));

  it("without a login: --dry-run prints the plan and bundles; deploy stops before any change", () => {
    const dry = cli(["deploy", "--dry-run"], { STANDIN_LOGGED_OUT: "1" });
    expect(dry.status, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("Not logged in to Cloudflare");
    expect(dry.stdout).toMatch(/queue "my-agent-work" +create \(unless it exists; not checked: not logged in\)/);
    expect(dry.stdout).toContain("Worker bundled into .agent-platform/build");
    expect(dry.calls).toEqual(["whoami --json"]);
    const real = cli(["deploy"], { STANDIN_LOGGED_OUT: "1" });
    expect(real.status).toBe(1);
    expect(real.stderr).toContain("Deploy failed: Not logged in to Cloudflare: run `npx wrangler login`");
    expect(real.calls).toEqual(["whoami --json"]);
  }, 180_000);

  it("--dry-run reads the account and prints each step, calling nothing that writes", () => {
    const dry = cli(["deploy", "--dry-run"]);
    expect(dry.status, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`Deploy plan for the Worker "my-agent":
  D1 database "my-agent"        create
  queue "my-agent-work"         create
  R2 bucket "my-agent-exports"  create
  D1 migrations                 apply (only those not applied yet)
  secret BOOTSTRAP_API_KEY      set (generated, printed once)
  secret EXPORT_ENCRYPTION_KEY  set (generated, never printed)
  secrets from .env.example     set (GREETING: as Worker secrets, never in the bundle)
  Worker "my-agent"             deploy (wrangler deploy)`);
    expect(dry.calls).toEqual(READS("my-agent"));
    expect(readFileSync(join(project, "wrangler.jsonc"), "utf8")).toBe(
      `// my agent\n{ "name": "my-agent", "vars": { "MINE": "1" } }\n`,
    );
  }, 120_000);

  it("stops where the queue creation fails, with the database created and recorded", () => {
    const run = cli(["deploy"], { STANDIN_FAIL: "queues create" });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('Deploy failed: queue "my-agent-work": wrangler queues create my-agent-work');
    expect(run.stderr).toContain("run agent-platform deploy again to continue");
    expect(run.calls).toEqual([...READS("my-agent"), "d1 create my-agent", "queues create my-agent-work"]);
    const own = readFileSync(join(project, "wrangler.jsonc"), "utf8");
    expect(own).toContain("// my agent");
    expect(own).toContain('"database_id": "00000000-0000-4000-8000-000000000001"');
    const progress = JSON.parse(readFileSync(join(project, ".agent-platform", PROGRESS_FILE), "utf8"));
    expect(Object.keys(progress.done)).toEqual(["database"]);
    expect(progress.failed.step).toBe("queue");
    expect(progress.finishedAt).toBeUndefined();
  }, 120_000);

  it("continues on the rerun: creates only what is missing, then migrates, sets the secrets and deploys", () => {
    const run = cli(["deploy"]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain("Resuming the deploy of");
    expect(run.stdout).toContain('which stopped at "queue"');
    expect(run.stdout).toContain('D1 database "my-agent"        exists (id 00000000-0000-4000-8000-000000000001)');
    expect(run.calls).toEqual([
      ...READS("my-agent"),
      "queues create my-agent-work",
      "r2 bucket create my-agent-exports",
      "d1 migrations apply DB --remote",
      "secret put BOOTSTRAP_API_KEY",
      "secret put EXPORT_ENCRYPTION_KEY",
      "secret bulk",
      "deploy",
    ]);
    // The stand-in's deploy refuses a binding whose resource does not exist, the queue consumer's included.
    expect(account.account()).toMatchObject({
      databases: [expect.objectContaining({ name: "my-agent" })],
      queues: ["my-agent-work"],
      buckets: ["my-agent-exports"],
      secrets: ["BOOTSTRAP_API_KEY", "EXPORT_ENCRYPTION_KEY", "GREETING"],
      migrations: 1,
      deploys: 1,
    });
    const progress = JSON.parse(readFileSync(join(project, ".agent-platform", PROGRESS_FILE), "utf8"));
    expect(progress.finishedAt).toBeDefined();
    expect(progress.failed).toBeUndefined();
  }, 120_000);

  it("a third run creates nothing and generates no secret; --dry-run then finds everything", () => {
    const run = cli(["deploy", "--", "--message", "third"]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).not.toContain("Resuming");
    // The env file's values are set again (they may have changed; a secret cannot be read back).
    expect(run.calls).toEqual([
      ...READS("my-agent"),
      "d1 migrations apply DB --remote",
      "secret bulk",
      "deploy --message third",
    ]);
    expect(run.stdout).toContain("secret BOOTSTRAP_API_KEY      kept (already set, not regenerated)");
    const dry = cli(["deploy", "--dry-run"]);
    expect(dry.status, dry.stderr).toBe(0);
    expect(dry.calls).toEqual(READS("my-agent"));
    for (const line of ['D1 database "my-agent"', 'queue "my-agent-work"', 'R2 bucket "my-agent-exports"']) {
      expect(dry.stdout).toMatch(new RegExp(`${line} +exists`));
    }
  }, 120_000);

  it("created each resource and set each secret once in all, in that order", () => {
    const writes = account
      .calls()
      .map(summary)
      .filter((call) => WRITES.test(call));
    expect(writes).toEqual([
      "d1 create my-agent",
      "queues create my-agent-work",
      "queues create my-agent-work",
      "r2 bucket create my-agent-exports",
      "d1 migrations apply DB --remote",
      "secret put BOOTSTRAP_API_KEY",
      "secret put EXPORT_ENCRYPTION_KEY",
      "secret bulk",
      "deploy",
      "d1 migrations apply DB --remote",
      "secret bulk",
      "deploy --message third",
    ]);
    // The first "queues create" is the one that failed (the account has one queue).
    expect(account.account().queues).toEqual(["my-agent-work"]);
  });

  it("passed the secrets on stdin only, printed the bootstrap key once and the export key never", () => {
    const calls = account.calls();
    const stdinOf = (name: string) =>
      calls.find((call) => call.args.slice(0, 3).join(" ") === `secret put ${name}`)?.stdin;
    const bootstrap = stdinOf("BOOTSTRAP_API_KEY")!;
    const exportKey = stdinOf("EXPORT_ENCRYPTION_KEY")!;
    expect(bootstrap).toMatch(/^lgp_[A-Za-z0-9_-]{43}$/);
    expect(exportKey.length).toBeGreaterThanOrEqual(16);
    // stdin carried these two values, to `secret put`, and the env file's, to `secret bulk`; no command
    // line carried any.
    expect(calls.filter((call) => call.stdin !== undefined).map(summary)).toEqual([
      "secret put BOOTSTRAP_API_KEY",
      "secret put EXPORT_ENCRYPTION_KEY",
      "secret bulk",
      "secret bulk",
    ]);
    const bulk = calls.find((call) => summary(call) === "secret bulk")!;
    expect(JSON.parse(bulk.stdin!)).toEqual({ GREETING: "hi from examples/minimal" });
    // The Worker the deploy built carries no value of the env file (dev's build does, as before).
    const registry = join(projectBuildDir(join(project, "langgraph.json")), "registry.generated.ts");
    expect(readFileSync(registry, "utf8")).not.toContain("hi from examples/minimal");
    for (const call of calls) {
      expect(call.args.join(" ")).not.toContain(bootstrap);
      expect(call.args.join(" ")).not.toContain(exportKey);
    }
    expect(printed.split(bootstrap).length - 1).toBe(1);
    expect(printed).not.toContain(exportKey);
    // No file of the project or of its build holds either: not the config, not the progress record.
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const path = join(dir, name);
        return statSync(path).isDirectory() ? files(path) : [path];
      });
    const written = [...files(project), ...files(projectBuildDir(join(project, "langgraph.json")))];
    expect(written).toContain(join(project, ".agent-platform", PROGRESS_FILE));
    for (const file of written) {
      const text = readFileSync(file, "utf8");
      expect(text.includes(bootstrap) || text.includes(exportKey), file).toBe(false);
    }
  });
});
