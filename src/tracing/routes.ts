import { createRoute } from "@hono/zod-openapi";
import type { Context } from "hono";
import { badRequest, DomainError, invalid, notFound } from "../core/errors.ts";
import { deployment } from "../deployment/index.ts";
import type { AppEnv } from "../http/app-env.ts";
import { maxBodyBytes } from "../http/body-limit.ts";
import { STATUS_OF_KIND } from "../http/error-handler.ts";
import { errorResponse, publicRoute } from "../http/responses.ts";
import { createRouter } from "../http/router.ts";
import { jsonBody, jsonContent, notFoundError } from "../http/schemas.ts";
import { secured } from "../http/secured.ts";
import { attachmentDownload } from "./attachment-routes.ts";
import { attachmentS3Urls } from "./attachment-urls.ts";
import { locateRun, tracesDatabase } from "./directory.ts";
import { ingestFeedback } from "./feedback/ingest.ts";
import { FeedbackService } from "./feedback/service.ts";
import { checkQueryFilters } from "./filter/query-filters.ts";
import { Ingestor, type IngestResult, type RunProblem } from "./ingest.ts";
import { readMultipartRuns } from "./multipart.ts";
import { decodeCursor, queryBudget, queryRuns } from "./query.ts";
import { wireRun } from "./run-projection.ts";
import { tracedRunLimit } from "./run-size.ts";
import {
  AttachmentParams,
  FilterValidationSchema,
  type IngestProblem,
  type IngestResultBody,
  IngestResultSchema,
  RunBatchSchema,
  RunBody,
  RunIdParams,
  RunsPageSchema,
  RunsQuerySchema,
  RunsQueryValidateSchema,
  TracingInfoSchema,
  type TracingRun,
  TracingRunSchema,
} from "./schemas.ts";
import type { StoredTracedRun } from "./shard-runs.ts";
import { traceShardName } from "./trace-shard-do.ts";

/** `/api/v1/runs`: ingestion as the `langsmith` SDKs send it, and reads of one run. */

const tags = ["Tracing runs"];
const route = <R extends Parameters<typeof createRoute>[0]>(config: R) => secured(createRoute({ tags, ...config }));

/**
 * The LangSmith API level this server speaks. JS SDK 0.9+ compares `/info.version` with minimum
 * backend versions (0.16.0) before using newer endpoints; the platform's own version is in `platform_version`.
 */
const LANGSMITH_API_VERSION = "0.16.0";

const routes = {
  info: publicRoute(
    createRoute({
      tags,
      method: "get",
      path: "/api/v1/info",
      summary: "Tracing server info: how the langsmith SDKs should batch and compress",
      responses: { 200: jsonContent(TracingInfoSchema, "Info") },
    }),
  ),
  multipart: route({
    method: "post",
    path: "/api/v1/runs/multipart",
    summary:
      "Create and update runs as multipart/form-data (post.<id>, patch.<id>, <event>.<id>.<field>); gzip and zstd bodies accepted",
    responses: {
      202: jsonContent(IngestResultSchema, "Stored (see errors)"),
      400: errorResponse(
        "A multipart Content-Type without a boundary, a body that is not readable multipart, or not valid zstd",
      ),
      413: errorResponse("Body, or decompressed body, too large"),
      415: errorResponse("Not multipart/form-data, or an unsupported Content-Encoding"),
      422: errorResponse("Every run of the request was refused (each problem is listed in `detail`)"),
      503: errorResponse("Every run of the request went to a trace shard at its size cap (TRACE_SHARD_CAP_BYTES)"),
    },
  }),
  create: route({
    method: "post",
    path: "/api/v1/runs",
    summary: "Create a run",
    request: { body: jsonBody(RunBody) },
    responses: {
      202: jsonContent(IngestResultSchema, "Stored"),
      503: errorResponse("The run's trace shard is at its size cap (TRACE_SHARD_CAP_BYTES)"),
    },
  }),
  update: route({
    method: "patch",
    path: "/api/v1/runs/{run_id}",
    summary: "Update a run (end_time, outputs, error, extra, events, tags…)",
    request: { params: RunIdParams, body: jsonBody(RunBody) },
    responses: { 202: jsonContent(IngestResultSchema, "Stored"), ...notFoundError },
  }),
  batch: route({
    method: "post",
    path: "/api/v1/runs/batch",
    summary: "Create and update runs in one request; bad runs are reported in `errors` and the rest are stored",
    request: { body: jsonBody(RunBatchSchema) },
    responses: {
      202: jsonContent(IngestResultSchema, "Stored (see errors)"),
      503: errorResponse("Every run of the request went to a trace shard at its size cap (TRACE_SHARD_CAP_BYTES)"),
    },
  }),
  query: route({
    method: "post",
    path: "/api/v1/runs/query",
    summary: "Query runs: field conditions, filter language (filter, trace_filter, tree_filter), keyset cursor",
    request: { body: jsonBody(RunsQuerySchema) },
    responses: {
      200: jsonContent(RunsPageSchema, "A page of runs"),
      400: errorResponse(
        "A filter that does not parse or is over the filter limits (each problem with its field), a bad cursor, or limit above 100",
      ),
      422: errorResponse(
        "A body field that does not validate, or one day in more trace shards (projects and splits) than one request reads",
      ),
    },
  }),
  validate: route({
    method: "post",
    path: "/api/v1/runs/query/validate",
    summary: "Check the filters of a runs query without running it",
    request: { body: jsonBody(RunsQueryValidateSchema) },
    responses: { 200: jsonContent(FilterValidationSchema, "Whether the filters parse, with positioned errors") },
  }),
  attachment: route({
    method: "get",
    path: "/api/v1/runs/{run_id}/attachments/{name}",
    summary: "Download a run's attachment (sent as a multipart `attachment.<run id>.<name>` part)",
    request: { params: AttachmentParams },
    responses: { 200: { description: "The attachment's bytes, with its MIME type" }, ...notFoundError },
  }),
  get: route({
    method: "get",
    path: "/api/v1/runs/{run_id}",
    summary: "Get a run",
    request: { params: RunIdParams },
    responses: { 200: jsonContent(TracingRunSchema, "The run"), ...notFoundError },
  }),
};

/** The ingestion of this request's workspace, under the traced run limit in force. */
const ingestor = (c: Context<AppEnv>) =>
  new Ingestor(
    tracesDatabase(c.env, c.get("principal").workspaceId),
    c.env.TRACE_SHARD,
    c.get("principal").workspaceId,
    { maxRunBytes: tracedRunLimit(c.env), env: c.env },
  );

/** Feedback sent before its run counts in the run's feedback_stats and filters once the run is posted. */
async function placeWaitingFeedback(c: Context<AppEnv>, posts: unknown[]): Promise<void> {
  const ids = posts.flatMap((post) => {
    const id = (post as { id?: unknown } | null)?.id;
    return typeof id === "string" ? [id.toLowerCase()] : [];
  });
  if (ids.length) await new FeedbackService(c.env, c.get("principal").workspaceId).placeWaiting(ids);
}

/**
 * A batch none of whose runs was stored: too large when every run was, unavailable when every run's
 * shard was full, else invalid; the detail lists each.
 */
function refusedBatch(errors: RunProblem[]): DomainError {
  const uniform = (kind: RunProblem["kind"]) => errors.every((e) => e.kind === kind);
  const kind = uniform("too_large") ? "too_large" : uniform("unavailable") ? "unavailable" : "invalid";
  return new DomainError(kind, errors.map((e) => `${e.operation} ${e.run_id ?? "(no id)"}: ${e.detail}`).join("; "));
}

/** A refused run as the response lists it: with the status its kind has as a whole response. */
const wireProblem = (problem: RunProblem): IngestProblem => ({
  operation: problem.operation,
  run_id: problem.run_id,
  status: STATUS_OF_KIND[problem.kind],
  detail: problem.detail,
});

/** The response body of an ingest request. */
const accepted = (accepted: number, errors: RunProblem[]): IngestResultBody => ({
  accepted,
  errors: errors.map(wireProblem),
});

/** A single-run request fails as a whole when its run is refused. */
function singleRun(result: IngestResult): IngestResultBody {
  const [problem] = result.errors;
  if (problem) throw new DomainError(problem.kind, problem.detail);
  return accepted(result.accepted, result.errors);
}

export const tracingRunRoutes = createRouter()
  .openapi(routes.create, async (c) => {
    const body = c.req.valid("json");
    const result = singleRun(await ingestor(c).ingest([body], []));
    await placeWaitingFeedback(c, [body]);
    return c.json(result, 202);
  })
  .openapi(routes.update, async (c) => {
    const { run_id } = c.req.valid("param");
    const body = c.req.valid("json");
    if (body.id !== undefined && String(body.id).toLowerCase() !== run_id)
      throw invalid(`Body id ${String(body.id)} does not match the run id ${run_id} in the path`);
    return c.json(singleRun(await ingestor(c).ingest([], [{ ...body, id: run_id }])), 202);
  })
  .openapi(routes.batch, async (c) => {
    const { post, patch } = c.req.valid("json");
    const result = await ingestor(c).ingest(post, patch);
    if (result.accepted === 0 && result.errors.length > 0) throw refusedBatch(result.errors);
    await placeWaitingFeedback(c, post);
    return c.json(accepted(result.accepted, result.errors), 202);
  })
  .openapi(routes.info, (c) =>
    c.json(
      {
        version: LANGSMITH_API_VERSION,
        platform_version: deployment.versions.platform,
        batch_ingest_config: {
          use_multipart_endpoint: true,
          size_limit: 100,
          size_limit_bytes: maxBodyBytes(c.env),
          scale_up_qsize_trigger: 1000,
          scale_up_nthreads_limit: 16,
          scale_down_nempty_trigger: 4,
        },
        instance_flags: { gzip_body_enabled: true, zstd_compression_enabled: true },
      },
      200,
    ),
  )
  .openapi(routes.multipart, async (c) => {
    const { posts, patches, attachments, feedback, problems } = await readMultipartRuns(c.req.raw, maxBodyBytes(c.env));
    const result = await ingestor(c).ingest(posts, patches, attachments);
    await placeWaitingFeedback(c, posts);
    // After the runs, so feedback on a run of the same request finds it.
    const feedbackResult = await ingestFeedback(new FeedbackService(c.env, c.get("principal").workspaceId), feedback);
    const errors = [...problems, ...result.errors, ...feedbackResult.errors];
    const stored = result.accepted + feedbackResult.accepted;
    if (stored === 0 && errors.length > 0) throw refusedBatch(errors);
    return c.json(accepted(stored, errors), 202);
  })
  .openapi(routes.query, async (c) => {
    const query = c.req.valid("json");
    if (query.limit > 100) throw badRequest("Limit exceeds maximum allowed value of 100");
    if (query.cursor && !decodeCursor(query.cursor)) throw badRequest("cursor is not a cursor this API returned");
    return c.json(
      await queryRuns(
        tracesDatabase(c.env, c.get("principal").workspaceId),
        c.env.TRACE_SHARD,
        c.get("principal").workspaceId,
        query,
        queryBudget(c.env),
        c.env,
      ),
      200,
    );
  })
  .openapi(routes.validate, async (c) => {
    // The check /runs/query, /runs/stats and bulk exports run: valid here means accepted there.
    const { errors } = checkQueryFilters(c.req.valid("json"));
    return c.json({ valid: errors.length === 0, errors }, 200);
  })
  .openapi(routes.get, async (c) => {
    const { run_id } = c.req.valid("param");
    const workspaceId = c.get("principal").workspaceId;
    const location = await locateRun(c.env, workspaceId, run_id);
    const text =
      location &&
      (await c.env.TRACE_SHARD.getByName(traceShardName(workspaceId, location.projectId, location.day)).get(run_id));
    if (!text) throw notFound(`Run ${run_id} not found`);
    const { attachments, ...run } = JSON.parse(text) as StoredTracedRun & {
      feedback_stats: TracingRun["feedback_stats"];
      attachments: { name: string; mime_type: string; size: number }[];
    };
    // LangSmith lists attachments in `s3_urls` under `attachment.<name>`, as pre-signed URLs.
    const origin = new URL(c.req.url).origin;
    const s3_urls = await attachmentS3Urls(c.env, origin, workspaceId, run_id, attachments);
    // Attachments only under `s3_urls`: the Python SDK passes its own `attachments` to `Run(...)`.
    // The shard's run and its feedback_stats, as TracingRunSchema describes them (openapi.test.ts checks it).
    return c.json({ ...wireRun(run), s3_urls }, 200);
  })
  .openapi(routes.attachment, async (c) => {
    const { run_id, name } = c.req.valid("param");
    return (await attachmentDownload(c, c.get("principal").workspaceId, run_id, name)) as never;
  });
