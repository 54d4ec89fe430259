import { bySize, rpcBytes } from "../core/batches.ts";
import type { ErrorKind } from "../core/errors.ts";
import {
  MAX_INGEST_PROJECTS,
  MAX_INGEST_SHARDS,
  MAX_SHARD_RPC_BYTES,
  TRACE_GENERATION_MARGIN_MS,
  type TraceShardVars,
  traceExpiry,
  traceShardBounds,
} from "../core/limits.ts";
import type { WorkspaceBindings } from "../workspace/database.ts";
import { locateRuns, type RunLocation, recordLocations, recordShards, type TracesDatabase } from "./directory.ts";
import { generationsOf, openGeneration } from "./generations.ts";
import { deriveLineage, type Lineage, MAX_OUTSIDE_PARENTS } from "./lineage.ts";
import { getProject, projectRefForName } from "./projects/service.ts";
import { describeIssues, dottedOrderProblem, type RunAttachment } from "./run-input.ts";
import { oversizeDetail, truncateOversize } from "./run-size.ts";
import { type RunPatch, RunPatchSchema, type RunPost, RunPostSchema } from "./schemas.ts";
import type { RefusedPatch } from "./shard-runs.ts";
import {
  dayOfSplit,
  type Generation,
  generationOfSplit,
  MAX_LOAD_SPLIT_BUCKETS,
  nextGeneration,
  placeTrace,
  rootTimeOf,
  traceKeyOf,
  withGenerationZero,
} from "./splits.ts";
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
  kind: Extract<ErrorKind, "not_found" | "too_large" | "invalid" | "unavailable">;
  detail: string;
};
export type IngestOptions = {
  /** `MAX_TRACED_RUN_BYTES` in force (see `tracedRunLimit`). */
  maxRunBytes: number;
  /** Store a run's fields over the limit as markers (see run-size.ts), rather than refuse the run. */
  truncateOversize?: boolean;
  /** Bytes of runs per shard RPC (default `MAX_SHARD_RPC_BYTES`; tests set it small). */
  maxRpcBytes?: number;
  /**
   * The request's (or the thread object's) bindings: the workspace partitions (run locator, shard
   * directory) and the shard size vars, so every call goes through the caller's guarded bindings.
   */
  env: WorkspaceBindings & TraceShardVars;
  /** The clock new generations start from (tests move it). */
  now?: () => number;
};
export type IngestResult = { accepted: number; errors: RunProblem[] };

export const DEFAULT_PROJECT = "default";

/** A run with its project and UTC day, and its split key (splits.ts) once placed. */
type Located<T> = { run: T; projectId: string; day: string; split: string | null };
type Placed<T> = Located<T> & { split: string };
type Shard = {
  projectId: string;
  day: string;
  split: string;
  posts: RunPost[];
  patches: RunPatch[];
  attachments: RunAttachment[];
};

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
  /** The retention tier of each project this request resolved, by id. */
  readonly #tiers = new Map<string, string | null>();
  readonly #errors: RunProblem[] = [];

  constructor(
    /** The workspace's `traces` partition: projects and the shard directory. */
    private readonly db: TracesDatabase,
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
    // Runs this request does not locate by itself are looked up in the D1 index together. A patch
    // without its dotted_order cannot name its trace root's time, so its split comes from the index.
    const unlocated = new Set<string>();
    for (const run of checked)
      if (!postsById.has(run.id) && !(run.dotted_order && selfLocated(run))) unlocated.add(run.id);
    for (const { run_id } of rawAttachments) if (!postsById.has(run_id) && !patchIds.has(run_id)) unlocated.add(run_id);
    const indexed = await locateRuns(this.#env, this.workspaceId, [...unlocated]);

    const located = (
      await Promise.all(checked.map((run) => this.#locatePatch(run, postsById.get(run.id), indexed.get(run.id))))
    ).filter((p) => p !== null);
    const { posts: placedPosts, patches } = await this.#place(posts, located, postsById);
    const placedById = new Map(placedPosts.map((p) => [p.run.id, p]));
    const patchesById = new Map<string, Placed<RunPatch>>();
    for (const patch of patches) if (!patchesById.has(patch.run.id)) patchesById.set(patch.run.id, patch);
    const attachments = rawAttachments
      .map((attachment): Placed<RunAttachment> | null => {
        const post = placedById.get(attachment.run_id) ?? patchesById.get(attachment.run_id);
        if (post) return { run: attachment, projectId: post.projectId, day: post.day, split: post.split };
        const at = indexed.get(attachment.run_id);
        if (at) return { run: attachment, ...placedAt(at) };
        return this.#problem(
          "post",
          attachment.run_id,
          `attachment ${attachment.name}: run ${attachment.run_id} not found; send the run's post with or before its attachments`,
          "not_found",
        );
      })
      .filter((a) => a !== null);

    const shards = this.#byShard(placedPosts, patches, attachments);
    // Index first: a run is readable by id as soon as the request succeeds.
    await this.#index(shards.posts, [...shards.byName.values()]);
    const answers = await Promise.all([...shards.byName.entries()].map(([name, shard]) => this.#send(name, shard)));
    let refusedCount = await this.#redirectWaiting(
      [...shards.byName.values()].flatMap((shard, i) => answers[i].waiting.map((id) => ({ id, shard }))),
      patches,
      postsById,
    );
    for (const { refused, fullRuns } of answers) {
      for (const { id, detail } of refused) this.#problem("patch", id, detail);
      for (const { operation, id, detail } of fullRuns) this.#problem(operation, id, detail, "unavailable");
      refusedCount += refused.length + fullRuns.length;
    }
    await this.#split(
      [...shards.byName.values()].flatMap((shard, i) => {
        const large = answers[i].bytes >= this.#bounds.splitBytes;
        return large || answers[i].busy ? [{ shard, large }] : [];
      }),
      this.#generations,
    );
    return {
      accepted: shards.posts.length + shards.patches.length + shards.attachments.length - refusedCount,
      errors: this.#errors,
    };
  }

  /**
   * Patches that a shard holds no run for, when the run index places the run in another split:
   * sent there. A patch naming its dotted_order goes where its trace's root time places it, and so
   * does its post, unless the post was placed before an isolate knew a generation its root falls
   * in (a root start_time ahead of the server's clock by more than the generation margin). One index
   * query, only when some patch waits. Answers how many of them the right shard refused.
   */
  async #redirectWaiting(
    waiting: { id: string; shard: Shard }[],
    patches: Placed<RunPatch>[],
    postsById: Map<string, Located<RunPost>>,
  ): Promise<number> {
    const candidates = waiting.filter(({ id }) => !postsById.has(id));
    if (!candidates.length) return 0;
    const located = await locateRuns(
      this.#env,
      this.workspaceId,
      candidates.map(({ id }) => id),
    );
    const moved = new Map<string, Shard>();
    for (const { id, shard } of candidates) {
      const location = located.get(id);
      if (!location || (location.projectId === shard.projectId && location.day === shard.split)) continue;
      const at = placedAt(location);
      const name = traceShardName(this.workspaceId, at.projectId, at.split);
      const target = moved.get(name) ?? { ...at, posts: [], patches: [], attachments: [] };
      target.patches.push(...patches.filter((patch) => patch.run.id === id).map((patch) => patch.run));
      moved.set(name, target);
    }
    const answers = await Promise.all([...moved.entries()].map(([name, shard]) => this.#send(name, shard)));
    for (const { refused } of answers) for (const { id, detail } of refused) this.#problem("patch", id, detail);
    return answers.reduce((sum, { refused }) => sum + refused.length, 0);
  }

  get #env(): WorkspaceBindings & TraceShardVars {
    return this.options.env;
  }

  get #bounds() {
    return traceShardBounds(this.#env);
  }

  /** The generations of the project-days this request places runs in, by `projectId/day`. */
  #generations = new Map<string, Generation[]>();

  /**
   * Each run's split: a patch of a post in the request goes where the post goes, one located by the
   * index where the index says; the others by their trace root's time and trace id (splits.ts),
   * after one read of the project-days' generations (usually this isolate's copy, no read at all).
   */
  async #place(
    posts: Located<RunPost>[],
    patches: Located<RunPatch>[],
    postsById: Map<string, Located<RunPost>>,
  ): Promise<{ posts: Placed<RunPost>[]; patches: Placed<RunPatch>[] }> {
    const unplaced = [...posts, ...patches.filter((p) => p.split === null && !postsById.has(p.run.id))];
    const pairs = new Map(unplaced.map((p) => [`${p.projectId}/${p.day}`, { projectId: p.projectId, day: p.day }]));
    this.#generations = pairs.size ? await generationsOf(this.#env, this.workspaceId, [...pairs.values()]) : new Map();
    const place = <T extends RunPost | RunPatch>(p: Located<T>): Placed<T> => {
      if (p.split !== null) return p as Placed<T>;
      const generations = this.#generations.get(`${p.projectId}/${p.day}`) ?? [];
      const root = rootTimeOf(p.run) ?? Number.NEGATIVE_INFINITY;
      return { ...p, split: placeTrace(p.day, generations, root, traceKeyOf(p.run)) };
    };
    const placedPosts = posts.map(place);
    const byId = new Map(placedPosts.map((p) => [p.run.id, p]));
    return {
      posts: placedPosts,
      patches: patches.map((p) => {
        const post = byId.get(p.run.id);
        return post ? { ...p, projectId: post.projectId, day: post.day, split: post.split } : place(p);
      }),
    };
  }

  /**
   * Opens the next generation of the project-days whose shards just passed the split size
   * (`large`) or the split call rate, when the shard is of the newest generation (an older one only
   * finishes its traces) and the new one would start within the day (a past day's roots all fall
   * before it: only the cap bounds a backfill). Load alone spreads a day over at most
   * `MAX_LOAD_SPLIT_BUCKETS` buckets: one hot trace stays in one shard however many there are.
   */
  async #split(full: { shard: Shard; large: boolean }[], known: Map<string, Generation[]>): Promise<void> {
    const now = this.options.now?.() ?? Date.now();
    const from = now + TRACE_GENERATION_MARGIN_MS;
    const opening = new Map<string, Shard>();
    for (const { shard, large } of full) {
      const generations = known.get(`${shard.projectId}/${shard.day}`) ?? [];
      const newest = withGenerationZero(generations).at(-1)!;
      if (generationOfSplit(shard.split) !== newest.generation) continue;
      if (!large && newest.buckets >= MAX_LOAD_SPLIT_BUCKETS) continue;
      if (from >= Date.parse(`${shard.day}T00:00:00Z`) + DAY_MS) continue;
      opening.set(`${shard.projectId}/${shard.day}`, shard);
    }
    await Promise.all(
      [...opening.entries()].map(([key, shard]) =>
        openGeneration(
          this.#env,
          this.workspaceId,
          { projectId: shard.projectId, day: shard.day },
          nextGeneration(known.get(key) ?? [], from),
          now,
        ),
      ),
    );
  }

  /**
   * The located runs grouped by shard, and those placed. A request writes to at most
   * `MAX_INGEST_SHARDS` shards (each costs RPCs): the runs of any other are refused.
   */
  #byShard(posts: Placed<RunPost>[], patches: Placed<RunPatch>[], attachments: Placed<RunAttachment>[]) {
    const byName = new Map<string, Shard>();
    const place = (
      operation: "post" | "patch",
      runId: string,
      { projectId, day, split }: { projectId: string; day: string; split: string },
    ): Shard | null => {
      const name = traceShardName(this.workspaceId, projectId, split);
      let shard = byName.get(name);
      if (!shard) {
        if (byName.size >= MAX_INGEST_SHARDS)
          return this.#problem(
            operation,
            runId,
            `one request writes to at most ${MAX_INGEST_SHARDS} shards (a split of a project's runs of one UTC day of start_time); send the runs of ${day} in another request`,
          );
        byName.set(name, (shard = { projectId, day, split, posts: [], patches: [], attachments: [] }));
      }
      return shard;
    };
    return {
      byName,
      posts: posts.filter((p) => {
        const shard = place("post", p.run.id, p);
        shard?.posts.push(p.run);
        return shard !== null;
      }),
      patches: patches.filter((p) => {
        const shard = place("patch", p.run.id, p);
        shard?.patches.push(p.run);
        return shard !== null;
      }),
      attachments: attachments.filter(({ run, ...p }) => {
        const shard = place("post", run.run_id, p);
        shard?.attachments.push(run);
        return shard !== null;
      }),
    };
  }

  /**
   * One shard's share of the request, in RPCs of at most `maxRpcBytes` each (a DO RPC carries at most
   * 32 MiB), one after the other: posts, then patches, then attachments, as one RPC would apply them.
   */
  async #send(
    name: string,
    shard: Shard,
  ): Promise<{
    refused: RefusedPatch[];
    fullRuns: { operation: "post"; id: string; detail: string }[];
    waiting: string[];
    bytes: number;
    busy: boolean;
  }> {
    const stub = this.shards.getByName(name);
    const limit = this.options.maxRpcBytes ?? MAX_SHARD_RPC_BYTES;
    const { capBytes, splitCalls } = this.#bounds;
    // The shard deletes itself once its project's retention after its last writes is over.
    const bounds = { capBytes, splitCalls, expiresAt: traceExpiry(this.#tiers.get(shard.projectId)) };
    const refused: RefusedPatch[] = [];
    const fullRuns: { operation: "post"; id: string; detail: string }[] = [];
    let bytes = 0;
    let busy = false;
    const waiting: string[] = [];
    for (const posts of bySize(shard.posts, rpcBytes, limit)) {
      const answer = await stub.ingest(shard.projectId, posts, [], [], bounds);
      if (answer.full) for (const run of posts) fullRuns.push({ operation: "post", id: run.id, detail: answer.full });
      bytes = answer.bytes;
      busy ||= answer.busy;
    }
    for (const patches of bySize(shard.patches, rpcBytes, limit)) {
      const answer = await stub.ingest(shard.projectId, [], patches, [], bounds);
      refused.push(...answer.refused);
      waiting.push(...answer.waiting);
      bytes = answer.bytes;
      busy ||= answer.busy;
    }
    for (const attachments of bySize(shard.attachments, attachmentBytes, limit)) {
      const answer = await stub.ingest(shard.projectId, [], [], attachments, bounds);
      if (answer.full)
        for (const attachment of attachments)
          fullRuns.push({
            operation: "post",
            id: attachment.run_id,
            detail: `attachment ${attachment.name}: ${answer.full}`,
          });
      bytes = answer.bytes;
      busy ||= answer.busy;
    }
    return { refused, fullRuns, waiting, bytes, busy };
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
    return { run, projectId, day: run.start_time.slice(0, 10), split: null };
  }

  /** Posts without a dotted_order get the trace_id and dotted_order LangSmith would derive (see lineage.ts). */
  async #withLineage(posts: Located<RunPost>[]): Promise<Located<RunPost>[]> {
    if (posts.every((p) => p.run.dotted_order !== undefined)) return posts;
    const runs = posts.map((p) => p.run);
    const indexed = await locateRuns(this.#env, this.workspaceId, outsideParents(runs));
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

  /**
   * Where a patch goes: the same request's post, else what the patch says about itself when it
   * carries its dotted_order (its trace root's time), else the D1 index, else its own start time.
   */
  async #locatePatch(
    run: RunPatch,
    post: Located<RunPost> | undefined,
    indexed: RunLocation | undefined,
  ): Promise<Located<RunPatch> | null> {
    if (post) return { run, projectId: post.projectId, day: post.day, split: null };
    const day = selfLocated(run);
    if (day && (run.dotted_order || !indexed)) {
      const projectId = await this.#project(run, "patch");
      return projectId ? { run, projectId, day, split: null } : null;
    }
    if (!indexed)
      return this.#problem(
        "patch",
        run.id,
        `Run ${run.id} not found; a patch sent before its post must carry session_name (or session_id) and start_time or dotted_order`,
        "not_found",
      );
    return { run, ...placedAt(indexed) };
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
      known = (
        run.session_id
          ? getProject(this.db, this.workspaceId, run.session_id).then(
              (p) => ({ id: p.id, traceTier: p.trace_tier }),
              () => null,
            )
          : projectRefForName(this.db, this.workspaceId, run.session_name ?? DEFAULT_PROJECT)
      ).then((ref) => {
        if (ref) this.#tiers.set(ref.id, ref.traceTier);
        return ref?.id ?? null;
      });
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
   * Records the posts' locations (in the workspace's locator shards) and the shards that now hold
   * runs (in its directory), in parallel. The location's day column holds the split key: the run's
   * shard, not only its day.
   */
  async #index(posts: Placed<RunPost>[], shards: Shard[]): Promise<void> {
    await Promise.all([
      recordLocations(
        this.#env,
        this.workspaceId,
        posts.map((p) => ({
          runId: p.run.id,
          projectId: p.projectId,
          split: p.split,
          expiresAt: traceExpiry(this.#tiers.get(p.projectId)),
        })),
      ),
      shards.length ? recordShards(this.db, this.workspaceId, shards) : undefined,
    ]);
  }
}

/** A located run's project, day and split, from its index entry. */
const placedAt = (location: RunLocation) => ({
  projectId: location.projectId,
  day: dayOfSplit(location.day),
  split: location.day,
});

const DAY_MS = 86_400_000;

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
