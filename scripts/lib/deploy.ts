/**
 * `agent-platform deploy`: from a Cloudflare login to a deployed Worker in one command, with wrangler's
 * own commands. It reads what the account has (D1 databases, the queue, R2 buckets, the Worker's
 * secrets), plans each step as "create" or "exists" (`planDeploy`, pure), then creates only what is
 * missing, records every id and name in the project's own wrangler config (wrangler.jsonc, created if
 * absent, which the build merges over the platform's), applies the D1 migrations, generates and sets the
 * missing secrets, and runs `wrangler deploy`.
 *
 * Running it again creates nothing: a resource is looked up by its recorded id or by its name before it
 * is created, a secret the Worker has is never regenerated. Progress is recorded as it goes (each id in
 * the project's config the moment it exists, each finished step in .agent-platform/deploy-progress.json),
 * so a rerun after a failure continues where it stopped.
 *
 * Secret values travel only on wrangler's stdin (`wrangler secret put NAME`), never on a command line
 * or into a file; the bootstrap API key is printed once, when it is set, and never again.
 */

import { type SpawnOptions, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { generateApiKey } from "../../src/tenancy/keys.ts";
import { projectWranglerConfig } from "./project.ts";
import { spawnWrangler } from "./wrangler.ts";

/**
 * Another wrangler executable for the deploy's Cloudflare calls (a path, or a command looked up on
 * PATH), instead of the package's own. Bundling and `dev` keep the package's wrangler: the bundle cache
 * and the local runtime are tied to its version.
 */
export const WRANGLER_OVERRIDE = "AGENT_PLATFORM_WRANGLER";

/** The secrets the Worker reads that the deploy generates when the Worker lacks them. */
export const GENERATED_SECRETS = ["BOOTSTRAP_API_KEY", "EXPORT_ENCRYPTION_KEY"] as const;
export type GeneratedSecret = (typeof GENERATED_SECRETS)[number];

/** The platform's bindings (wrangler.toml) whose resources the deploy creates. */
const DB_BINDING = "DB";
const QUEUE_BINDING = "QUEUE";
const BUCKET_BINDING = "EXPORT_BUCKET";
/** The all-zero database id the platform's wrangler.toml ships with: no database recorded yet. */
const UNRECORDED_DATABASE_ID = "00000000-0000-0000-0000-000000000000";
/** Queue and R2 bucket names: lowercase letters, digits and dashes, at most 63 characters. */
const RESOURCE_NAME = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

export class DeployError extends Error {}

/** What this project deploys as: names and ids its config records, or names derived from the Worker's. */
export interface Wanted {
  worker: string;
  /** The account wrangler will use (config `account_id` or CLOUDFLARE_ACCOUNT_ID), if chosen. */
  accountId?: string;
  database: { name: string; id?: string };
  queue: string;
  bucket: string;
  /** What the project's own config already records (anything else is recorded once it exists). */
  recorded: { worker: boolean; queue: boolean; bucket: boolean };
}

/** What the account has, as wrangler's read commands answer; undefined when it was not read. */
export interface Account {
  databases?: { name: string; uuid: string }[];
  queueExists?: boolean;
  buckets?: string[];
  /** The Worker's secret names; empty when the Worker does not exist yet. */
  secrets?: string[];
}

export type StepId =
  | "database"
  | "queue"
  | "bucket"
  | "migrations"
  | `secret:${GeneratedSecret}`
  | "env-secrets"
  | "deploy";

export interface Step {
  id: StepId;
  /** What it acts on, e.g. `D1 database "my-agent"`. */
  subject: string;
  /** "create"/"set" change the account; "exists"/"kept" do not; "apply"/"deploy" run every time. */
  action: "create" | "exists" | "set" | "kept" | "apply" | "deploy";
  /** Why, or what else happens (the id it records...). */
  note?: string;
  /** The id of a database that exists but that the project's config does not record yet. */
  databaseId?: string;
}

type RawConfig = Record<string, unknown>;
type Entry = Record<string, unknown>;

function entries(value: unknown): Entry[] {
  return Array.isArray(value) ? (value as Entry[]) : [];
}

function binding(list: unknown, name: string): Entry | undefined {
  return entries(list).find((entry) => entry.binding === name);
}

/**
 * The resources this project deploys with: `own` is the project's own wrangler config (empty if it has
 * none), `generated` the merged config the build writes. Unnamed resources are named after the Worker
 * (`<worker>`, `<worker>-work`, `<worker>-exports`: the platform's own names for the Worker
 * "agent-platform").
 */
export function wantedResources(own: RawConfig, generated: RawConfig, env: NodeJS.ProcessEnv = {}): Wanted {
  // The generated config's name: the project config's, else its package's (project.ts `workerName`), so
  // that every wrangler call (they all pass that config) acts on the Worker the plan names.
  const worker = String(generated.name ?? "");
  if (!worker) throw new DeployError('The Worker has no name: set "name" in the project\'s wrangler.jsonc');
  const db = binding(own.d1_databases, DB_BINDING);
  const producer = binding((own.queues as RawConfig | undefined)?.producers, QUEUE_BINDING);
  const bucket = binding(own.r2_buckets, BUCKET_BINDING);
  const id =
    typeof db?.database_id === "string" && db.database_id !== UNRECORDED_DATABASE_ID ? db.database_id : undefined;
  const wanted: Wanted = {
    worker,
    accountId: (generated.account_id as string | undefined) ?? env.CLOUDFLARE_ACCOUNT_ID,
    database: { name: String(db?.database_name ?? worker), ...(id ? { id } : {}) },
    queue: String(producer?.queue ?? `${worker}-work`),
    bucket: String(bucket?.bucket_name ?? `${worker}-exports`),
    recorded: {
      worker: typeof own.name === "string",
      queue: typeof producer?.queue === "string",
      bucket: typeof bucket?.bucket_name === "string",
    },
  };
  for (const [what, name, key] of [
    ["queue", wanted.queue, `queues.producers[binding "${QUEUE_BINDING}"].queue`],
    ["R2 bucket", wanted.bucket, `r2_buckets[binding "${BUCKET_BINDING}"].bucket_name`],
  ]) {
    if (!RESOURCE_NAME.test(name)) {
      throw new DeployError(
        `The ${what} name "${name}" is not valid (3 to 63 lowercase letters, digits and dashes): set ${key} in the project's wrangler.jsonc`,
      );
    }
  }
  return wanted;
}

/** Each step of the deploy, in order, as "create" or "exists" against what the account has. Pure. */
export function planDeploy(wanted: Wanted, account: Account): Step[] {
  const unread = "not checked: not logged in";
  const steps: Step[] = [];
  const { databases } = account;
  const dbSubject = `D1 database "${wanted.database.name}"`;
  if (wanted.database.id) {
    const found = databases?.find((db) => db.uuid === wanted.database.id);
    if (databases && !found) {
      throw new DeployError(
        `The project's wrangler config records the D1 database id ${wanted.database.id} (binding "${DB_BINDING}"), which this account does not have (wrangler d1 list): log in to the account that has it, or remove database_id to create a database`,
      );
    }
    steps.push({
      id: "database",
      subject: `D1 database "${found?.name ?? wanted.database.name}"`,
      action: "exists",
      note: databases ? `id ${wanted.database.id}` : `id ${wanted.database.id} recorded, ${unread}`,
    });
  } else {
    const found = databases?.find((db) => db.name === wanted.database.name);
    steps.push(
      found
        ? { id: "database", subject: dbSubject, action: "exists", note: `id ${found.uuid}`, databaseId: found.uuid }
        : {
            id: "database",
            subject: dbSubject,
            action: "create",
            note: databases ? undefined : `unless it exists; ${unread}`,
          },
    );
  }
  const check = (known: boolean | undefined): Pick<Step, "action" | "note"> =>
    known === undefined
      ? { action: "create", note: `unless it exists; ${unread}` }
      : { action: known ? "exists" : "create" };
  steps.push({ id: "queue", subject: `queue "${wanted.queue}"`, ...check(account.queueExists) });
  steps.push({
    id: "bucket",
    subject: `R2 bucket "${wanted.bucket}"`,
    ...check(account.buckets?.includes(wanted.bucket)),
  });
  steps.push({ id: "migrations", subject: "D1 migrations", action: "apply", note: "only those not applied yet" });
  for (const name of GENERATED_SECRETS) {
    const has = account.secrets?.includes(name);
    steps.push({
      id: `secret:${name}`,
      subject: `secret ${name}`,
      ...(has
        ? { action: "kept", note: "already set, not regenerated" }
        : {
            action: "set",
            note: `${name === "BOOTSTRAP_API_KEY" ? "generated, printed once" : "generated, never printed"}${account.secrets ? "" : `, unless set already; ${unread}`}`,
          }),
    });
  }
  steps.push({ id: "deploy", subject: `Worker "${wanted.worker}"`, action: "deploy", note: "wrangler deploy" });
  return steps;
}

/** The plan as the command prints it. */
export function formatPlan(wanted: Wanted, steps: Step[]): string {
  const width = Math.max(...steps.map((step) => step.subject.length));
  const lines = steps.map(
    (step) => `  ${step.subject.padEnd(width)}  ${step.action}${step.note ? ` (${step.note})` : ""}`,
  );
  return `Deploy plan for the Worker "${wanted.worker}":\n${lines.join("\n")}`;
}

// ---- Running wrangler ----

export interface WranglerResult {
  code: number;
  stdout: string;
  stderr: string;
}
/** Runs one wrangler command; `input` goes to its stdin; `echo` shows its output as it runs. */
export type Wrangler = (args: string[], options?: { input?: string; echo?: boolean }) => Promise<WranglerResult>;

/** The package's wrangler (as `spawnWrangler` runs it), or `$AGENT_PLATFORM_WRANGLER`, run in `cwd`. */
export function wranglerRunner(cwd: string, env: NodeJS.ProcessEnv): Wrangler {
  const override = env[WRANGLER_OVERRIDE];
  return (args, options = {}) =>
    new Promise((resolve, reject) => {
      const spawnOptions: SpawnOptions = {
        cwd,
        env,
        stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      };
      const child = override ? spawn(override, args, spawnOptions) : spawnWrangler(args, spawnOptions);
      let stdout = "";
      let stderr = "";
      child.stdout?.on("data", (chunk: Buffer) => {
        stdout += chunk;
        if (options.echo) process.stdout.write(chunk);
      });
      child.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk;
        if (options.echo) process.stderr.write(chunk);
      });
      child.on("error", (error) =>
        reject(
          new DeployError(
            override ? `${WRANGLER_OVERRIDE}=${override} could not be run: ${error.message}` : error.message,
          ),
        ),
      );
      child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
      if (options.input !== undefined) child.stdin?.end(options.input);
    });
}

/** A failed wrangler command as an error naming it and its output (never a secret value), unless shown already. */
function failed(args: string[], result: WranglerResult, shown = false): DeployError {
  const output = shown ? "" : `${result.stdout}${result.stderr}`.trim();
  return new DeployError(`wrangler ${args.join(" ")} failed (exit ${result.code})${output ? `:\n${output}` : ""}`);
}

/** wrangler's JSON answer on stdout, after any lines it prints before it. */
function parseJson(args: string[], result: WranglerResult): unknown {
  const lines = result.stdout.split("\n");
  for (let at = 0; at < lines.length; at++) {
    if (!/^\s*[[{]/.test(lines[at])) continue;
    try {
      return JSON.parse(lines.slice(at).join("\n"));
    } catch {
      // a line that only looks like JSON's start ("[WARNING] ..."): try the next one
    }
  }
  throw new DeployError(`wrangler ${args.join(" ")} did not answer JSON:\n${result.stdout.trim()}`);
}

/** Reads what the account has. Each call only reads. */
export async function readAccount(wrangler: Wrangler, wanted: Wanted, config: string[]): Promise<Account> {
  const run = async (args: string[]) => {
    const result = await wrangler([...args, ...config]);
    return { args, result };
  };
  const d1 = await run(["d1", "list", "--json"]);
  if (d1.result.code !== 0) throw failed(d1.args, d1.result);
  const databases = (parseJson(d1.args, d1.result) as { name: string; uuid: string }[]).map(({ name, uuid }) => ({
    name,
    uuid,
  }));
  // `queues list` prints a table; `queues info` answers one queue, or says it does not exist.
  const queue = await run(["queues", "info", wanted.queue]);
  let queueExists: boolean;
  if (queue.result.code === 0) queueExists = true;
  else if (/does not exist/.test(queue.result.stdout + queue.result.stderr)) queueExists = false;
  else throw failed(queue.args, queue.result);
  // `r2 bucket list` prints "name: <bucket>" and "creation_date: ..." per bucket.
  const r2 = await run(["r2", "bucket", "list"]);
  if (r2.result.code !== 0) throw failed(r2.args, r2.result);
  const buckets = [...stripVTControlCharacters(r2.result.stdout).matchAll(/^name:\s+(\S+)\s*$/gm)].map(
    (match) => match[1],
  );
  const secretList = await run(["secret", "list", "--format", "json"]);
  let secrets: string[];
  if (secretList.result.code === 0) {
    secrets = (parseJson(secretList.args, secretList.result) as { name: string }[]).map((secret) => secret.name);
  } else if (/Worker ".*" not found/.test(secretList.result.stdout + secretList.result.stderr)) {
    secrets = []; // a Worker not deployed yet has no secrets
  } else throw failed(secretList.args, secretList.result);
  return { databases, queueExists, buckets, secrets };
}

interface Login {
  loggedIn: boolean;
  email?: string;
  accounts?: { id: string; name: string }[];
}

/** `wrangler whoami --json`: who is logged in, or why not. */
async function whoami(wrangler: Wrangler, config: string[]): Promise<Login & { output: string }> {
  const args = ["whoami", "--json", ...config];
  const result = await wrangler(args);
  const output = `${result.stdout}${result.stderr}`.trim();
  if (result.code !== 0) return { loggedIn: false, output };
  try {
    return { ...(parseJson(args, result) as Login), output };
  } catch {
    return { loggedIn: false, output };
  }
}

// ---- Recording ----

/** What the deploy records in the project's own config. */
export interface Recorded {
  worker?: string;
  database?: { name: string; id: string };
  queue?: string;
  bucket?: string;
}

const NEW_CONFIG_HEADER = `// This project's Worker settings, merged over the platform's by agent-platform (name, account_id,
// routes, vars, bindings...). \`agent-platform deploy\` records here the Cloudflare resources it
// creates or finds, so that the next deploy uses them.
`;

/** A sparse array with `value` at `index`: wrangler's patchConfig sets that element's keys only. */
function at(index: number, value: Entry): Entry[] {
  const list: Entry[] = [];
  list[index] = value;
  return list;
}

function indexOf(list: unknown, name: string): number {
  const all = entries(list);
  const found = all.findIndex((entry) => entry.binding === name);
  return found >= 0 ? found : all.length;
}

/**
 * Records `what` in the project's own wrangler config, keeping its comments and everything else
 * (wrangler's own patchConfig, as `wrangler d1 create --update-config` does). Creates wrangler.jsonc
 * when the project has no config. Returns the file.
 */
export async function recordInConfig(projectDir: string, what: Recorded): Promise<string> {
  const { experimental_patchConfig, experimental_readRawConfig } = await import("wrangler");
  let file = projectWranglerConfig(projectDir);
  if (!file) {
    file = join(projectDir, "wrangler.jsonc");
    writeFileSync(file, `${NEW_CONFIG_HEADER}{}\n`);
  }
  const own = experimental_readRawConfig({ config: file }).rawConfig as RawConfig;
  const patch: RawConfig = {};
  if (what.worker) patch.name = what.worker;
  if (what.database) {
    patch.d1_databases = at(indexOf(own.d1_databases, DB_BINDING), {
      binding: DB_BINDING,
      database_name: what.database.name,
      database_id: what.database.id,
    });
  }
  if (what.queue) {
    const producers = (own.queues as RawConfig | undefined)?.producers;
    patch.queues = { producers: at(indexOf(producers, QUEUE_BINDING), { binding: QUEUE_BINDING, queue: what.queue }) };
  }
  if (what.bucket) {
    patch.r2_buckets = at(indexOf(own.r2_buckets, BUCKET_BINDING), {
      binding: BUCKET_BINDING,
      bucket_name: what.bucket,
    });
  }
  if (Object.keys(patch).length === 0) return file;
  try {
    experimental_patchConfig(file, patch, false);
  } catch (error) {
    throw new DeployError(
      `Could not record ${JSON.stringify(patch)} in ${file}: ${(error as Error).message}. Move its settings to a wrangler.jsonc (comments are kept there), or add them yourself`,
    );
  }
  return file;
}

/** A TOML config with comments cannot be patched (wrangler's patchConfig refuses it): say so before creating anything. */
function checkRecordable(projectDir: string): void {
  const file = projectWranglerConfig(projectDir);
  if (file?.endsWith(".toml") && readFileSync(file, "utf8").includes("#")) {
    throw new DeployError(
      `${file} has comments, so agent-platform deploy cannot record in it the resources it creates (wrangler rewrites a commented TOML file without them): move its settings to a wrangler.jsonc, or remove the comments`,
    );
  }
}

// ---- Progress ----

interface Progress {
  worker: string;
  startedAt: string;
  /** Finished steps with what they found or made (names and ids only, never a secret). */
  done: Partial<Record<StepId, { action: Step["action"]; at: string; note?: string }>>;
  failed?: { step: StepId | "plan"; error: string; at: string };
  finishedAt?: string;
}

export const PROGRESS_FILE = "deploy-progress.json";

function readProgress(file: string): Progress | undefined {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Progress;
  } catch {
    return undefined;
  }
}

// ---- The deploy ----

export interface DeployOptions {
  projectDir: string;
  /** The project's .agent-platform/ (the progress file goes there). */
  stateDir: string;
  /** The generated wrangler config the build wrote. */
  wranglerConfig: string;
  dryRun: boolean;
  /** Arguments for `wrangler deploy`. */
  passThrough?: string[];
  wrangler: Wrangler;
  /** Rebuilds the generated wrangler config after the project's changed; returns its path. */
  rebuild: () => Promise<string>;
  /**
   * The values of langgraph.json's `env` file: set as Worker secrets on every deploy (the deployed
   * bundle leaves them out, where anyone who can read the script would read them).
   */
  envFile?: { file: string; values: Record<string, string> };
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

function generateSecret(name: GeneratedSecret): string {
  // The bootstrap key looks like every other API key (lgp_ + 256 random bits); the export key is any
  // random string of 16+ characters.
  return name === "BOOTSTRAP_API_KEY" ? generateApiKey() : randomBytes(32).toString("base64url");
}

/**
 * Plans the deploy and, unless `dryRun`, carries it out. Rejects with a DeployError naming the step
 * that failed (the progress file keeps where it stopped).
 */
export async function deploy(options: DeployOptions): Promise<void> {
  const log = options.log ?? ((line: string) => console.log(line));
  const env = options.env ?? process.env;
  const { wrangler, projectDir } = options;
  let config = ["--config", options.wranglerConfig];
  const { experimental_readRawConfig } = await import("wrangler");
  const read = (file: string) => experimental_readRawConfig({ config: file }).rawConfig as RawConfig;
  const ownFile = projectWranglerConfig(projectDir);
  const wanted = wantedResources(ownFile ? read(ownFile) : {}, read(options.wranglerConfig), env);

  const progressFile = join(options.stateDir, PROGRESS_FILE);
  const previous = readProgress(progressFile);
  if (!options.dryRun && previous && !previous.finishedAt && previous.worker === wanted.worker) {
    const where = previous.failed ? `at "${previous.failed.step}"` : "before it finished";
    log(
      `Resuming the deploy of ${previous.startedAt}, which stopped ${where}: what exists is kept, nothing is created twice`,
    );
  }

  const login = await whoami(wrangler, config);
  let account: Account = {};
  if (login.loggedIn) {
    const accounts = login.accounts ?? [];
    if (!wanted.accountId && accounts.length > 1) {
      throw new DeployError(
        `Your Cloudflare login has ${accounts.length} accounts (${accounts.map((a) => `${a.name} ${a.id}`).join(", ")}): set "account_id" in the project's wrangler.jsonc, or CLOUDFLARE_ACCOUNT_ID`,
      );
    }
    const chosen = accounts.find((a) => a.id === wanted.accountId) ?? (wanted.accountId ? undefined : accounts[0]);
    log(`Logged in to Cloudflare as ${login.email ?? "?"}${chosen ? `, account ${chosen.name} (${chosen.id})` : ""}`);
    account = await readAccount(wrangler, wanted, config);
  } else if (options.dryRun) {
    log(`Not logged in to Cloudflare (wrangler whoami), so the plan assumes only what the project's config records.`);
  } else {
    throw new DeployError(
      `Not logged in to Cloudflare: run \`npx wrangler login\` (or set CLOUDFLARE_API_TOKEN), then deploy again${login.output ? `\n${login.output}` : ""}`,
    );
  }

  const steps = planDeploy(wanted, account);
  // An empty value is a setting left unset (as the templates' .env.example leave the other provider's key).
  const envSecrets = Object.fromEntries(
    Object.entries(options.envFile?.values ?? {}).filter(([, value]) => value !== ""),
  );
  const envNames = Object.keys(envSecrets);
  if (options.envFile && envNames.length) {
    // Every deploy: the file's values may have changed, and a secret cannot be read back to compare.
    steps.splice(steps.length - 1, 0, {
      id: "env-secrets",
      subject: `secrets from ${relative(projectDir, options.envFile.file) || options.envFile.file}`,
      action: "set",
      note: `${envNames.join(", ")}: as Worker secrets, never in the bundle`,
    });
  }
  log(formatPlan(wanted, steps));
  if (options.dryRun) return;
  const records = steps.some(
    (step) =>
      (step.id === "database" && (step.action === "create" || step.databaseId)) ||
      (step.id === "queue" && !wanted.recorded.queue) ||
      (step.id === "bucket" && !wanted.recorded.bucket),
  );
  if (records) checkRecordable(projectDir);

  mkdirSync(options.stateDir, { recursive: true });
  const progress: Progress = { worker: wanted.worker, startedAt: new Date().toISOString(), done: {} };
  const save = () => writeFileSync(progressFile, `${JSON.stringify(progress, null, 2)}\n`);
  save();
  let current: Step | undefined;
  let changedConfig = false;
  /** Records in the project's config, the Worker's name with the first record. */
  const record = async (what: Recorded) => {
    const file = await recordInConfig(projectDir, {
      ...what,
      ...(wanted.recorded.worker || changedConfig ? {} : { worker: wanted.worker }),
    });
    if (!changedConfig) log(`Recording the resources in ${relative(process.cwd(), file) || file}`);
    changedConfig = true;
  };
  /** Runs a command that changes the account; `echo` shows its output (migrations, deploy). */
  const run = async (args: string[], options: { echo?: boolean; input?: string } = {}) => {
    const full = [...args, ...config];
    const result = await wrangler(full, options);
    if (result.code !== 0) throw failed(full, result, options.echo);
    return result;
  };

  try {
    for (const step of steps) {
      current = step;
      if (step.id === "database") {
        let id = wanted.database.id ?? step.databaseId;
        if (step.action === "create") {
          const created = await run(["d1", "create", wanted.database.name]);
          id = /database_id["'\s]*[:=]\s*["']([0-9a-f-]{36})["']/.exec(created.stdout)?.[1];
          if (!id) {
            const listed = await wrangler(["d1", "list", "--json", ...config]);
            const all =
              listed.code === 0 ? (parseJson(["d1", "list"], listed) as { name: string; uuid: string }[]) : [];
            id = all.find((db) => db.name === wanted.database.name)?.uuid;
          }
          if (!id)
            throw new DeployError(`Created ${step.subject}, but could not read its id (wrangler d1 list --json)`);
          log(`Created ${step.subject}: id ${id}`);
        }
        if (id && id !== wanted.database.id) await record({ database: { name: wanted.database.name, id } });
      } else if (step.id === "queue" || step.id === "bucket") {
        const name = step.id === "queue" ? wanted.queue : wanted.bucket;
        if (step.action === "create") {
          await run(step.id === "queue" ? ["queues", "create", name] : ["r2", "bucket", "create", name]);
          log(`Created ${step.subject}`);
        }
        if (!wanted.recorded[step.id]) await record(step.id === "queue" ? { queue: name } : { bucket: name });
      } else if (step.id === "migrations") {
        if (changedConfig) {
          // The generated config must carry what was just recorded (the database id above all).
          config = ["--config", await options.rebuild()];
        }
        log("Applying the D1 migrations");
        await run(["d1", "migrations", "apply", DB_BINDING, "--remote"], { echo: true });
      } else if (step.id.startsWith("secret:") && step.action === "set") {
        const name = step.id.slice("secret:".length) as GeneratedSecret;
        const value = generateSecret(name);
        log(`Setting the secret ${name}`);
        await run(["secret", "put", name], { input: value });
        if (name === "BOOTSTRAP_API_KEY") {
          log(
            `\nBOOTSTRAP_API_KEY (the organization-admin API key, X-Api-Key): ${value}\nIt is printed this once: keep it. To replace it, \`npx wrangler secret delete BOOTSTRAP_API_KEY\` and deploy again.\n`,
          );
        }
      } else if (step.id === "env-secrets" && options.envFile) {
        log(
          `Setting ${envNames.length} secrets from ${step.subject.slice("secrets from ".length)}: ${envNames.join(", ")}`,
        );
        await run(["secret", "bulk"], { input: JSON.stringify(envSecrets) });
      } else if (step.id === "deploy") {
        log(`Deploying ${step.subject}`);
        await run(["deploy", ...(options.passThrough ?? [])], { echo: true });
      }
      progress.done[step.id] = { action: step.action, at: new Date().toISOString(), note: step.note };
      save();
    }
  } catch (error) {
    const message = (error as Error).message;
    progress.failed = { step: current?.id ?? "plan", error: message, at: new Date().toISOString() };
    save();
    // A key Cloudflare stored although the call failed would be kept by the next deploy, never printed.
    const lostKey =
      current?.id === "secret:BOOTSTRAP_API_KEY"
        ? "\nIf BOOTSTRAP_API_KEY was stored nonetheless, the next deploy keeps it without printing it: `npx wrangler secret delete BOOTSTRAP_API_KEY` first to get a new one."
        : "";
    throw new DeployError(
      `${current ? `${current.subject}: ` : ""}${message}\nNothing that was created is lost: run agent-platform deploy again to continue from here.${lostKey}`,
    );
  }
  progress.finishedAt = new Date().toISOString();
  save();
}
