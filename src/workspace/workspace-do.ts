import { DurableObject } from "cloudflare:workers";
import { log } from "../observability/log.ts";
import type { Partition, PartitionKind } from "./partition.ts";
import { type RankedPage, type RankedScan, rankedScan } from "./ranked-scan.ts";
import {
  applyPartitionSchema,
  executeStatements,
  partitionRecords,
  type SqlResult,
  type SqlStatement,
  sqlDatabase,
  type WorkspaceDatabase,
} from "./sql.ts";
import { VectorCache } from "./vector-cache.ts";

/**
 * A partition's scheduled work (fire due crons, sweep expired items…), run on the object's alarm
 * with the partition's own database; answers when it next needs to run (epoch ms), or null.
 */
export type PartitionAlarm = (env: Env, partition: Partition, db: WorkspaceDatabase) => Promise<number | null>;

/** How long a partition's alarm waits before trying again after its work threw. */
const ALARM_RETRY_MS = 30_000;

/**
 * The Durable Object class of workspace partitions, given each kind's alarm work. The object is only
 * a SQLite executor and an alarm: the queries are the domain's own (its `store.ts`), sent as drizzle
 * builds them, so each storage concern stays in one place whether it lives in D1 or here.
 */
export function workspaceObject(alarms: Partial<Record<PartitionKind, PartitionAlarm>>) {
  return class WorkspaceDO extends DurableObject<Env> {
    /** Kinds whose schema this instance has checked (once per instance, not per call). */
    readonly #ready = new Set<PartitionKind>();
    /** The kind this object holds, once a call named it. */
    #kind: PartitionKind | undefined;
    /** The sketches of the store partition's vectors, for its searches (vector-cache.ts). */
    readonly #vectors = new VectorCache();
    /** The object itself as a database, for its alarm work (no RPC to itself). */
    readonly #db = sqlDatabase((statements) => this.#execute(statements));

    /** Runs statements on the object's SQLite; in a store partition, the vector cache learns what they rewrote. */
    #execute(statements: readonly SqlStatement[]): SqlResult[] {
      const observe = this.#kind === "store" ? this.#observeVectors : undefined;
      return executeStatements(this.ctx.storage, statements, observe);
    }

    readonly #observeVectors = (sql: string, rows: readonly unknown[][]) => this.#vectors.written(sql, rows);

    /** What the usage meter counts this object's requests and rows under: `WorkspaceDO:<kind>`. */
    usageLabel(args?: readonly unknown[]): string {
      const named = (args?.[0] as Partial<Partition> | undefined)?.kind;
      const kind = typeof named === "string" ? named : this.#kind;
      return kind ? `WorkspaceDO:${kind}` : "WorkspaceDO";
    }

    #prepare(partition: Partition): void {
      this.#kind ??= partition.kind;
      if (this.#ready.has(partition.kind)) return;
      applyPartitionSchema(this.ctx.storage, {
        kind: partition.kind,
        workspaceId: partition.workspaceId,
        shard: partition.shard ?? null,
      });
      this.#ready.add(partition.kind);
    }

    /**
     * Runs a statement, or several atomically, on the partition's tables; with `armAt`, then makes the
     * alarm fire no later than that (a write that schedules work, in the same call).
     */
    async exec(partition: Partition, statements: SqlStatement[], armAt?: number): Promise<SqlResult[]> {
      this.#prepare(partition);
      const results = this.#execute(statements);
      if (armAt !== undefined) await this.#arm(armAt);
      return results;
    }

    /** A search by similarity over the partition's vectors, scored here (see ranked-scan.ts). */
    async rank(partition: Partition, scan: RankedScan): Promise<RankedPage> {
      this.#prepare(partition);
      return rankedScan(this.ctx.storage, scan, this.#vectors);
    }

    /** Makes the alarm fire no later than `at`. */
    async arm(partition: Partition, at: number): Promise<void> {
      this.#prepare(partition);
      await this.#arm(at);
    }

    async #arm(at: number): Promise<void> {
      const current = await this.ctx.storage.getAlarm();
      if (current === null || at < current) await this.ctx.storage.setAlarm(at);
    }

    async alarm(): Promise<void> {
      let next: number | null = null;
      for (const record of partitionRecords(this.ctx.storage)) {
        const work = alarms[record.kind];
        if (!work) continue;
        const partition: Partition = {
          workspaceId: record.workspaceId,
          kind: record.kind,
          ...(record.shard !== null && { shard: record.shard }),
        };
        this.#prepare(partition);
        let at: number | null;
        try {
          at = await work(this.env, partition, this.#db);
        } catch (error) {
          log.error("workspace partition alarm failed; retrying", {
            partition: `${record.workspaceId}/${record.kind}`,
            error: error instanceof Error ? error.message : String(error),
          });
          at = Date.now() + ALARM_RETRY_MS;
        }
        if (at !== null && (next === null || at < next)) next = at;
      }
      // An `arm` that came in while the work ran may have asked for an earlier time.
      const armed = await this.ctx.storage.getAlarm();
      if (next !== null && (armed === null || next < armed)) await this.ctx.storage.setAlarm(next);
    }
  };
}

/** A workspace partition's object, as its stubs see it. */
export type WorkspaceDO = InstanceType<ReturnType<typeof workspaceObject>>;
