import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { notFound } from "../core/errors.ts";
import type { AppEnv } from "../http/app-env.ts";
import { errorResponse, publicRoute } from "../http/responses.ts";
import { createRouter } from "../http/router.ts";
import { notFoundError } from "../http/schemas.ts";
import { checkAttachmentSignature } from "./attachment-urls.ts";
import { locateRun } from "./directory.ts";
import { traceShardName } from "./trace-shard-do.ts";

/** `GET /api/v1/attachments/...`: the pre-signed attachment URLs of `s3_urls`, served without an API key. */

/**
 * Any 8-4-4-4-12 hex id. Not lower-cased: the URL must be the one that was signed, and signed ids are
 * lower-case, so another spelling is refused by the signature check (the signature guards the URL).
 */
const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "must be a UUID");

const routes = {
  signed: publicRoute(
    createRoute({
      tags: ["Tracing runs"],
      method: "get",
      path: "/api/v1/attachments/{workspace_id}/{run_id}/{name}",
      summary: "Download a run's attachment through its pre-signed URL (from the run's s3_urls), without an API key",
      request: {
        params: z.object({ workspace_id: uuid, run_id: uuid, name: z.string().min(1) }),
        query: z.object({
          expires: z.string().optional().describe("Unix seconds after which the URL is refused"),
          signature: z.string().optional().describe("HMAC-SHA256 of the workspace, run, name and expiry"),
        }),
      },
      responses: {
        200: { description: "The attachment's bytes, with its MIME type" },
        403: errorResponse("No signature, a signature that does not match this attachment, or an expired URL"),
        ...notFoundError,
      },
    }),
  ),
};

export const attachmentDownloadRoutes = createRouter().openapi(routes.signed, async (c) => {
  const { workspace_id, run_id, name } = c.req.valid("param");
  await checkAttachmentSignature(
    c.env,
    { workspaceId: workspace_id, runId: run_id, name },
    c.req.valid("query"),
    new URL(c.req.url).pathname,
  );
  return (await attachmentDownload(c, workspace_id, run_id, name)) as never;
});

/** An attachment's bytes as a download, or a 404. */
export async function attachmentDownload(
  c: Context<AppEnv>,
  workspaceId: string,
  runId: string,
  name: string,
): Promise<Response> {
  const location = await locateRun(c.env, workspaceId, runId);
  const found =
    location &&
    (await c.env.TRACE_SHARD.getByName(traceShardName(workspaceId, location.projectId, location.day)).attachment(
      runId,
      name,
    ));
  if (!found) throw notFound(`Attachment ${name} of run ${runId} not found`);
  // Client-supplied bytes: a download, never rendered or sniffed as something else.
  return c.body(found.data as Uint8Array<ArrayBuffer>, 200, {
    "Content-Type": found.mime_type,
    "Content-Length": String(found.data.byteLength),
    "Content-Disposition": `attachment; filename*=UTF-8''${encodeURIComponent(name)}`,
    "X-Content-Type-Options": "nosniff",
  });
}
