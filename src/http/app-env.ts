import type { Principal } from "../auth/principal.ts";

/** Hono environment shared by every route: Worker bindings plus per-request variables. */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    requestId: string;
    /** Set by the API-key middleware on every authenticated route. */
    principal: Principal;
  };
}
