import { and, eq } from "drizzle-orm";
import type { ErrorKind } from "../core/errors.ts";
import type { Database } from "../db/client.ts";
import { traceRunLocations, traceShards } from "../db/schema.ts";
import { deriveLineage, type Lineage } from "./lineage.ts";
import { getProject, projectIdForName } from "./projects/service.ts";
import { describeIssues, dottedOrderProblem, type RunAttachment } from "./run-input.ts";
import { oversizeDetail, truncateOversize } from "./run-size.ts";
import { type RunPatch, RunPatchSchema, type RunPost, RunPostSchema } from "./schemas.ts";
import { type TraceShardDO, traceShardName } from "./trace-shard-do.ts";

/**
 * Ingestion: validates each run on its own (one bad run never sinks the rest), resolves its project
 * (by `session_id`, else by `session_name`, created on first use, default "default"), and sends
 * each shard its runs in one RPC. Run locations are indexed in D1 for patches and reads by id.
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
};
export type IngestResult = { accepted: number; errors: RunProblem[] };

export const DEFAULT_PROJECT = "default";

type Located<T> = { run: T; projectId: string; day: string };
type Shard = { projectId: string; day: string; posts: RunPost[]; patches: RunPatch[]; attachments: RunAttachment[] };

/** D1 binds at most 100 parameters per statement. */
const LOCATION_ROWS_PER_STATEMENT = 25;

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
  readonly #projectsByName = new Map<string, Promise<string>>();
  readonly #projectsById = new Map<string, Promise<string | null>>();
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
    const patches = (await Promise.all(rawPatches.map((raw) => this.#locatePatch(raw, posts)))).filter(
      (p) => p !== null,
    );
    const attachments = (
      await Promise.all(rawAttachments.map((attachment) => this.#locateAttachment(attachment, posts, patches)))
    ).filter((a) => a !== null);

    const byShard = new Map<string, Shard>();
    const shardFor = (projectId: string, day: string) => {
      const name = traceShardName(this.workspaceId, projectId, day);
      let shard = byShard.get(name);
      if (!shard) byShard.set(name, (shard = { projectId, day, posts: [], patches: [], attachments: [] }));
      return shard;
    };
    for (const { run, projectId, day } of posts) shardFor(projectId, day).posts.push(run);
    for (const { run, projectId, day } of patches) shardFor(projectId, day).patches.push(run);
    for (const { run, projectId, day } of attachments) shardFor(projectId, day).attachments.push(run);

    // Index first: a run is readable by id as soon as the request succeeds.
    await this.#index(posts, [...byShard.values()]);
    await Promise.all(
      [...byShard.entries()].map(([name, shard]) =>
        this.shards.getByName(name).ingest(shard.projectId, shard.posts, shard.patches, shard.attachments),
      ),
    );
    return { accepted: posts.length + patches.length + attachments.length, errors: this.#errors };
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
    const projectId = await this.#project(run);
    if (!projectId)
      return this.#problem("post", run.id, `session_id ${run.session_id} is not a tracing project of this workspace`);
    return { run, projectId, day: run.start_time.slice(0, 10) };
  }

  /** Posts without a dotted_order get the trace_id and dotted_order LangSmith would derive (see lineage.ts). */
  async #withLineage(posts: Located<RunPost>[]): Promise<Located<RunPost>[]> {
    if (posts.every((p) => p.run.dotted_order !== undefined)) return posts;
    const derived = await deriveLineage(
      posts.map((p) => p.run),
      (id) => this.#storedLineage(id),
    );
    return posts.map((p) => {
      const lineage = p.run.dotted_order === undefined ? derived.get(p.run.id) : undefined;
      return lineage ? { ...p, run: { ...p.run, ...lineage } } : p;
    });
  }

  /** A stored run's trace_id and dotted_order, from its shard. */
  async #storedLineage(id: string): Promise<Lineage | null> {
    const location = await locateRun(this.db, this.workspaceId, id);
    if (!location) return null;
    return this.shards.getByName(traceShardName(this.workspaceId, location.projectId, location.day)).lineage(id);
  }

  async #locatePatch(raw: unknown, posts: Located<RunPost>[]): Promise<Located<RunPatch> | null> {
    const parsed = RunPatchSchema.safeParse(raw);
    if (!parsed.success) return this.#problem("patch", idOf(raw), describeIssues(parsed.error));
    const run = this.#sized("patch", parsed.data);
    if (!run) return null;
    const problem = dottedOrderProblem(run);
    if (problem) return this.#problem("patch", run.id, problem);
    // Same request's post first, then what the patch says about itself, then the D1 index.
    const post = posts.find((p) => p.run.id === run.id);
    if (post) return { run, projectId: post.projectId, day: post.day };
    const day = run.start_time?.slice(0, 10) ?? (run.dotted_order ? dayFromDottedOrder(run.dotted_order) : null);
    if (day && (run.session_id || run.session_name)) {
      const projectId = await this.#project(run);
      if (!projectId)
        return this.#problem(
          "patch",
          run.id,
          `session_id ${run.session_id} is not a tracing project of this workspace`,
        );
      return { run, projectId, day };
    }
    const location = await locateRun(this.db, this.workspaceId, run.id);
    if (!location)
      return this.#problem(
        "patch",
        run.id,
        `Run ${run.id} not found; a patch sent before its post must carry session_name (or session_id) and start_time or dotted_order`,
        "not_found",
      );
    return { run, projectId: location.projectId, day: location.day };
  }

  /** An attachment goes to its run's shard: from this request's post or patch, else from the D1 index. */
  async #locateAttachment(
    attachment: RunAttachment,
    posts: Located<RunPost>[],
    patches: Located<RunPatch>[],
  ): Promise<Located<RunAttachment> | null> {
    const sibling =
      posts.find((p) => p.run.id === attachment.run_id) ?? patches.find((p) => p.run.id === attachment.run_id);
    if (sibling) return { run: attachment, projectId: sibling.projectId, day: sibling.day };
    const location = await locateRun(this.db, this.workspaceId, attachment.run_id);
    if (!location)
      return this.#problem(
        "post",
        attachment.run_id,
        `attachment ${attachment.name}: run ${attachment.run_id} not found; send the run's post with or before its attachments`,
        "not_found",
      );
    return { run: attachment, projectId: location.projectId, day: location.day };
  }

  /** The project id for a run, or null when its `session_id` is not a project of this workspace. */
  async #project(run: { session_id?: string | null; session_name?: string | null }): Promise<string | null> {
    if (run.session_id) {
      let known = this.#projectsById.get(run.session_id);
      if (!known) {
        known = getProject(this.db, this.workspaceId, run.session_id).then(
          (p) => p.id,
          () => null,
        );
        this.#projectsById.set(run.session_id, known);
      }
      return known;
    }
    const name = run.session_name ?? DEFAULT_PROJECT;
    let id = this.#projectsByName.get(name);
    if (!id) this.#projectsByName.set(name, (id = projectIdForName(this.db, this.workspaceId, name)));
    return id;
  }

  async #index(posts: Located<RunPost>[], shards: Shard[]): Promise<void> {
    const locations = posts.map(({ run, projectId, day }) => ({
      workspaceId: this.workspaceId,
      runId: run.id,
      projectId,
      day,
    }));
    const statements = [];
    for (let i = 0; i < locations.length; i += LOCATION_ROWS_PER_STATEMENT) {
      statements.push(
        this.db
          .insert(traceRunLocations)
          .values(locations.slice(i, i + LOCATION_ROWS_PER_STATEMENT))
          .onConflictDoNothing(),
      );
    }
    for (const shard of shards) {
      statements.push(
        this.db
          .insert(traceShards)
          .values({ workspaceId: this.workspaceId, projectId: shard.projectId, day: shard.day })
          .onConflictDoNothing(),
      );
    }
    const [first, ...rest] = statements;
    if (first) await this.db.batch([first, ...rest]);
  }
}

/** Where a run lives, from the D1 index. */
export async function locateRun(
  db: Database,
  workspaceId: string,
  runId: string,
): Promise<{ projectId: string; day: string } | null> {
  const row = await db
    .select({ projectId: traceRunLocations.projectId, day: traceRunLocations.day })
    .from(traceRunLocations)
    .where(and(eq(traceRunLocations.workspaceId, workspaceId), eq(traceRunLocations.runId, runId)))
    .get();
  return row ?? null;
}
