import type { Context } from "hono";
import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../db/client.ts";
import { DomainError, badRequest, notFound, invalid } from "../core/errors.ts";
import { createRouter } from "../http/router.ts";
import { jsonBody, jsonContent, notFoundError } from "../http/schemas.ts";
import { errorResponse, publicRoute } from "../http/responses.ts";
import { secured } from "../auth/secured.ts";
import { Ingestor, type IngestResult, locateRun, type RunProblem } from "./ingest.ts";
import { traceShardName } from "./trace-shard-do.ts";
import { validateFilter } from "./filter/check.ts";
import { decodeCursor, QueryFilterError, queryRuns } from "./query.ts";
import { readMultipartRuns } from "./multipart.ts";
import { isoTime } from "./run-input.ts";
import { maxBodyBytes } from "../http/body-limit.ts";
import type { AppEnv } from "../http/app-env.ts";
import { tracedRunLimit } from "./run-size.ts";
import { deployment } from "../deployment/index.ts";

/** `/api/v1/runs`: ingestion as the `langsmith` SDKs send it, and reads of one run. */

const tags = ["Tracing runs"];
const route = <R extends Parameters<typeof createRoute>[0]>(config: R) => secured(createRoute({ tags, ...config }));

// Runs are validated one by one in the ingestor, so one bad run in a batch is reported on its own.
const RunBody = z.record(z.string(), z.unknown()).openapi("RunIngest");
const RunId = z.object({ run_id: z.uuid().transform((id) => id.toLowerCase()) });
const Problem = z.object({ run_id: z.string().nullable(), operation: z.enum(["post", "patch"]), status: z.number(), detail: z.string() });
/** A traced run as stored: its own component, not the Agent Server's `Run`. */
const TracingRunSchema = z.record(z.string(), z.unknown()).openapi("TracingRun");
const Accepted = z.object({ accepted: z.number(), errors: z.array(Problem) }).openapi("IngestResult");

const uuid = z.uuid().transform((id) => id.toLowerCase());

const QuerySchema = z
  .object({
    session: z.array(uuid).optional().describe("Project ids; all projects of the workspace when absent"),
    id: z.array(uuid).max(50).optional().describe("At most 50 run ids"),
    trace: uuid.optional(),
    parent_run: uuid.optional(),
    run_type: z.string().optional(),
    is_root: z.boolean().nullish().transform((v) => v ?? undefined),
    error: z.boolean().nullish().transform((v) => v ?? undefined).describe("true: only failed runs; false: only runs without error"),
    start_time: isoTime.optional().describe("Runs that started at or after this time"),
    end_time: isoTime.optional().describe("Runs that started at or before this time"),
    filter: z.string().nullish().transform((v) => v ?? undefined),
    trace_filter: z.string().nullish().transform((v) => v ?? undefined).describe("Applied to the root run of each trace"),
    tree_filter: z.string().nullish().transform((v) => v ?? undefined).describe("Matches traces holding any run that passes"),
    select: z.array(z.string()).optional(),
    limit: z.number().int().min(1).default(100),
    cursor: z.string().nullish().transform((v) => v ?? undefined),
    order: z.enum(["asc", "desc"]).default("desc"),
  })
  .openapi("RunsQuery");

const ValidateResult = z.object({ valid: z.boolean(), errors: z.array(z.object({ field: z.string(), message: z.string(), position: z.number() })) }).openapi("FilterValidation");

/**
 * The LangSmith API level this server speaks. JS SDK 0.9+ compares `/info.version` with minimum
 * backend versions (0.16.0) before using newer endpoints; the platform's own version is in `platform_version`.
 */
const LANGSMITH_API_VERSION = "0.16.0";

const InfoSchema = z
  .object({
    version: z.string(),
    platform_version: z.string(),
    batch_ingest_config: z.object({
      use_multipart_endpoint: z.boolean(),
      size_limit: z.number(),
      size_limit_bytes: z.number(),
      scale_up_qsize_trigger: z.number(),
      scale_up_nthreads_limit: z.number(),
      scale_down_nempty_trigger: z.number(),
    }),
    instance_flags: z.record(z.string(), z.boolean()),
  })
  .openapi("TracingInfo");

const routes = {
  info: publicRoute(createRoute({
    tags,
    method: "get",
    path: "/api/v1/info",
    summary: "Tracing server info: how the langsmith SDKs should batch and compress",
    responses: { 200: jsonContent(InfoSchema, "Info") },
  })),
  multipart: route({
    method: "post",
    path: "/api/v1/runs/multipart",
    summary: "Create and update runs as multipart/form-data (post.<id>, patch.<id>, <event>.<id>.<field>); gzip bodies accepted",
    responses: {
      202: jsonContent(Accepted, "Stored (see errors)"),
      400: errorResponse("A multipart Content-Type without a boundary, or a body that is not readable multipart"),
      413: errorResponse("Body, or decompressed body, too large"),
      415: errorResponse("Not multipart/form-data, or an unsupported Content-Encoding"),
      422: errorResponse("Every run of the request was refused (each problem is listed in `detail`)"),
    },
  }),
  create: route({
    method: "post",
    path: "/api/v1/runs",
    summary: "Create a run",
    request: { body: jsonBody(RunBody) },
    responses: { 202: jsonContent(Accepted, "Stored") },
  }),
  update: route({
    method: "patch",
    path: "/api/v1/runs/{run_id}",
    summary: "Update a run (end_time, outputs, error, extra, events, tags…)",
    request: { params: RunId, body: jsonBody(RunBody) },
    responses: { 202: jsonContent(Accepted, "Stored"), ...notFoundError },
  }),
  batch: route({
    method: "post",
    path: "/api/v1/runs/batch",
    summary: "Create and update runs in one request; bad runs are reported in `errors` and the rest are stored",
    request: { body: jsonBody(z.object({ post: z.array(RunBody).default([]), patch: z.array(RunBody).default([]) }).openapi("RunBatch")) },
    responses: { 202: jsonContent(Accepted, "Stored (see errors)") },
  }),
  query: route({
    method: "post",
    path: "/api/v1/runs/query",
    summary: "Query runs: field conditions, filter language (filter, trace_filter, tree_filter), keyset cursor",
    request: { body: jsonBody(QuerySchema) },
    responses: {
      200: jsonContent(z.object({ runs: z.array(z.record(z.string(), z.unknown())), cursors: z.object({ next: z.string().nullable(), prev: z.null() }) }), "A page of runs"),
      400: errorResponse("A filter that does not parse, a bad cursor, or limit above 100"),
    },
  }),
  validate: route({
    method: "post",
    path: "/api/v1/runs/query/validate",
    summary: "Check the filters of a runs query without running it",
    request: { body: jsonBody(z.object({ filter: z.string().nullish(), trace_filter: z.string().nullish(), tree_filter: z.string().nullish() }).openapi("RunsQueryValidate")) },
    responses: { 200: jsonContent(ValidateResult, "Whether the filters parse, with positioned errors") },
  }),
  attachment: route({
    method: "get",
    path: "/api/v1/runs/{run_id}/attachments/{name}",
    summary: "Download a run's attachment (sent as a multipart `attachment.<run id>.<name>` part)",
    request: { params: z.object({ run_id: z.uuid().transform((id) => id.toLowerCase()), name: z.string().min(1) }) },
    responses: { 200: { description: "The attachment's bytes, with its MIME type" }, ...notFoundError },
  }),
  get: route({
    method: "get",
    path: "/api/v1/runs/{run_id}",
    summary: "Get a run",
    request: { params: RunId },
    responses: { 200: jsonContent(TracingRunSchema, "The run"), ...notFoundError },
  }),
};

/** The ingestion of this request's workspace, under the traced run limit in force. */
const ingestor = (c: Context<AppEnv>) =>
  new Ingestor(database(c.env), c.env.TRACE_SHARD, c.get("principal").workspaceId, { maxRunBytes: tracedRunLimit(c.env) });

/** A batch none of whose runs was stored: 413 when every run was too large, else 422; the detail lists each. */
function refusedBatch(errors: RunProblem[]): DomainError {
  const kind = errors.every((e) => e.status === 413) ? "too_large" : "invalid";
  return new DomainError(kind, errors.map((e) => `${e.operation} ${e.run_id ?? "(no id)"}: ${e.detail}`).join("; "));
}

const KIND_OF_PROBLEM = { 404: "not_found", 413: "too_large", 422: "invalid" } as const;

/** A single-run request fails as a whole when its run is refused. */
function singleRun(result: IngestResult): IngestResult {
  const [problem] = result.errors;
  if (problem) throw new DomainError(KIND_OF_PROBLEM[problem.status], problem.detail);
  return result;
}

export const tracingRunRoutes = createRouter()
  .openapi(routes.create, async (c) => {
    return c.json(singleRun(await ingestor(c).ingest([c.req.valid("json")], [])), 202);
  })
  .openapi(routes.update, async (c) => {
    const { run_id } = c.req.valid("param");
    const body = c.req.valid("json");
    if (body.id !== undefined && String(body.id).toLowerCase() !== run_id) throw invalid(`Body id ${String(body.id)} does not match the run id ${run_id} in the path`);
    return c.json(singleRun(await ingestor(c).ingest([], [{ ...body, id: run_id }])), 202);
  })
  .openapi(routes.batch, async (c) => {
    const { post, patch } = c.req.valid("json");
    const result = await ingestor(c).ingest(post, patch);
    if (result.accepted === 0 && result.errors.length > 0) throw refusedBatch(result.errors);
    return c.json(result, 202);
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
        instance_flags: { gzip_body_enabled: true, zstd_compression_enabled: false },
      },
      200,
    ),
  )
  .openapi(routes.multipart, async (c) => {
    const { posts, patches, attachments, problems } = await readMultipartRuns(c.req.raw, maxBodyBytes(c.env));
    const result = await ingestor(c).ingest(posts, patches, attachments);
    const errors = [...problems, ...result.errors];
    if (result.accepted === 0 && errors.length > 0) throw refusedBatch(errors);
    return c.json({ accepted: result.accepted, errors }, 202);
  })
  .openapi(routes.query, async (c) => {
    const query = c.req.valid("json");
    if (query.limit > 100) throw badRequest("Limit exceeds maximum allowed value of 100");
    if (query.cursor && !decodeCursor(query.cursor)) throw badRequest("cursor is not a cursor this API returned");
    try {
      return c.json(await queryRuns(database(c.env), c.env.TRACE_SHARD, c.get("principal").workspaceId, query), 200);
    } catch (error) {
      if (error instanceof QueryFilterError) throw badRequest(error.message);
      throw error;
    }
  })
  .openapi(routes.validate, async (c) => {
    const body = c.req.valid("json");
    const errors = (["filter", "trace_filter", "tree_filter"] as const).flatMap((field) => {
      const text = body[field];
      return text?.trim() ? validateFilter(text, field).errors : [];
    });
    return c.json({ valid: errors.length === 0, errors }, 200);
  })
  .openapi(routes.get, async (c) => {
    const { run_id } = c.req.valid("param");
    const workspaceId = c.get("principal").workspaceId;
    const location = await locateRun(database(c.env), workspaceId, run_id);
    const text = location && (await c.env.TRACE_SHARD.getByName(traceShardName(workspaceId, location.projectId, location.day)).get(run_id));
    if (!text) throw notFound(`Run ${run_id} not found`);
    const run = JSON.parse(text) as { attachments: { name: string; mime_type: string; size: number }[] };
    // LangSmith lists attachments in `s3_urls` under `attachment.<name>`; here the URL is this API's
    // download route, which takes the same API key (it is not a pre-signed URL).
    const origin = new URL(c.req.url).origin;
    const s3_urls = Object.fromEntries(
      run.attachments.map((a) => [`attachment.${a.name}`, { presigned_url: `${origin}/api/v1/runs/${run_id}/attachments/${encodeURIComponent(a.name)}`, mime_type: a.mime_type, size: a.size }]),
    );
    return c.json({ ...run, s3_urls }, 200);
  })
  .openapi(routes.attachment, async (c) => {
    const { run_id, name } = c.req.valid("param");
    const workspaceId = c.get("principal").workspaceId;
    const location = await locateRun(database(c.env), workspaceId, run_id);
    const found = location && (await c.env.TRACE_SHARD.getByName(traceShardName(workspaceId, location.projectId, location.day)).attachment(run_id, name));
    if (!found) throw notFound(`Attachment ${name} of run ${run_id} not found`);
    // Client-supplied bytes: a download, never rendered or sniffed as something else.
    return c.body(found.data as Uint8Array<ArrayBuffer>, 200, {
      "Content-Type": found.mime_type,
      "Content-Length": String(found.data.byteLength),
      "Content-Disposition": `attachment; filename*=UTF-8''${encodeURIComponent(name)}`,
      "X-Content-Type-Options": "nosniff",
    }) as never;
  });
