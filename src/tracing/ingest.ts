import { and, eq } from "drizzle-orm";
import { bySize, chunked, rpcBytes } from "../core/batches.ts";
import type { ErrorKind } from "../core/errors.ts";
import { MAX_INGEST_PROJECTS, MAX_INGEST_SHARDS, MAX_SHARD_RPC_BYTES } from "../core/limits.ts";
import type { Database } from "../db/client.ts";
import { inJsonList } from "../db/json-filter.ts";
import { traceRunLocations } from "../db/schema.ts";
import { deriveLineage, type Lineage, MAX_OUTSIDE_PARENTS } from "./lineage.ts";
import { getProject, projectIdForName } from "./projects/service.ts";
import { describeIssues, dottedOrderProblem, type RunAttachment } from "./run-input.ts";
import { oversizeDetail, truncateOversize } from "./run-size.ts";
import { type RunPatch, RunPatchSchema, type RunPost, RunPostSchema } from "./schemas.ts";
import type { RefusedPatch } from "./shard-runs.ts";
import { type TraceShardDO, traceShardName } from "./trace-shard-do.ts";

/**
 * Ingestion: validates each run on its own (one bad run never sinks the rest), resolves its project
 * (by `session_id`, else by `session_name`, created on first use, default "default"), and sends
 * each shard its runs in RPCs of at most `MAX_SHARD_RPC_BYTES`. Run locations are indexed in D1 for
 * patches and reads by id, and looked up there in bulk: a request costs a bounded number of D1
 * queries and RPCs however many parts it has (see `MAX_INGEST_PROJECTS`, `MAX_INGEST_SHARDS`).
 * A post or patch over the traced run limit is refused (`too_large`) or, for the agent tracer, truncated
 * (see run-size.ts), so it never reaches a shard row it could not fit in.
 */

/** Why one run was refused: `not_found` for a patch of an unknown run, `too_large` for a run over the size limit, `invalid` for an invalid run. */
export type RunProblem = {
  run_id: string | null;
  /** `feedback` for a multipart `feedback.<id>` part (its id is then the feedback's). */
  operation: "post" | "patch" | "feedback";
  kind: Extract<ErrorKind, "not_found" | "too_large" | "invalid">;
  detail: string;
};
export type IngestOptions = {
  /** `MAX_TRACED_RUN_BYTES` in force (see `tracedRunLimit`). */
  maxRunBytes: number;
  /** Store a run's fields over the limit as markers (see run-size.ts), rather than refuse the run. */
  truncateOversize?: boolean;
  /** Bytes of runs per shard RPC (default `MAX_SHARD_RPC_BYTES`; tests set it small). */
  maxRpcBytes?: number;
};
export type IngestResult = { accepted: number; errors: RunProblem[] };

export const DEFAULT_PROJECT = "default";

type Located<T> = { run: T; projectId: string; day: string };
type Shard = { projectId: string; day: string; posts: RunPost[]; patches: RunPatch[]; attachments: RunAttachment[] };

/**
 * Runs per D1 statement that looks up or indexes their locations, bound as one JSON array (one
 * parameter, where D1 binds at most 100): a multipart request of 10,000 parts makes at most 10
 * lookups, far from the 1,000 queries of an invocation.
 */
const LOCATION_IDS_PER_LOOKUP = 1000;

const idOf = (raw: unknown): string | null => {
  const id = (raw as { id?: unknown } | null)?.id;
  return typeof id === "string" ? id : null;
};

/** The UTC day a run's own `dotted_order` segment names (its start time). */
function dayFromDottedOrder(dottedOrder: string): string {
  const own = dottedOrder.slice(dottedOrder.lastIndexOf(".") + 1);
  return `${own.slice(0, 4)}-${own.slice(4, 6)}-${own.slice(6, 8)}`;
}

export class Ingestor {
  /** Projects of this request by `id:<session_id>` or `name:<session_name>`. */
  readonly #projects = new Map<string, Promise<string | null>>();
  readonly #errors: RunProblem[] = [];

  constructor(
    private readonly db: Database,
    private readonly shards: DurableObjectNamespace<TraceShardDO>,
    private readonly workspaceId: string,
    private readonly options: IngestOptions,
  ) {}

  async ingest(
    rawPosts: unknown[],
    rawPatches: unknown[],
    rawAttachments: RunAttachment[] = [],
  ): Promise<IngestResult> {
    const posts = await this.#withLineage(
      (await Promise.all(rawPosts.map((raw) => this.#locatePost(raw)))).filter((p) => p !== null),
    );
    const postsById = new Map(posts.map((p) => [p.run.id, p]));
    const checked = rawPatches.map((raw) => this.#checkPatch(raw)).filter((p) => p !== null);
    const patchIds = new Set(checked.map((run) => run.id));
    // Runs this request does not locate by itself are looked up in the D1 index together.
    const unlocated = new Set<string>();
    for (const run of checked) if (!postsById.has(run.id) && !selfLocated(run)) unlocated.add(run.id);
    for (const { run_id } of rawAttachments) if (!postsById.has(run_id) && !patchIds.has(run_id)) unlocated.add(run_id);
    const indexed = await locateRuns(this.db, this.workspaceId, [...unlocated]);

    const patches = (
      await Promise.all(checked.map((run) => this.#locatePatch(run, postsById.get(run.id), indexed.get(run.id))))
    ).filter((p) => p !== null);
    const patchesById = new Map<string, Located<RunPatch>>();
    for (const patch of patches) if (!patchesById.has(patch.run.id)) patchesById.set(patch.run.id, patch);
    const attachments = rawAttachments
      .map((attachment): Located<RunAttachment> | null => {
        const at =
          postsById.get(attachment.run_id) ?? patchesById.get(attachment.run_id) ?? indexed.get(attachment.run_id);
        if (at) return { run: attachment, projectId: at.projectId, day: at.day };
        return this.#problem(
          "post",
          attachment.run_id,
          `attachment ${attachment.name}: run ${attachment.run_id} not found; send the run's post with or before its attachments`,
          "not_found",
        );
      })
      .filter((a) => a !== null);

    const shards = this.#byShard(posts, patches, attachments);
    // Index first: a run is readable by id as soon as the request succeeds.
    await this.#index(shards.posts, [...shards.byName.values()]);
    const refused = (
      await Promise.all([...shards.byName.entries()].map(([name, shard]) => this.#send(name, shard)))
    ).flat();
    for (const { id, detail } of refused) this.#problem("patch", id, detail);
    return {
      accepted: shards.posts.length + shards.patches.length + shards.attachments.length - refused.length,
      errors: this.#errors,
    };
  }

  /**
   * The located runs grouped by shard, and those placed. A request writes to at most
   * `MAX_INGEST_SHARDS` shards (each costs RPCs): the runs of any other are refused.
   */
  #byShard(posts: Located<RunPost>[], patches: Located<RunPatch>[], attachments: Located<RunAttachment>[]) {
    const byName = new Map<string, Shard>();
    const place = (operation: "post" | "patch", runId: string, projectId: string, day: string): Shard | null => {
      const name = traceShardName(this.workspaceId, projectId, day);
      let shard = byName.get(name);
      if (!shard) {
        if (byName.size >= MAX_INGEST_SHARDS)
          return this.#problem(
            operation,
            runId,
            `one request writes to at most ${MAX_INGEST_SHARDS} shards (a project's runs of one UTC day of start_time); send the runs of ${day} in another request`,
          );
        byName.set(name, (shard = { projectId, day, posts: [], patches: [], attachments: [] }));
      }
      return shard;
    };
    return {
      byName,
      posts: posts.filter(({ run, projectId, day }) => {
        const shard = place("post", run.id, projectId, day);
        shard?.posts.push(run);
        return shard !== null;
      }),
      patches: patches.filter(({ run, projectId, day }) => {
        const shard = place("patch", run.id, projectId, day);
        shard?.patches.push(run);
        return shard !== null;
      }),
      attachments: attachments.filter(({ run, projectId, day }) => {
        const shard = place("post", run.run_id, projectId, day);
        shard?.attachments.push(run);
        return shard !== null;
      }),
    };
  }

  /**
   * One shard's share of the request, in RPCs of at most `maxRpcBytes` each (a DO RPC carries at most
   * 32 MiB), one after the other: posts, then patches, then attachments, as one RPC would apply them.
   */
  async #send(name: string, shard: Shard): Promise<RefusedPatch[]> {
    const stub = this.shards.getByName(name);
    const limit = this.options.maxRpcBytes ?? MAX_SHARD_RPC_BYTES;
    const refused: RefusedPatch[] = [];
    for (const posts of bySize(shard.posts, rpcBytes, limit)) await stub.ingest(shard.projectId, posts, [], []);
    for (const patches of bySize(shard.patches, rpcBytes, limit))
      refused.push(...(await stub.ingest(shard.projectId, [], patches, [])));
    for (const attachments of bySize(shard.attachments, attachmentBytes, limit))
      await stub.ingest(shard.projectId, [], [], attachments);
    return refused;
  }

  #problem(
    operation: "post" | "patch",
    runId: string | null,
    detail: string,
    kind: RunProblem["kind"] = "invalid",
  ): null {
    this.#errors.push({ operation, run_id: runId, kind, detail });
    return null;
  }

  /** `run` within the size limit: as is, truncated (agent tracing), or null once refused. */
  #sized<T extends RunPatch>(operation: "post" | "patch", run: T): T | null {
    const { maxRunBytes, truncateOversize: truncate } = this.options;
    const detail = oversizeDetail(run, maxRunBytes);
    if (!detail) return run;
    return truncate ? truncateOversize(run, maxRunBytes) : this.#problem(operation, run.id, detail, "too_large");
  }

  async #locatePost(raw: unknown): Promise<Located<RunPost> | null> {
    const parsed = RunPostSchema.safeParse(raw);
    if (!parsed.success) return this.#problem("post", idOf(raw), describeIssues(parsed.error));
    const run = this.#sized("post", parsed.data);
    if (!run) return null;
    const problem = dottedOrderProblem(run);
    if (problem) return this.#problem("post", run.id, problem);
    const projectId = await this.#project(run, "post");
    if (!projectId) return null;
    return { run, projectId, day: run.start_time.slice(0, 10) };
  }

  /** Posts without a dotted_order get the trace_id and dotted_order LangSmith would derive (see lineage.ts). */
  async #withLineage(posts: Located<RunPost>[]): Promise<Located<RunPost>[]> {
    if (posts.every((p) => p.run.dotted_order !== undefined)) return posts;
    const runs = posts.map((p) => p.run);
    const indexed = await locateRuns(this.db, this.workspaceId, outsideParents(runs));
    const derived = await deriveLineage(runs, (id) => this.#storedLineage(id, indexed));
    return posts.map((p) => {
      const lineage = p.run.dotted_order === undefined ? derived.get(p.run.id) : undefined;
      return lineage ? { ...p, run: { ...p.run, ...lineage } } : p;
    });
  }

  /** A stored run's trace_id and dotted_order, from its shard (its location from `indexed`). */
  async #storedLineage(id: string, indexed: Map<string, RunLocation>): Promise<Lineage | null> {
    const location = indexed.get(id);
    if (!location) return null;
    return this.shards.getByName(traceShardName(this.workspaceId, location.projectId, location.day)).lineage(id);
  }

  /** A patch, validated and within the size limit, or null once refused. */
  #checkPatch(raw: unknown): RunPatch | null {
    const parsed = RunPatchSchema.safeParse(raw);
    if (!parsed.success) return this.#problem("patch", idOf(raw), describeIssues(parsed.error));
    const run = this.#sized("patch", parsed.data);
    if (!run) return null;
    const problem = dottedOrderProblem(run);
    if (problem) return this.#problem("patch", run.id, problem);
    return run;
  }

  /** Where a patch goes: the same request's post, else what the patch says about itself, else the D1 index. */
  async #locatePatch(
    run: RunPatch,
    post: Located<RunPost> | undefined,
    indexed: RunLocation | undefined,
  ): Promise<Located<RunPatch> | null> {
    if (post) return { run, projectId: post.projectId, day: post.day };
    const day = selfLocated(run);
    if (day) {
      const projectId = await this.#project(run, "patch");
      return projectId ? { run, projectId, day } : null;
    }
    if (!indexed)
      return this.#problem(
        "patch",
        run.id,
        `Run ${run.id} not found; a patch sent before its post must carry session_name (or session_id) and start_time or dotted_order`,
        "not_found",
      );
    return { run, projectId: indexed.projectId, day: indexed.day };
  }

  /**
   * The project id for a run, or null once refused: its `session_id` is not a project of this
   * workspace, or the request already names `MAX_INGEST_PROJECTS` others (each costs D1 queries).
   */
  async #project(
    run: { id: string; session_id?: string | null; session_name?: string | null },
    operation: "post" | "patch",
  ): Promise<string | null> {
    const key = run.session_id ? `id:${run.session_id}` : `name:${run.session_name ?? DEFAULT_PROJECT}`;
    let known = this.#projects.get(key);
    if (!known) {
      if (this.#projects.size >= MAX_INGEST_PROJECTS)
        return this.#problem(
          operation,
          run.id,
          `one request writes to at most ${MAX_INGEST_PROJECTS} projects (session_id or session_name); send the runs of the others in another request`,
        );
      known = run.session_id
        ? getProject(this.db, this.workspaceId, run.session_id).then(
            (p) => p.id,
            () => null,
          )
        : projectIdForName(this.db, this.workspaceId, run.session_name ?? DEFAULT_PROJECT);
      this.#projects.set(key, known);
    }
    const projectId = await known;
    if (!projectId)
      return this.#problem(
        operation,
        run.id,
        `session_id ${run.session_id} is not a tracing project of this workspace`,
      );
    return projectId;
  }

  /**
   * Indexes the posts' locations and the shards in D1: one statement per `LOCATION_IDS_PER_LOOKUP`
   * runs (their rows bound as one JSON parameter) and one for the shards, in one batch.
   */
  async #index(posts: Located<RunPost>[], shards: Shard[]): Promise<void> {
    // Raw D1 statements: drizzle batches only its own builders, and these bind a JSON array each.
    const d1 = this.db.$client;
    const statements: D1PreparedStatement[] = [];
    for (const group of chunked(posts, LOCATION_IDS_PER_LOOKUP)) {
      const rows = group.map((p) => [p.run.id, p.projectId, p.day]);
      statements.push(
        d1
          .prepare(
            `INSERT INTO trace_run_locations (workspace_id, run_id, project_id, day)
             SELECT ?, value ->> 0, value ->> 1, value ->> 2 FROM json_each(?) WHERE true ON CONFLICT DO NOTHING`,
          )
          .bind(this.workspaceId, JSON.stringify(rows)),
      );
    }
    if (shards.length) {
      const rows = shards.map((shard) => [shard.projectId, shard.day]);
      statements.push(
        d1
          .prepare(
            `INSERT INTO trace_shards (workspace_id, project_id, day)
             SELECT ?, value ->> 0, value ->> 1 FROM json_each(?) WHERE true ON CONFLICT DO NOTHING`,
          )
          .bind(this.workspaceId, JSON.stringify(rows)),
      );
    }
    if (statements.length) await d1.batch(statements);
  }
}

export type RunLocation = { projectId: string; day: string };

/** Where a run lives, from the D1 index. */
export async function locateRun(db: Database, workspaceId: string, runId: string): Promise<RunLocation | null> {
  const row = await db
    .select({ projectId: traceRunLocations.projectId, day: traceRunLocations.day })
    .from(traceRunLocations)
    .where(and(eq(traceRunLocations.workspaceId, workspaceId), eq(traceRunLocations.runId, runId)))
    .get();
  return row ?? null;
}

/** Where runs live, from the D1 index: one query per `LOCATION_IDS_PER_LOOKUP` ids. */
export async function locateRuns(
  db: Database,
  workspaceId: string,
  runIds: string[],
): Promise<Map<string, RunLocation>> {
  const found = new Map<string, RunLocation>();
  for (const ids of chunked(runIds, LOCATION_IDS_PER_LOOKUP)) {
    const rows = await db
      .select({ runId: traceRunLocations.runId, projectId: traceRunLocations.projectId, day: traceRunLocations.day })
      .from(traceRunLocations)
      .where(and(eq(traceRunLocations.workspaceId, workspaceId), inJsonList(traceRunLocations.runId, ids)))
      .all();
    for (const { runId, ...location } of rows) found.set(runId, location);
  }
  return found;
}

/** The UTC day a patch names by itself (start_time or dotted_order) when it also names its project, else null. */
function selfLocated(run: RunPatch): string | null {
  if (!run.session_id && !run.session_name) return null;
  return run.start_time?.slice(0, 10) ?? (run.dotted_order ? dayFromDottedOrder(run.dotted_order) : null);
}

/** Parents outside the request of the posts that need a derived lineage (see lineage.ts). */
function outsideParents(runs: RunPost[]): string[] {
  const ids = new Set(runs.map((run) => run.id));
  const parents = runs.flatMap((run) =>
    run.dotted_order === undefined && run.parent_run_id && !ids.has(run.parent_run_id) ? [run.parent_run_id] : [],
  );
  return [...new Set(parents)].slice(0, MAX_OUTSIDE_PARENTS);
}

const attachmentBytes = (attachment: RunAttachment): number =>
  attachment.data.byteLength + 2 * (attachment.name.length + attachment.mime_type.length + attachment.run_id.length);
