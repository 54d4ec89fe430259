import { AsyncLocalStorage } from "node:async_hooks";
import { drizzle } from "drizzle-orm/d1";
import { guardD1, guardD1Session } from "../limits-guard/d1.ts";
import { guardLimits } from "../limits-guard/limits.ts";
import { log } from "../observability/log.ts";
import * as schema from "./schema.ts";

/** drizzle's D1 driver calls only `prepare` and `batch` of its client, which a D1 session has too. */
const connect = (db: D1Database | D1DatabaseSession) => drizzle(db as D1Database, { schema });
export type Database = ReturnType<typeof connect>;

/**
 * One drizzle client per binding: building one reads the whole schema's relations again, which cost
 * about 7% of the Worker's CPU per agent run when every call built its own. A client holds no
 * per-request state.
 */
const clients = new WeakMap<D1Database, Database>();

type D1Env = Pick<Env, "DB" | "LIMITS_GUARD">;

/**
 * The one way code reaches D1: a drizzle client over the `DB` binding, with the limits guard when it
 * is on (so code handed a test's plain env is guarded too). Its queries go to the primary database:
 * they read the latest write. The hot path's reads go through a session instead (`readReplicated`).
 */
export function database(env: D1Env): Database {
  const db = guardD1(env.DB, guardLimits(env));
  let client = clients.get(db);
  if (!client) {
    client = connect(db);
    clients.set(db, client);
  }
  return client;
}

/**
 * D1 read replication (Sessions API). The reads on the hot path (API-key checks, the assistant
 * lookup before each run) may be answered by a read replica: a session that starts
 * "first-unconstrained" takes any, a session that starts from a bookmark takes one at least as recent
 * as the write it marks. The Worker answers each request that used its session with the session's
 * bookmark in this header; a client that sends it back reads its own writes (an assistant it just
 * created or patched), whichever replica answers.
 */
export const D1_BOOKMARK_HEADER = "x-d1-bookmark";

/**
 * What a client may send as a bookmark: one the Worker handed out (D1's, 4 dash-separated hex
 * groups today), or a constraint of the Sessions API ("first-primary" reads the latest write).
 */
const BOOKMARK = /^(?:[0-9a-f]{1,64}(?:-[0-9a-f]{1,64}){0,7}|first-primary|first-unconstrained)$/;
export const isD1Bookmark = (value: string) => BOOKMARK.test(value);

const newest = (a: string | null, b: string | null) => (a === null || (b !== null && b > a) ? b : a);

/**
 * The newest bookmark of a write this isolate made through a session: later sessions here start no
 * older, so this isolate reads its own writes whatever the client sends (a key it revoked stays
 * refused, an assistant it patched is run patched). Bookmarks sort in time order.
 */
let isolateBookmark: string | null = null;

/** One request's D1 session, opened on its first query. */
export class RequestSession {
  #session: D1DatabaseSession | null = null;
  #db: Database | null = null;
  #wrote = false;
  readonly start: string;

  constructor(
    readonly env: D1Env,
    readonly clientBookmark?: string,
  ) {
    if (clientBookmark === "first-primary") this.start = clientBookmark;
    else if (clientBookmark === undefined || clientBookmark === "first-unconstrained") {
      this.start = isolateBookmark ?? "first-unconstrained";
    } else this.start = newest(clientBookmark, isolateBookmark) ?? clientBookmark;
  }

  get db(): Database {
    if (!this.#db) {
      this.#session = guardD1Session(this.env.DB.withSession(this.start), guardLimits(this.env));
      this.#db = connect(this.#session);
    }
    return this.#db;
  }

  /** Marks that the request writes through the session (see `sessionDatabase`). */
  markWrite(): void {
    this.#wrote = true;
  }

  /**
   * The bookmark to hand the client: the session's latest, or, if it ran no query, the bookmark the
   * client sent (so it keeps it); else null. Records the isolate's newest write.
   */
  finish(): string | null {
    const latest = this.#session?.getBookmark() ?? null;
    if (this.#wrote) isolateBookmark = newest(isolateBookmark, latest);
    const sent = this.clientBookmark?.startsWith("first-") ? undefined : this.clientBookmark;
    return latest ?? sent ?? null;
  }
}

const requestSessions = new AsyncLocalStorage<RequestSession>();

/** Runs `work` (a request) with `session` as its D1 session. */
export function inRequestSession<T>(session: RequestSession, work: () => T): T {
  return requestSessions.run(session, work);
}

/**
 * Whether the running request named a point to read from (a bookmark, or "first-primary"): it wants
 * at least that write, so a cache must not answer it.
 */
export function requestNamesBookmark(env: D1Env): boolean {
  const bookmark = requestSession(env)?.clientBookmark;
  return bookmark !== undefined && bookmark !== "first-unconstrained";
}

/** The running request's session, if it is over this binding. */
function requestSession(env: D1Env): RequestSession | undefined {
  const session = requestSessions.getStore();
  return session && session.env.DB === env.DB ? session : undefined;
}

/**
 * A client for writes the client should read back on its next requests (creating or changing an
 * assistant, revoking a key): the request's session, whose bookmark then covers them (a session's
 * writes go to the primary). Outside a request, `database(env)`.
 */
export function sessionDatabase(env: D1Env): Database {
  const session = requestSession(env);
  if (!session) return database(env);
  session.markWrite();
  return session.db;
}

/**
 * A read on the hot path, answered by a read replica where one is recent enough: through the
 * request's session, or (in a Durable Object, queue or tick) one of its own. When it finds nothing it
 * asks the primary: a row written moments ago by another client (a new key, a new assistant) may not
 * have reached the replica yet, and a miss must not refuse it. So does a session that fails (a
 * replica unavailable, a bookmark D1 will not take): the read is answered all the same.
 */
export async function readReplicated<T>(
  env: D1Env,
  read: (db: Database) => Promise<T | undefined>,
): Promise<T | undefined> {
  const session = requestSession(env) ?? new RequestSession(env);
  let found: T | undefined;
  try {
    found = await read(session.db);
  } catch (error) {
    log.warn("D1 session read failed; reading the primary", { error: writeErrorReason(error), start: session.start });
  }
  return found ?? read(database(env));
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
