/**
 * A D1 binding that enforces what local D1 does not: 2 MB values and rows, 32 arguments per function,
 * and the D1 query (and subrequest) count of an invocation. Every query of the platform goes through it
 * (`database` in src/db/client.ts wraps `env.DB`, and its sessions of the Sessions API). The usage meter
 * counts every statement D1 runs, with the rows it reports, see `meterD1Sessions`.
 */
import { countD1Query } from "./invocation.ts";
import type { InvocationLimits } from "./limits.ts";
import { rowError, rowsError, statementError } from "./sql-values.ts";
import { type D1Meta, meterD1 } from "./usage.ts";

/** A result of the runtime's D1 session: `mapD1Result` of the binding's wire answer. */
type SessionResult = { meta?: D1Meta } | undefined;
type Send = (
  endpoint: string,
  query: string | string[],
  ...rest: unknown[]
) => Promise<SessionResult | SessionResult[]>;
type QueryOrThrow = (request: { queries: { sql: string }[] }, ...rest: unknown[]) => Promise<SessionResult[]>;

let sessionsMetered = false;

/**
 * Counts every statement the D1 binding runs, with its `meta.rows_read` / `rows_written`, for the usage
 * meter. The public API hides the meta of `raw()` and `first()` (drizzle reads through `raw()`), so
 * the count is taken where every call of every session (the binding's own and `withSession`'s) ends:
 * the runtime's D1 session class (workerd's `cloudflare-internal:d1-api`, reached through the prototype
 * of a `withSession()` session, as the binding keeps its own session in a private field), whose `_send`
 * (HTTP binding) and `_queryOrThrow` (JSRPC binding) return each statement's result with its meta.
 * Patched once per isolate; a runtime without them leaves D1 unmetered (with a warning), which
 * test/worker/usage-meter.test.ts catches.
 */
function meterD1Sessions(db: D1Database): void {
  if (sessionsMetered) return;
  sessionsMetered = true;
  // A session of the public API (creating one sends nothing) leads to the class every session shares.
  let prototype: object | null = typeof db.withSession === "function" ? Object.getPrototypeOf(db.withSession()) : null;
  while (prototype && prototype !== Object.prototype && !Object.hasOwn(prototype, "_send")) {
    prototype = Object.getPrototypeOf(prototype);
  }
  if (!prototype || prototype === Object.prototype) {
    console.warn("limits guard: this runtime's D1 binding has no session to meter; D1 usage is not counted");
    return;
  }
  const session = prototype as { _send: Send; _queryOrThrow?: QueryOrThrow };
  const send = session._send;
  session._send = async function (this: object, endpoint, query, ...rest) {
    const results = await send.call(this, endpoint, query, ...rest);
    const list = Array.isArray(results) ? results : [results];
    const texts = Array.isArray(query) ? query : [query];
    list.forEach((result, i) => meterD1(texts[i] ?? "", result?.meta));
    return results;
  };
  const queryOrThrow = session._queryOrThrow;
  if (queryOrThrow) {
    session._queryOrThrow = async function (this: object, request, ...rest) {
      const results = await queryOrThrow.call(this, request, ...rest);
      results.forEach((result, i) => meterD1(request.queries[i]?.sql ?? "", result?.meta));
      return results;
    };
  }
}

const guarded = new WeakMap<D1Database, D1Database>();
const wrappers = new WeakSet<object>();

/** `db` with the guard when `limits` is set (the same object for the same binding), else `db` itself. */
export function guardD1(db: D1Database, limits: InvocationLimits | null): D1Database {
  if (!limits || wrappers.has(db)) return db;
  let wrapper = guarded.get(db);
  if (!wrapper) {
    meterD1Sessions(db);
    wrapper = new GuardedD1(db) as unknown as D1Database;
    wrappers.add(wrapper);
    guarded.set(db, wrapper);
  }
  return wrapper;
}

/** Checks and counts a statement about to run; rejects the same way D1 would. */
function admit(sql: string, params: readonly unknown[]): void {
  const error = statementError("d1", sql, params) ?? countD1Query();
  if (error) throw error;
}

function checkRows<T>(rows: readonly T[] | undefined): void {
  const error = rowsError("d1", rows);
  if (error) throw error;
}

class GuardedStatement {
  constructor(
    readonly statement: D1PreparedStatement,
    readonly sql: string,
    readonly params: readonly unknown[],
  ) {}

  bind(...values: unknown[]): GuardedStatement {
    return new GuardedStatement(this.statement.bind(...values), this.sql, values);
  }

  async first<T>(column?: string): Promise<T | null> {
    admit(this.sql, this.params);
    const row = column === undefined ? await this.statement.first<T>() : await this.statement.first<T>(column);
    const error = rowError("d1", row);
    if (error) throw error;
    return row;
  }

  async run<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    admit(this.sql, this.params);
    const result = await this.statement.run<T>();
    checkRows(result.results);
    return result;
  }

  async all<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    admit(this.sql, this.params);
    const result = await this.statement.all<T>();
    checkRows(result.results);
    return result;
  }

  async raw<T = unknown[]>(options?: { columnNames?: boolean }): Promise<T[]> {
    admit(this.sql, this.params);
    const rows = options?.columnNames
      ? await this.statement.raw<T>({ columnNames: true })
      : await this.statement.raw<T>();
    checkRows(rows);
    return rows as T[];
  }
}

/** A D1 session (Sessions API) whose queries are checked and counted like the binding's own. */
class GuardedSession {
  constructor(readonly session: D1Database | D1DatabaseSession) {}

  prepare(sql: string): GuardedStatement {
    return new GuardedStatement(this.session.prepare(sql), sql, []);
  }

  /** A batch is one round trip, but each of its statements is a query of the invocation. */
  async batch<T = unknown>(statements: (GuardedStatement | D1PreparedStatement)[]): Promise<D1Result<T>[]> {
    const plain = statements.map((statement) => {
      if (statement instanceof GuardedStatement) {
        admit(statement.sql, statement.params);
        return statement.statement;
      }
      const error = countD1Query();
      if (error) throw error;
      return statement;
    });
    const results = await this.session.batch<T>(plain);
    for (const result of results) checkRows(result.results);
    return results;
  }

  getBookmark(): string | null {
    return (this.session as D1DatabaseSession).getBookmark();
  }
}

class GuardedD1 extends GuardedSession {
  constructor(readonly db: D1Database) {
    super(db);
  }

  async exec(sql: string): Promise<D1ExecResult> {
    admit(sql, []);
    return this.db.exec(sql);
  }

  withSession(constraintOrBookmark?: string): D1DatabaseSession {
    return sessionWrapper(this.db.withSession(constraintOrBookmark));
  }

  dump(): Promise<ArrayBuffer> {
    return (this.db as unknown as { dump(): Promise<ArrayBuffer> }).dump();
  }
}

function sessionWrapper(session: D1DatabaseSession): D1DatabaseSession {
  const wrapper = new GuardedSession(session) as unknown as D1DatabaseSession;
  wrappers.add(wrapper);
  return wrapper;
}

/** `session` with the guard when `limits` is set (a session of a guarded binding already is), else itself. */
export function guardD1Session(session: D1DatabaseSession, limits: InvocationLimits | null): D1DatabaseSession {
  return !limits || wrappers.has(session) ? session : sessionWrapper(session);
}
