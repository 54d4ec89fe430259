/** System scenarios: the cost of a request through the Worker, with and without the API-key check. */
import type { Scenario } from "./context.ts";

export const SYSTEM_SCENARIOS: Scenario[] = [
  {
    name: "ok",
    description: "GET /ok without credentials: the baseline cost of a request through the Worker",
    run: async (ctx) => void (await ctx.request("/ok")),
  },
  {
    name: "info",
    description: "GET /info: server version, feature flags and deployed graphs",
    run: async (ctx) => void (await ctx.request("/info")),
  },
  {
    name: "auth-workspaces",
    reference: false,
    description: "GET /api/v1/workspaces with X-Api-Key: API-key middleware plus a D1 query",
    run: async (ctx) => void (await ctx.request("/api/v1/workspaces", { auth: true })),
  },
];
