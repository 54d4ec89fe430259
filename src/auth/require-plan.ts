import { createMiddleware } from "hono/factory";
import { forbidden } from "../core/errors.ts";
import { database } from "../db/client.ts";
import type { AppEnv } from "../http/app-env.ts";
import { organizationPlan, type PlanFeature, planRefusal } from "../tenancy/plans.ts";

/** Route guard of the routes that create a gated resource: 403 naming the plan needed. */
export const requirePlan = (feature: PlanFeature) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const plan = await organizationPlan(database(c.env), c.env, c.get("principal").organizationId);
    const refusal = planRefusal(plan, feature);
    if (refusal) throw forbidden(refusal);
    return next();
  });
