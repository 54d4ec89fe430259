import {
  getMultipartBoundary,
  MaxFileSizeExceededError,
  MaxTotalSizeExceededError,
  parseMultipartStream,
} from "@remix-run/multipart-parser";
import { bodyEncoding, decodedBody } from "../core/content-encoding.ts";
import { badRequest, DomainError, tooLarge } from "../core/errors.ts";
import { MAX_ATTACHMENT_BYTES } from "../core/limits.ts";
import type { RunProblem } from "./ingest.ts";
import type { RunAttachment } from "./run-input.ts";

/**
 * `POST /runs/multipart` as the `langsmith` SDKs write it: parts `post.<id>` and
 * `patch.<id>` hold a run without its large fields, `post.<id>.<field>` one field each
 * (inputs, outputs, events, extra, error, serialized). The body may be compressed whole (gzip, deflate, zstd).
 */

/** Fields the SDK sends as separate parts; any other field name in a part is refused. */
const SPLIT_FIELDS = new Set(["inputs", "outputs", "events", "extra", "error", "serialized"]);

export type MultipartRuns = {
  posts: Record<string, unknown>[];
  patches: Record<string, unknown>[];
  attachments: RunAttachment[];
  /** `feedback.<id>` parts: JSON objects, each with its part's id unless it names its own. */
  feedback: Record<string, unknown>[];
  problems: RunProblem[];
};

/** `type/subtype` with optional `; name=value` parameters, printable ASCII only. */
const MEDIA_TYPE = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(\s*;\s*[\w!#$&^.+-]+=("[\x20-\x7e]*"|[\w!#$&^.+-]+))*$/;

/** Attachment names the SDK allows: no dots (they separate the part name's segments). */
const ATTACHMENT_NAME = /^[^./\\]{1,200}$/;

type Part = { name: string; contentType: string; bytes: Uint8Array };

/** The SDK sends most parts once each, up to 8 per run and 100 runs per batch; attachments add more. */
const MAX_PARTS = 10_000;

/**
 * The parts of a multipart body. Parsed as bytes (not with `Request.formData()`): the SDK writes
 * its parts without a filename, so the platform's form parser would hand binary attachments back
 * as UTF-8-decoded text.
 */
async function partsOf(request: Request, maxBytes: number): Promise<Part[]> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!contentType.toLowerCase().startsWith("multipart/form-data")) {
    throw new DomainError(
      "unsupported_media_type",
      `Expected a multipart/form-data body, got ${contentType || "no Content-Type"}`,
    );
  }
  const boundary = getMultipartBoundary(contentType);
  if (!boundary) throw badRequest("The multipart Content-Type has no boundary parameter");
  if (!request.body) return [];
  const body = await decodedBody(request.body, bodyEncoding(request), maxBytes);
  const parts: Part[] = [];
  try {
    for await (const part of parseMultipartStream(body, {
      boundary,
      maxFileSize: maxBytes,
      maxTotalSize: maxBytes,
      maxParts: MAX_PARTS,
    })) {
      parts.push({ name: part.name ?? "", contentType: part.headers["content-type"] ?? "", bytes: part.bytes });
    }
  } catch (error) {
    if (error instanceof DomainError) throw error;
    if (error instanceof MaxTotalSizeExceededError || error instanceof MaxFileSizeExceededError)
      throw tooLarge(`Request body is larger than the limit of ${maxBytes} bytes`);
    throw badRequest(`The multipart body could not be read: ${error instanceof Error ? error.message : String(error)}`);
  }
  return parts;
}

const decoder = new TextDecoder();

export async function readMultipartRuns(request: Request, maxBytes: number): Promise<MultipartRuns> {
  const parts = await partsOf(request, maxBytes);
  const runs = { post: new Map<string, Record<string, unknown>>(), patch: new Map<string, Record<string, unknown>>() };
  const fields: { event: "post" | "patch"; id: string; field: string; value: unknown }[] = [];
  const problems: RunProblem[] = [];
  const attachments: RunAttachment[] = [];
  const feedback: Record<string, unknown>[] = [];
  const refuse = (operation: RunProblem["operation"], runId: string | null, detail: string) =>
    problems.push({ operation, run_id: runId, kind: "invalid", detail });

  for (const { name, contentType, bytes } of parts) {
    const [event, id, field, ...rest] = name.split(".");
    if (event === "attachment") {
      if (!id || field === undefined || rest.length > 0 || !ATTACHMENT_NAME.test(field)) {
        refuse(
          "post",
          id ?? null,
          `part ${name}: an attachment part is attachment.<run id>.<name>, a file whose name has no dots`,
        );
        continue;
      }
      // Stored in chunks, but read back whole over one Durable Object RPC (32 MiB at most).
      if (bytes.byteLength > MAX_ATTACHMENT_BYTES) {
        problems.push({
          operation: "post",
          run_id: id.toLowerCase(),
          kind: "too_large",
          detail: `attachment ${field} is ${bytes.byteLength} bytes; the limit is ${MAX_ATTACHMENT_BYTES} (MAX_ATTACHMENT_BYTES)`,
        });
        continue;
      }
      // The SDK sends `<mime type>; length=<bytes>`; keep the type and its other parameters.
      const declared = contentType
        .split(";")
        .map((piece) => piece.trim())
        .filter((piece) => piece && !piece.startsWith("length="))
        .join("; ");
      // Served back later as a Content-Type header: keep it only when it is a plain ASCII media type.
      const mime = MEDIA_TYPE.test(declared) ? declared : "application/octet-stream";
      attachments.push({ run_id: id.toLowerCase(), name: field, mime_type: mime, data: bytes });
      continue;
    }
    if (event === "feedback") {
      let body: unknown;
      try {
        body = JSON.parse(decoder.decode(bytes));
      } catch {
        body = undefined;
      }
      if (!id || field !== undefined || !body || typeof body !== "object" || Array.isArray(body)) {
        refuse("feedback", id ?? null, `part ${name}: a feedback part is feedback.<id> holding a JSON object`);
        continue;
      }
      feedback.push({ id, ...(body as Record<string, unknown>) });
      continue;
    }
    if (
      (event !== "post" && event !== "patch") ||
      !id ||
      rest.length > 0 ||
      (field !== undefined && !SPLIT_FIELDS.has(field))
    ) {
      refuse(
        "post",
        id ?? null,
        `part name ${JSON.stringify(name)} is not post.<id>, patch.<id> or <post|patch>.<id>.<${[...SPLIT_FIELDS].join("|")}>`,
      );
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(decoder.decode(bytes));
    } catch {
      refuse(event, id, `part ${name} is not JSON`);
      continue;
    }
    if (field === undefined) {
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
        refuse(event, id, `part ${name} must be a JSON object`);
        continue;
      }
      runs[event].set(id, {
        ...(runs[event].get(id) ?? {}),
        ...(parsed as Record<string, unknown>),
        id: (parsed as { id?: unknown }).id ?? id,
      });
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
    for (const [id, run] of map)
      if (String(run.id) !== id) refuse(event, id, `the part names run ${id} but its body says ${String(run.id)}`);
  }
  const consistent = (event: "post" | "patch") =>
    [...runs[event].entries()].filter(([id, run]) => String(run.id) === id).map(([, run]) => run);
  return { posts: consistent("post"), patches: consistent("patch"), attachments, feedback, problems };
}
