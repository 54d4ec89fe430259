import { DurableObject } from "cloudflare:workers";

/**
 * One SQLite-backed Durable Object per thread: the thread record, its checkpoints and pending writes,
 * its runs and their queue. Declared now so the binding and its storage class migration exist from the
 * first deploy; the thread, checkpoint and run storage lands with the threads and runs resources.
 */
export class ThreadDO extends DurableObject<Env> {}
