import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index.ts";
import { workerRequest } from "./helpers.ts";

/** A statement the Worker prepared: on the binding itself (the primary) or on a session (from `start`). */
export interface PreparedQuery {
  sql: string;
  via: "primary" | { session: string };
}

/**
 * The test env with a D1 binding that records what the Worker asks of it: each statement prepared,
 * and each session opened (`withSession`'s argument). The guard still wraps it (it is a D1Database).
 * With `failingSessions`, every query on a session fails.
 */
export function spiedD1(options: { failingSessions?: boolean } = {}) {
  const queries: PreparedQuery[] = [];
  const sessions: string[] = [];
  const spy = <T extends object>(target: T, via: PreparedQuery["via"]): T =>
    new Proxy(target, {
      get(object, property) {
        const value = Reflect.get(object, property, object);
        if (property === "prepare") {
          return (sql: string) => {
            queries.push({ sql, via });
            return (value as (sql: string) => unknown).call(object, sql);
          };
        }
        if (property === "withSession") {
          return (start: string) => {
            sessions.push(start);
            if (options.failingSessions) return failingSession(start);
            return spy((value as (start: string) => object).call(object, start), { session: start });
          };
        }
        // The guard recognizes the binding by its constructor's name: that one is not bound.
        return typeof value === "function" && property !== "constructor" ? value.bind(object) : value;
      },
    });
  /** A session whose every query fails, as one on an unavailable replica would. */
  const failingSession = (start: string) => {
    const fail = () => Promise.reject(new Error("D1_ERROR: replica unavailable"));
    const statement = { bind: () => statement, first: fail, run: fail, all: fail, raw: fail };
    return {
      prepare: (sql: string) => {
        queries.push({ sql, via: { session: start } });
        return statement;
      },
      batch: fail,
      getBookmark: () => null,
    };
  };
  const spiedEnv: Env = { ...env, DB: spy(env.DB, "primary") };
  /** Sends a request through the Worker with the spied binding (the bootstrap key unless `key` says otherwise). */
  async function fetch(
    path: string,
    init: RequestInit & { key?: string | null; json?: unknown } = {},
  ): Promise<Response> {
    const ctx = createExecutionContext();
    const response = await worker.fetch(workerRequest(path, init), spiedEnv, ctx);
    await waitOnExecutionContext(ctx);
    return response;
  }
  /** The statements whose SQL matches `pattern`. */
  const matching = (pattern: RegExp) => queries.filter((query) => pattern.test(query.sql));
  return { env: spiedEnv, queries, sessions, fetch, matching };
}
