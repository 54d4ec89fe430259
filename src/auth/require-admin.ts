import { createMiddleware } from "hono/factory";
import { forbidden } from "../core/errors.ts";
import type { AppEnv } from "../http/app-env.ts";
import { isOrganizationAdmin } from "../http/principal.ts";

/** Guards administration routes: only organization-scoped admin keys (e.g. the bootstrap key) pass. */
export const requireOrganizationAdmin = createMiddleware<AppEnv>(async (c, next) => {
  if (!isOrganizationAdmin(c.get("principal"))) {
    throw forbidden("This operation needs an organization-admin API key");
  }
  return next();
});
