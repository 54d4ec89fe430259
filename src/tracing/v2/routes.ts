import { createRoute } from "@hono/zod-openapi";
import { badRequest, notFound } from "../../core/errors.ts";
import { errorResponse } from "../../http/responses.ts";
import { createRouter } from "../../http/router.ts";
import { jsonBody, jsonContent, notFoundError } from "../../http/schemas.ts";
import { secured } from "../../http/secured.ts";
import { locateRun, tracesDatabase } from "../directory.ts";
import { decodeCursor, queryBudget } from "../query.ts";
import { wireRun } from "../run-projection.ts";
import type { StoredTracedRun } from "../shard-runs.ts";
import { traceShardName } from "../trace-shard-do.ts";
import { RunsPageV2Schema, RunsQueryV2Schema, RunV2Params, RunV2Query, RunV2Schema } from "./schemas.ts";
import { queryRunsV2, type V1Run, v2Run } from "./service.ts";

/** `/api/v2/runs`: the runs query and read of the SDKs' generated clients (`client.runs`). */

const tags = ["Tracing runs"];
const route = <R extends Parameters<typeof createRoute>[0]>(config: R) => secured(createRoute({ tags, ...config }));

const routes = {
  query: route({
    method: "post",
    path: "/api/v2/runs/query",
    summary: "Query runs of projects within a start_time window (default: the last day), with selects and a cursor",
    request: { body: jsonBody(RunsQueryV2Schema) },
    responses: {
      200: jsonContent(RunsPageV2Schema, "A page of runs with the selected fields"),
      400: errorResponse("No project_ids, a reference_dataset_id, a filter that does not parse, or a bad cursor"),
    },
  }),
  get: route({
    method: "get",
    path: "/api/v2/runs/{run_id}",
    summary: "Get a run of a project, with the selected fields",
    request: { params: RunV2Params, query: RunV2Query },
    responses: { 200: jsonContent(RunV2Schema, "The run"), ...notFoundError },
  }),
};

export const tracingRunV2Routes = createRouter()
  .openapi(routes.query, async (c) => {
    const body = c.req.valid("json");
    if (body.cursor && !decodeCursor(body.cursor)) throw badRequest("cursor is not a cursor this API returned");
    return c.json(
      await queryRunsV2(
        tracesDatabase(c.env, c.get("principal").workspaceId),
        c.env.TRACE_SHARD,
        c.get("principal").workspaceId,
        body,
        queryBudget(c.env),
        c.env,
      ),
      200,
    );
  })
  .openapi(routes.get, async (c) => {
    const { run_id } = c.req.valid("param");
    const { project_id, selects } = c.req.valid("query");
    const workspaceId = c.get("principal").workspaceId;
    const location = await locateRun(c.env, workspaceId, run_id);
    const text =
      location?.projectId === project_id &&
      (await c.env.TRACE_SHARD.getByName(traceShardName(workspaceId, location.projectId, location.day)).get(run_id));
    if (!text) throw notFound(`Run ${run_id} not found in project ${project_id}`);
    const { attachments, ...run } = JSON.parse(text) as StoredTracedRun & { attachments: { name: string }[] };
    const origin = new URL(c.req.url).origin;
    // The v1 download route, which takes the same API key.
    const urls = Object.fromEntries(
      attachments.map((a) => [a.name, `${origin}/api/v1/runs/${run_id}/attachments/${encodeURIComponent(a.name)}`]),
    );
    return c.json(v2Run(wireRun(run) as V1Run, selects, urls), 200);
  });
