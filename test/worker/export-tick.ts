import { type ExportPlanMessage, exportTick, planWorkspaceExports } from "../../src/export/planner.ts";

type TickEnv = Parameters<typeof exportTick>[0];

/**
 * The minute tick's export work, done at once: the tick's planning messages are caught and each is
 * planned here with `tickEnv` (its queue, vars, clock), as the queue consumer would plan it.
 */
export async function tickExports(tickEnv: TickEnv, now: Date): Promise<ExportPlanMessage[]> {
  const plans: ExportPlanMessage[] = [];
  const catching = Object.assign({}, tickEnv, {
    QUEUE: {
      send: async (body: ExportPlanMessage) => void plans.push(body),
      sendBatch: async (batch: { body: ExportPlanMessage }[]) => void plans.push(...batch.map((m) => m.body)),
    } as unknown as Queue,
  });
  await exportTick(catching, now);
  for (const plan of plans) await planWorkspaceExports(tickEnv, plan.workspaceId, new Date(plan.at));
  return plans;
}
