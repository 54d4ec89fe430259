import { drizzle } from "drizzle-orm/d1";
import { guardD1 } from "../limits-guard/d1.ts";
import { guardLimits } from "../limits-guard/limits.ts";
import * as schema from "./schema.ts";

/**
 * The one way code reaches D1: a drizzle client over the `DB` binding, with the limits guard when it
 * is on (so code handed a test's plain env is guarded too).
 */
export function database(env: Pick<Env, "DB" | "LIMITS_GUARD">) {
  return drizzle(guardD1(env.DB, guardLimits(env)), { schema });
}

export type Database = ReturnType<typeof database>;
