import { createRoute } from "@hono/zod-openapi";
import { errorResponse } from "../http/responses.ts";
import { createRouter } from "../http/router.ts";
import { jsonBody, jsonContent } from "../http/schemas.ts";
import { secured } from "../http/secured.ts";
import { tracesDatabase } from "./directory.ts";
import { queryBudget, runStats } from "./query.ts";
import { RunStatsSchema, RunsQuerySchema } from "./schemas.ts";

/** `POST /api/v1/runs/stats` (`get_run_stats` / `getRunStats`): aggregates over the runs a query matches. */

const stats = secured(
  createRoute({
    tags: ["Tracing runs"],
    method: "post",
    path: "/api/v1/runs/stats",
    summary:
      "Stats of the runs matching a `/runs/query` body: counts, latency and first-token percentiles, tokens, costs",
    request: { body: jsonBody(RunsQuerySchema) },
    responses: {
      200: jsonContent(RunStatsSchema, "The stats"),
      400: errorResponse("A filter that does not parse or is over the filter limits"),
      422: errorResponse("A body field that does not validate, or more project-days than one request reads"),
    },
  }),
);

export const runStatsRoutes = createRouter().openapi(stats, async (c) =>
  c.json(
    await runStats(
      tracesDatabase(c.env, c.get("principal").workspaceId),
      c.env.TRACE_SHARD,
      c.get("principal").workspaceId,
      c.req.valid("json"),
      queryBudget(c.env),
      c.env,
    ),
    200,
  ),
);
