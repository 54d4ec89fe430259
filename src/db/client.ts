import { drizzle } from "drizzle-orm/d1";
import { guardD1 } from "../limits-guard/d1.ts";
import { guardLimits } from "../limits-guard/limits.ts";
import * as schema from "./schema.ts";

const connect = (db: D1Database) => drizzle(db, { schema });
export type Database = ReturnType<typeof connect>;

/**
 * One drizzle client per binding: building one reads the whole schema's relations again, which cost
 * about 7% of the Worker's CPU per agent run when every call built its own. A client holds no
 * per-request state.
 */
const clients = new WeakMap<D1Database, Database>();

/**
 * The one way code reaches D1: a drizzle client over the `DB` binding, with the limits guard when it
 * is on (so code handed a test's plain env is guarded too).
 */
export function database(env: Pick<Env, "DB" | "LIMITS_GUARD">): Database {
  const db = guardD1(env.DB, guardLimits(env));
  let client = clients.get(db);
  if (!client) {
    client = connect(db);
    clients.set(db, client);
  }
  return client;
}

/**
 * Whether a failed write will fail the same way however often it is retried: the row is too large
 * (D1 refuses rows over 2 MB with SQLITE_TOOBIG), a constraint refuses it, or the statement is
 * malformed. Anything else (D1 overloaded, a network error, a reset) may pass on a retry.
 */
export function isPermanentWriteError(error: unknown): boolean {
  const text = writeErrorReason(error);
  return /SQLITE_(TOOBIG|CONSTRAINT|MISMATCH|RANGE)|too big|too large|too long|constraint failed|datatype mismatch|too many SQL variables/i.test(
    text,
  );
}

/**
 * What a failed query says, short: drizzle wraps D1's error (the reason) in one that repeats the
 * query and its parameters, which may be megabytes.
 */
export function writeErrorReason(error: unknown): string {
  let root = error;
  while (root instanceof Error && root.cause !== undefined) root = root.cause;
  const text = root instanceof Error ? root.message : String(root);
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}
