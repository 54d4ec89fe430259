/**
 * List prices, in one dated place: what Cloudflare charges for the units the usage meter counts, and
 * what the anchor (LangGraph Platform, now LangSmith Deployment and LangSmith tracing) charges for the
 * same work. Transcribed from /work/shared/reference/anchors-memory-cli-pricing.md §5 (each source
 * below is the page or file it cites). Prices change: re-check each source before quoting a figure,
 * and update `PRICES_READ` with the date you checked.
 */

/** When these prices were read from their sources (the reference's snapshot of them). */
export const PRICES_READ = "2026-09-25";

export interface Price {
  /** US dollars per million units, beyond the plan's monthly allowance (marginal cost). */
  usdPerMillion: number;
  unit: string;
  /** The page the price is published on, and the date of the copy read. */
  source: string;
  asOf: string;
}

/** Workers Paid ($5/month minimum) list prices. */
export const CLOUDFLARE = {
  /** Cron Trigger invocations count; queue consumer invocations are counted as requests here too. */
  workerRequests: {
    usdPerMillion: 0.3,
    unit: "request",
    source: "https://developers.cloudflare.com/workers/platform/pricing/ (10 M included/month)",
    asOf: PRICES_READ,
  },
  workerCpuMs: {
    usdPerMillion: 0.02,
    unit: "CPU ms",
    source: "https://developers.cloudflare.com/workers/platform/pricing/ (30 M CPU-ms included/month)",
    asOf: PRICES_READ,
  },
  /** Each RPC method call on a stub, HTTP request and alarm is one request. */
  objectRequests: {
    usdPerMillion: 0.15,
    unit: "request",
    source: "https://developers.cloudflare.com/durable-objects/platform/pricing/ (1 M included/month)",
    asOf: PRICES_READ,
  },
  /** Billed while active, at 128 MB: 0.125 GB-s per active second. Not counted by the meter. */
  objectDuration: {
    usdPerMillion: 12.5,
    unit: "GB-s",
    source: "https://developers.cloudflare.com/durable-objects/platform/pricing/ (400,000 GB-s included/month)",
    asOf: PRICES_READ,
  },
  /** SQLite-backed Durable Objects: rows priced as D1's; `setAlarm` writes one row, deletes count. */
  objectRowsRead: {
    usdPerMillion: 0.001,
    unit: "row read",
    source: "https://developers.cloudflare.com/durable-objects/platform/pricing/ (SQLite storage; 25 B included)",
    asOf: PRICES_READ,
  },
  objectRowsWritten: {
    usdPerMillion: 1,
    unit: "row written",
    source: "https://developers.cloudflare.com/durable-objects/platform/pricing/ (SQLite storage; 50 M included)",
    asOf: PRICES_READ,
  },
  d1RowsRead: {
    usdPerMillion: 0.001,
    unit: "row read",
    source: "https://developers.cloudflare.com/d1/platform/pricing/ (25 B included/month)",
    asOf: PRICES_READ,
  },
  /** Index entries are extra rows written (D1 reports them in rows_written). */
  d1RowsWritten: {
    usdPerMillion: 1,
    unit: "row written",
    source: "https://developers.cloudflare.com/d1/platform/pricing/ (50 M included/month)",
    asOf: PRICES_READ,
  },
  /** One operation per 64 KB written, read or deleted: a small message is 3 (`QUEUE_OPS_PER_MESSAGE`). */
  queueOperations: {
    usdPerMillion: 0.4,
    unit: "operation",
    source: "https://developers.cloudflare.com/queues/platform/pricing/ (1 M included/month)",
    asOf: PRICES_READ,
  },
  r2ClassA: {
    usdPerMillion: 4.5,
    unit: "Class A operation",
    source: "https://developers.cloudflare.com/r2/pricing/ (Standard; 1 M included/month)",
    asOf: PRICES_READ,
  },
  r2ClassB: {
    usdPerMillion: 0.36,
    unit: "Class B operation",
    source: "https://developers.cloudflare.com/r2/pricing/ (Standard; 10 M included/month)",
    asOf: PRICES_READ,
  },
} as const satisfies Record<string, Price>;

/** A message under 64 KB is written, read and deleted: three billed queue operations. */
export const QUEUE_OPS_PER_MESSAGE = 3;

/** The anchor's published prices per unit of work. */
export const ANCHOR = {
  /** LangSmith Deployment (late 2025 on): one end-to-end invocation; a resume after an interrupt is a new run. */
  agentRun: {
    usdPerMillion: 5_000,
    unit: "agent run",
    source: "https://docs.langchain.com/langsmith/billing (langchain-ai/docs PR #1615, 2025-12: $0.005 per Agent Run)",
    asOf: "2025-12-01",
  },
  /** LangGraph Platform Plus (2024 to mid 2025): per node executed. */
  nodeExecuted: {
    usdPerMillion: 1_000,
    unit: "node executed",
    source: "LangGraph Platform pricing, Plus plan ($0.001 per node executed), as quoted in the reference §5.1",
    asOf: "2025-06-01",
  },
  /** LangSmith Plus: a base trace (14-day retention), $0.50 per 1k beyond the included 10k/month. */
  baseTrace: {
    usdPerMillion: 500,
    unit: "trace",
    source: "https://docs.langchain.com/langsmith/billing (base traces $0.50 per 1k)",
    asOf: PRICES_READ,
  },
} as const satisfies Record<string, Price>;

/** What one operation of a scenario is, in the anchor's billing units. */
export interface Work {
  /** Agent runs (a `runs.wait`, a stream, a resume). */
  agentRuns?: number;
  /** Nodes those runs execute. */
  nodes?: number;
  /** Traced runs ingested, and the traces (root runs) they make up. */
  tracedRuns?: number;
  traces?: number;
}

/** The units one operation used, as the meter counted them (per operation). */
export interface UnitsPerOp {
  workerRequests: number;
  /** Server CPU ms per operation (the whole local runtime: an upper bound of the Worker's own). */
  cpuMs?: number;
  objectRequests: number;
  objectRowsRead: number;
  objectRowsWritten: number;
  d1RowsRead: number;
  d1RowsWritten: number;
  queueMessages: number;
  r2ClassA: number;
  r2ClassB: number;
}

export interface Cost {
  /** Dollars per million operations, by line, and their sum. */
  lines: Record<string, number>;
  total: number;
}

/** Dollars per million operations at Cloudflare's list prices (Durable Object duration not included). */
export function cloudflareCost(units: UnitsPerOp): Cost {
  const lines: Record<string, number> = {
    "worker requests": units.workerRequests * CLOUDFLARE.workerRequests.usdPerMillion,
    "worker CPU": (units.cpuMs ?? 0) * CLOUDFLARE.workerCpuMs.usdPerMillion,
    "DO requests": units.objectRequests * CLOUDFLARE.objectRequests.usdPerMillion,
    "DO rows read": units.objectRowsRead * CLOUDFLARE.objectRowsRead.usdPerMillion,
    "DO rows written": units.objectRowsWritten * CLOUDFLARE.objectRowsWritten.usdPerMillion,
    "D1 rows read": units.d1RowsRead * CLOUDFLARE.d1RowsRead.usdPerMillion,
    "D1 rows written": units.d1RowsWritten * CLOUDFLARE.d1RowsWritten.usdPerMillion,
    queues: units.queueMessages * QUEUE_OPS_PER_MESSAGE * CLOUDFLARE.queueOperations.usdPerMillion,
    "R2 class A": units.r2ClassA * CLOUDFLARE.r2ClassA.usdPerMillion,
    "R2 class B": units.r2ClassB * CLOUDFLARE.r2ClassB.usdPerMillion,
  };
  return { lines, total: Object.values(lines).reduce((a, b) => a + b, 0) };
}

/**
 * Dollars per million operations at the anchor's prices: per agent run (today's price) and per node
 * executed (the earlier one), per base trace for ingested traces; undefined where the anchor bills the
 * work by deployment uptime only (thread and state reads, health checks).
 */
export function anchorCost(work: Work | undefined): { perRun?: number; perNode?: number; perTrace?: number } {
  if (!work) return {};
  return {
    ...(work.agentRuns ? { perRun: work.agentRuns * ANCHOR.agentRun.usdPerMillion } : {}),
    ...(work.nodes ? { perNode: work.nodes * ANCHOR.nodeExecuted.usdPerMillion } : {}),
    ...(work.traces ? { perTrace: work.traces * ANCHOR.baseTrace.usdPerMillion } : {}),
  };
}
