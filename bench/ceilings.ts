/**
 * The ceiling table: for each Durable Object class and for D1, the load one operation puts on it, where
 * that load lands (one object per entity, per tenant, or one for the whole deployment), and the
 * operation rate at which one object (or the database) reaches its documented limit. The limits and
 * the placement of each part are declared here, once.
 */
import { METRICS_SHARDS, TRACE_SHARD_SPLIT_BYTES } from "../src/core/limits.ts";
import { MAX_LOAD_SPLIT_BUCKETS } from "../src/tracing/splits.ts";
import { RUN_LOCATOR_SHARDS, THREAD_INDEX_SHARDS } from "../src/workspace/partition.ts";

/** Cloudflare's documented limits the ceilings are computed against. */
export const LIMITS = {
  /**
   * Durable Objects: "An individual Object has a soft limit of 1,000 requests per second"; past it,
   * callers get "overloaded" errors. developers.cloudflare.com/durable-objects/platform/limits/ (FAQ).
   */
  objectRequestsPerS: 1_000,
  /**
   * D1: "Each individual D1 database is inherently single-threaded … If your average query takes 1 ms,
   * you can run approximately 1,000 queries per second." developers.cloudflare.com/d1/platform/limits/
   */
  d1QueriesPerS: 1_000,
  /**
   * "Storage per Durable Object 10 GB" (developers.cloudflare.com/durable-objects/platform/limits/);
   * D1 "Maximum database size 10 GB … cannot be further increased" (developers.cloudflare.com/d1/platform/limits/).
   */
  storageBytes: 10_000_000_000,
} as const;

export type Scope = "entity" | "tenant" | "deployment";

export interface Placement {
  /** entity: one object per thread (or run…); tenant: per workspace or project; deployment: one for all. */
  scope: Scope;
  /** What one object is, in words. */
  per: string;
  /** The object is replaced by a new one after this long (a trace shard per UTC day): storage rolls over. */
  rollsOverS?: number;
  /** Objects of one tenant the part's load spreads over evenly (a hash of the key picks one); 1 when absent. */
  spread?: number;
  /** The part opens another object before one passes this many bytes (trace shards split): it never reaches 10 GB. */
  splitsAtBytes?: number;
}

/** The D1 database's name in the tables (the meter counts it apart from the Durable Object classes). */
export const D1 = "D1";

/**
 * Where each class's objects are, by the class's exported name. A class missing here is reported as
 * "placement unknown" and its ceiling computed as if it were one object for the whole deployment.
 */
export const PLACEMENT: Record<string, Placement> = {
  ThreadDO: { scope: "entity", per: "thread" },
  // A project-day splits by load up to 64 shards (250 ingest calls/s each), and by size before 2 GiB.
  TraceShardDO: {
    scope: "tenant",
    per: "project-day split",
    rollsOverS: 86_400,
    spread: MAX_LOAD_SPLIT_BUCKETS,
    splitsAtBytes: TRACE_SHARD_SPLIT_BYTES,
  },
  // Workspace partitions (src/workspace/partition.ts), counted by kind: `WorkspaceDO:<kind>`.
  WorkspaceDO: { scope: "tenant", per: "workspace partition" },
  "WorkspaceDO:threads": { scope: "tenant", per: "workspace thread index shard", spread: THREAD_INDEX_SHARDS },
  "WorkspaceDO:runs": { scope: "tenant", per: "workspace run locator shard", spread: RUN_LOCATOR_SHARDS },
  "WorkspaceDO:store": { scope: "tenant", per: "workspace store" },
  "WorkspaceDO:crons": { scope: "tenant", per: "workspace crons" },
  "WorkspaceDO:traces": { scope: "tenant", per: "workspace tracing directory" },
  "WorkspaceDO:a2a": { scope: "tenant", per: "workspace A2A tasks" },
  // Each isolate flushes to one of METRICS_SHARDS objects every 5 s: no load per operation.
  MetricsDO: { scope: "deployment", per: "metrics shard", spread: METRICS_SHARDS },
  [D1]: { scope: "deployment", per: "deployment" },
};

/** A part's placement; "D1 writes" and other views of D1 are D1's. */
export function placementOf(part: string): Placement & { known: boolean } {
  const known = PLACEMENT[part] ?? (part.startsWith(`${D1} `) ? PLACEMENT[D1] : undefined);
  return known ? { ...known, known: true } : { scope: "deployment", per: "placement unknown", known: false };
}

/** One part's load per operation, as the usage meter counted it. */
export interface PartLoad {
  part: string;
  /** Requests per operation (Durable Object calls, or D1 queries). */
  perOp: number;
  /** Bytes stored per operation in the part's largest object, when measured. */
  largestObjectBytesPerOp?: number;
}

export interface Ceiling {
  part: string;
  placement: Placement & { known: boolean };
  perOp: number;
  /** Operations per second at which one object (the database) reaches its request limit; Infinity without load. */
  opsPerS: number;
  /** Operations until the largest object reaches 10 GB, when its growth per operation was measured. */
  opsToFull?: number;
  /** For objects that roll over: the sustained operation rate that fills one before it rolls over. */
  sustainedOpsPerS?: number;
}

/** The ceiling of one part: its documented limit over the load one operation puts on one object. */
export function ceilingOf(load: PartLoad): Ceiling {
  const placement = placementOf(load.part);
  const limit = load.part === D1 || load.part.startsWith(`${D1} `) ? LIMITS.d1QueriesPerS : LIMITS.objectRequestsPerS;
  const opsPerS = load.perOp > 0 ? (limit * (placement.spread ?? 1)) / load.perOp : Number.POSITIVE_INFINITY;
  const growth = load.largestObjectBytesPerOp;
  const opsToFull = growth && growth > 0 && !placement.splitsAtBytes ? LIMITS.storageBytes / growth : undefined;
  return {
    part: load.part,
    placement,
    perOp: load.perOp,
    opsPerS,
    ...(opsToFull !== undefined ? { opsToFull } : {}),
    ...(opsToFull !== undefined && placement.rollsOverS ? { sustainedOpsPerS: opsToFull / placement.rollsOverS } : {}),
  };
}

/** The lowest ceiling of the parts whose one object serves the whole deployment (the deployment's ceiling). */
export function deploymentCeiling(ceilings: readonly Ceiling[]): Ceiling | undefined {
  return ceilings
    .filter((ceiling) => ceiling.placement.scope === "deployment" && ceiling.perOp > 0)
    .reduce<Ceiling | undefined>((low, ceiling) => (!low || ceiling.opsPerS < low.opsPerS ? ceiling : low), undefined);
}
