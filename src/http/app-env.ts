import type { AuthUser } from "../deployment/custom-auth.ts";
import type { Principal } from "./principal.ts";

/** Hono environment shared by every route: Worker bindings plus per-request variables. */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    requestId: string;
    /** Set by the authentication middleware on every authenticated route. */
    principal: Principal;
    /** The custom-auth user (absent for API-key requests). Authorization handlers run for it. */
    user?: AuthUser;
  };
}
