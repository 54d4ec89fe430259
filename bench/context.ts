/**
 * What every scenario is written against: the context it runs in, the Scenario shape, and the request
 * helper that makes every scenario fail the same way.
 */
import type { Client } from "@langchain/langgraph-sdk";
import type { HeapSampler } from "./isolate-heap.ts";
import type { Work } from "./prices.ts";
import type { UsageMeter } from "./usage.ts";

export interface BenchContext {
  /** The target server, without a trailing slash. Every request goes here and nowhere else. */
  baseUrl: string;
  /** The X-Api-Key `request` sends when asked to; undefined for a server that needs none (the reference). */
  apiKey?: string;
  /** An SDK client bound to baseUrl/apiKey, with retries disabled so failures count as errors. */
  client: Client;
  /** Per-operation timeout, so a hung request cannot outlive the run. */
  timeoutMs: number;
  /** Scratch space for one scenario: `setup` can leave ids here for `run` to use. */
  state: Record<string, unknown>;
  /** fetch(baseUrl + path); reads the whole body and throws HttpError on a non-2xx status. */
  request(path: string, init?: RequestInit & { auth?: boolean }): Promise<Response>;
  /**
   * The server's root process when the bench knows it: the local wrangler (its process group holds
   * workerd), --server-pid, or the reference server. Server CPU per operation is read from its tree.
   */
  serverPid?: number;
  /** Lines a scenario reports under the table (figures that are not latencies). */
  notes: string[];
  /** The local server's export log lines so far (`export file written`), when the bench started it. */
  serverLog?: () => string[];
  /** The server's usage meter (the platform with its limits guard on), read around the measured window. */
  usage?: UsageMeter;
  /** The local server's state directory, whose SQLite files give the bytes stored per operation. */
  persistDir?: string;
  /** The Worker isolate's heap sampler, when the bench has one: a setup may read its peak and reset it. */
  heap?: Pick<HeapSampler, "peakMb" | "reset">;
}

/** Named marks in ms within one operation (e.g. `{"first-event": 4.2}`), reported as extra rows. */
export type Marks = Record<string, number>;

export interface Scenario {
  name: string;
  description: string;
  /** Concurrent workers for this scenario (default: --concurrency, 8); --concurrency overrides it. */
  concurrency?: number;
  /**
   * A long one-shot measurement (e.g. a whole export): after setup, `run` is called exactly once,
   * with no preflight, warm-up or loop, and reports its figures in `ctx.notes`.
   */
  once?: boolean;
  /**
   * A fixed number of measured operations instead of --duration (no warm-up); with `concurrency` equal
   * to it, all start at once. The preflight operation before it is not counted.
   */
  ops?: number;
  /** What one operation is in the anchor's billing units (agent runs, nodes, traces), for prices and ceilings. */
  work?: Work;
  /**
   * false when the reference server (the LangGraph.js dev server, graphs `echo` and `steps` only, no
   * LangSmith API) cannot run this scenario: --compare skips it.
   */
  reference?: false;
  /**
   * The langgraph.json (relative to the project root) of the deployment this scenario needs, when not
   * this repository's: the bench starts a local server of it for the scenario (with --url, the server
   * given must serve such a deployment).
   */
  deployment?: string;
  /** Absolute targets the issue sets (no reference to compare with), reported met or missed under the table. */
  targets?: { p50Ms?: number; cpuMsPerOp?: number };
  /** Runs once before warm-up (not measured); e.g. creates the assistant or thread `run` uses. */
  setup?(ctx: BenchContext): Promise<void>;
  /** One operation. Resolve on success, with marks if it has any; throw (or reject) on failure. */
  run(ctx: BenchContext): Promise<Marks | undefined>;
}

export class HttpError extends Error {
  status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = "HttpError";
    this.status = status;
  }
}

/** Builds the `request` helper for a context. */
export function makeRequest(baseUrl: string, apiKey: string | undefined, timeoutMs: number): BenchContext["request"] {
  return async (path, init = {}) => {
    const { auth = false, headers, ...rest } = init;
    const merged = new Headers(headers);
    if (auth && apiKey) merged.set("X-Api-Key", apiKey);
    const response = await fetch(`${baseUrl}${path}`, {
      ...rest,
      headers: merged,
      signal: rest.signal ?? AbortSignal.timeout(timeoutMs),
    });
    // Read the body: the latency then covers the full response, and the keep-alive socket is reused.
    const body = await response.arrayBuffer();
    if (!response.ok) {
      const text = new TextDecoder().decode(body.slice(0, 200));
      throw new HttpError(response.status, `${rest.method ?? "GET"} ${path}: HTTP ${response.status} ${text}`);
    }
    // A fresh Response over the bytes read, so scenarios can still call .json().
    return new Response(body, { status: response.status, headers: response.headers });
  };
}
