import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema.ts";

/** The one way code reaches D1: a drizzle client over the `DB` binding. */
export function database(env: Pick<Env, "DB">) {
  return drizzle(env.DB, { schema });
}

export type Database = ReturnType<typeof database>;
