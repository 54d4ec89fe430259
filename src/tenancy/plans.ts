import { eq, inArray } from "drizzle-orm";
import { chunked } from "../core/batches.ts";
import type { Database } from "../db/client.ts";
import { organizations, workspaces } from "../db/schema.ts";
import { IDS_PER_STATEMENT } from "../db/sql-batch.ts";
import { log } from "../observability/log.ts";
import { PLANS, type Plan } from "./schemas.ts";

/**
 * Plan tiers. Every organization has one; crons and bulk export need `plus` or `enterprise`.
 * An organization without an explicit plan has the deployment's `DEFAULT_PLAN` (unset: `enterprise`,
 * since a self-hosted deployment gets everything). Only the routes that create a gated resource and
 * the crons alarm read the plan, so other requests never pay a query for it.
 */

export type PlanFeature = "crons" | "bulk_export";

const FEATURES: Record<PlanFeature, { needs: string; plans: readonly Plan[] }> = {
  crons: { needs: "Crons need", plans: ["plus", "enterprise"] },
  bulk_export: { needs: "Bulk export needs", plans: ["plus", "enterprise"] },
};

export type PlanEnv = { DEFAULT_PLAN?: string };

const isPlan = (value: unknown): value is Plan => PLANS.includes(value as Plan);

let warnedDefault: string | undefined;

/** The plan of organizations that have none of their own: `DEFAULT_PLAN`, or `enterprise`. */
export function defaultPlan(env: PlanEnv): Plan {
  const configured = env.DEFAULT_PLAN?.trim().toLowerCase();
  if (!configured) return "enterprise";
  if (isPlan(configured)) return configured;
  if (warnedDefault !== configured) {
    warnedDefault = configured;
    log.warn("DEFAULT_PLAN is not developer, plus or enterprise; using enterprise", { value: env.DEFAULT_PLAN });
  }
  return "enterprise";
}

export const effectivePlan = (env: PlanEnv, stored: string | null | undefined): Plan =>
  isPlan(stored) ? stored : defaultPlan(env);

export const planAllows = (plan: Plan, feature: PlanFeature): boolean => FEATURES[feature].plans.includes(plan);

/** Why `plan` cannot use `feature`, naming the plans that can; null when it can. */
export function planRefusal(plan: Plan, feature: PlanFeature): string | null {
  if (planAllows(plan, feature)) return null;
  const { needs, plans } = FEATURES[feature];
  const named = plans.length > 1 ? `${plans.slice(0, -1).join(", ")} or ${plans.at(-1)}` : plans[0];
  return `${needs} the ${named} plan; this organization is on ${plan}`;
}

export async function organizationPlan(db: Database, env: PlanEnv, organizationId: string): Promise<Plan> {
  const row = await db
    .select({ plan: organizations.plan })
    .from(organizations)
    .where(eq(organizations.id, organizationId))
    .get();
  return effectivePlan(env, row?.plan);
}

/**
 * The plan in force for each of `workspaceIds` (one query per 90), for the crons alarm. A workspace not
 * found (resources kept after their workspace went) gets the deployment default.
 */
export async function workspacePlans(
  db: Database,
  env: PlanEnv,
  workspaceIds: Iterable<string>,
): Promise<(workspaceId: string) => Plan> {
  const ids = [...new Set(workspaceIds)];
  const plans = new Map<string, Plan>();
  for (const group of chunked(ids, IDS_PER_STATEMENT)) {
    const rows = await db
      .select({ id: workspaces.id, plan: organizations.plan })
      .from(workspaces)
      .innerJoin(organizations, eq(organizations.id, workspaces.organizationId))
      .where(inArray(workspaces.id, group))
      .all();
    for (const row of rows) plans.set(row.id, effectivePlan(env, row.plan));
  }
  return (workspaceId) => plans.get(workspaceId) ?? defaultPlan(env);
}
