import { ApiError } from "../http/errors.ts";
import type { RunProblem } from "./ingest.ts";

/**
 * `POST /runs/multipart` as the `langsmith` SDKs write it (reference §2.3): parts `post.<id>` and
 * `patch.<id>` hold a run without its large fields, `post.<id>.<field>` one field each
 * (inputs, outputs, events, extra, error, serialized). The body may be gzip-compressed whole.
 */

/** Fields the SDK sends as separate parts; any other field name in a part is refused. */
const SPLIT_FIELDS = new Set(["inputs", "outputs", "events", "extra", "error", "serialized"]);

export type MultipartRuns = { posts: Record<string, unknown>[]; patches: Record<string, unknown>[]; problems: RunProblem[] };

/** Decompresses a gzip body, refusing more than `maxBytes` of output (a small body can inflate hugely). */
function inflated(body: ReadableStream<Uint8Array>, maxBytes: number): ReadableStream<Uint8Array> {
  let total = 0;
  const guard = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      total += chunk.byteLength;
      if (total > maxBytes) throw new ApiError(413, `Decompressed request body is larger than the limit of ${maxBytes} bytes`);
      controller.enqueue(chunk);
    },
  });
  return body.pipeThrough(new DecompressionStream("gzip") as unknown as TransformStream<Uint8Array, Uint8Array>).pipeThrough(guard);
}

async function formOf(request: Request, maxBytes: number): Promise<FormData> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!contentType.toLowerCase().startsWith("multipart/form-data")) {
    throw new ApiError(415, `Expected a multipart/form-data body, got ${contentType || "no Content-Type"}`);
  }
  const encoding = (request.headers.get("content-encoding") ?? "identity").toLowerCase();
  if (encoding !== "identity" && encoding !== "gzip") throw new ApiError(415, `Content-Encoding ${encoding} is not supported; send gzip or no encoding`);
  const body = encoding === "gzip" && request.body ? inflated(request.body, maxBytes) : request.body;
  try {
    return await new Response(body, { headers: { "content-type": contentType } }).formData();
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError(400, `The multipart body could not be read: ${error instanceof Error ? error.message : String(error)}`);
  }
}

const text = async (value: string | File) => (typeof value === "string" ? value : await value.text());

export async function readMultipartRuns(request: Request, maxBytes: number): Promise<MultipartRuns> {
  const form = await formOf(request, maxBytes);
  const runs = { post: new Map<string, Record<string, unknown>>(), patch: new Map<string, Record<string, unknown>>() };
  const fields: { event: "post" | "patch"; id: string; field: string; value: unknown }[] = [];
  const problems: RunProblem[] = [];
  const refuse = (operation: "post" | "patch", runId: string | null, detail: string) => problems.push({ operation, run_id: runId, status: 422, detail });

  for (const [name, value] of form.entries()) {
    const [event, id, field, ...rest] = name.split(".");
    if (event === "attachment" || event === "feedback") {
      // Not stored yet: said so per run instead of silently dropping the data.
      refuse("post", id ?? null, `part ${name}: ${event === "attachment" ? "attachments" : "feedback"} are not supported by this server yet; the run itself was stored`);
      continue;
    }
    if ((event !== "post" && event !== "patch") || !id || rest.length > 0 || (field !== undefined && !SPLIT_FIELDS.has(field))) {
      refuse("post", id ?? null, `part name ${JSON.stringify(name)} is not post.<id>, patch.<id> or <post|patch>.<id>.<${[...SPLIT_FIELDS].join("|")}>`);
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(await text(value));
    } catch {
      refuse(event, id, `part ${name} is not JSON`);
      continue;
    }
    if (field === undefined) {
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
        refuse(event, id, `part ${name} must be a JSON object`);
        continue;
      }
      runs[event].set(id, { ...(runs[event].get(id) ?? {}), ...(parsed as Record<string, unknown>), id: (parsed as { id?: unknown }).id ?? id });
    } else {
      fields.push({ event, id, field, value: parsed });
    }
  }
  for (const { event, id, field, value } of fields) {
    const run = runs[event].get(id);
    if (!run) {
      refuse(event, id, `part ${event}.${id}.${field} has no ${event}.${id} part`);
      continue;
    }
    run[field] = value;
  }
  for (const [event, map] of Object.entries(runs) as ["post" | "patch", Map<string, Record<string, unknown>>][]) {
    for (const [id, run] of map) if (String(run.id) !== id) refuse(event, id, `the part names run ${id} but its body says ${String(run.id)}`);
  }
  const consistent = (event: "post" | "patch") => [...runs[event].entries()].filter(([id, run]) => String(run.id) === id).map(([, run]) => run);
  return { posts: consistent("post"), patches: consistent("patch"), problems };
}
