/**
 * A D1 binding that enforces what local D1 does not: 2 MB values and rows, 32 arguments per function,
 * and the D1 query (and subrequest) count of an invocation. Every query of the platform goes through it
 * (`database` in src/db/client.ts wraps `env.DB`, and its sessions of the Sessions API).
 */
import { countD1Query } from "./invocation.ts";
import type { InvocationLimits } from "./limits.ts";
import { rowError, rowsError, statementError } from "./sql-values.ts";

const guarded = new WeakMap<D1Database, D1Database>();
const wrappers = new WeakSet<object>();

/** `db` with the guard when `limits` is set (the same object for the same binding), else `db` itself. */
export function guardD1(db: D1Database, limits: InvocationLimits | null): D1Database {
  if (!limits || wrappers.has(db)) return db;
  let wrapper = guarded.get(db);
  if (!wrapper) {
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
