import type { z } from "zod";
import type { RunPatch } from "./schemas.ts";

/**
 * Runs as the `langsmith` SDKs send them (their zod schemas are in schemas.ts): the
 * `dotted_order` invariants checked against `id`, `trace_id` and `parent_run_id`, and the usage and
 * costs derived from their payloads.
 */

/** A file attached to a run (multipart part `attachment.<run id>.<name>`). */
export type RunAttachment = { run_id: string; name: string; mime_type: string; data: Uint8Array };

const SEGMENT = /^(\d{8}T\d{6})(\d{6})Z([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The problem with a run's `dotted_order`, `trace_id` and `parent_run_id`, or null when they agree. */
export function dottedOrderProblem(
  run: Pick<RunPatch, "id" | "dotted_order" | "trace_id" | "parent_run_id">,
): string | null {
  if (run.dotted_order === undefined) return null;
  const segments = run.dotted_order.split(".");
  const ids: string[] = [];
  for (const [index, segment] of segments.entries()) {
    const match = SEGMENT.exec(segment);
    if (!match)
      return `dotted_order segment ${index + 1} "${segment.slice(0, 60)}" is not <YYYYMMDDTHHMMSSffffff>Z<uuid>`;
    ids.push(match[3]);
  }
  if (ids.at(-1) !== run.id) return `dotted_order must end with the run's id ${run.id}, found ${ids.at(-1)}`;
  if (run.trace_id !== undefined && ids[0] !== run.trace_id)
    return `dotted_order must start with trace_id ${run.trace_id}, found ${ids[0]}`;
  const parent = ids.length > 1 ? ids[ids.length - 2] : null;
  if (run.parent_run_id !== undefined && (run.parent_run_id ?? null) !== parent) {
    return `parent_run_id ${run.parent_run_id} does not match dotted_order, whose parent is ${parent ?? "none (a root run)"}`;
  }
  return null;
}

/** The ancestors named by a dotted_order, root first (`parent_run_ids`). */
export function ancestorIds(dottedOrder: string): string[] {
  return dottedOrder
    .split(".")
    .slice(0, -1)
    .map((segment) => segment.slice(-36));
}

/** One zod error as a sentence naming the field. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join(".") || "body"}: ${issue.message}`).join("; ");
}

export type Usage = {
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  prompt_cost: number | null;
  completion_cost: number | null;
  total_cost: number | null;
};

/** Prices per million tokens, by model name (the `MODEL_PRICES` var). */
export type ModelPrices = Record<string, { input_per_million?: number; output_per_million?: number }>;

const count = (value: unknown): number | null => (typeof value === "number" && Number.isFinite(value) ? value : null);
const NO_USAGE: Usage = {
  prompt_tokens: null,
  completion_tokens: null,
  total_tokens: null,
  prompt_cost: null,
  completion_cost: null,
  total_cost: null,
};

/** The model a run called: LangChain's `ls_model_name` metadata, else the invocation params. */
function modelOf(extra: Record<string, unknown> | null | undefined): string | null {
  const metadata = extra?.metadata as { ls_model_name?: unknown } | undefined;
  const params = extra?.invocation_params as { model?: unknown; model_name?: unknown } | undefined;
  const model = metadata?.ls_model_name ?? params?.model ?? params?.model_name;
  return typeof model === "string" && model ? model : null;
}

/**
 * Token counts and costs from where LangChain and the SDK put them: `outputs.usage_metadata` (chat
 * models), `outputs.llm_output.token_usage` (OpenAI-style), or `extra.metadata.usage_metadata`
 * (traceable). Costs the client sent (`input_cost`, `output_cost`, `total_cost`) win; otherwise
 * they come from `prices` for the run's model, when it has a price.
 */
export function usageOf(
  outputs: Record<string, unknown> | null | undefined,
  extra: Record<string, unknown> | null | undefined,
  prices: ModelPrices = {},
): Usage {
  const candidates: unknown[] = [];
  const generations = outputs?.generations;
  if (Array.isArray(generations)) {
    for (const group of generations.flat()) {
      const message = (
        group as { message?: { kwargs?: { usage_metadata?: unknown }; usage_metadata?: unknown } } | null
      )?.message;
      candidates.push(message?.kwargs?.usage_metadata, message?.usage_metadata);
    }
  }
  candidates.push(outputs?.usage_metadata, (outputs?.llm_output as { token_usage?: unknown } | undefined)?.token_usage);
  candidates.push((extra?.metadata as { usage_metadata?: unknown } | undefined)?.usage_metadata);
  for (const candidate of candidates) {
    if (!candidate || typeof candidate !== "object") continue;
    const usage = candidate as Record<string, unknown>;
    const prompt = count(usage.input_tokens) ?? count(usage.prompt_tokens);
    const completion = count(usage.output_tokens) ?? count(usage.completion_tokens);
    const total =
      count(usage.total_tokens) ?? (prompt !== null || completion !== null ? (prompt ?? 0) + (completion ?? 0) : null);
    if (total === null) continue;
    let promptCost = count(usage.input_cost) ?? count(usage.prompt_cost);
    let completionCost = count(usage.output_cost) ?? count(usage.completion_cost);
    let totalCost = count(usage.total_cost);
    const model = modelOf(extra);
    const price = model ? prices[model] : undefined;
    if (price && promptCost === null && completionCost === null && totalCost === null) {
      promptCost =
        prompt !== null && price.input_per_million !== undefined ? (prompt * price.input_per_million) / 1e6 : null;
      completionCost =
        completion !== null && price.output_per_million !== undefined
          ? (completion * price.output_per_million) / 1e6
          : null;
    }
    totalCost ??= promptCost !== null || completionCost !== null ? (promptCost ?? 0) + (completionCost ?? 0) : null;
    return {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: total,
      prompt_cost: promptCost,
      completion_cost: completionCost,
      total_cost: totalCost,
    };
  }
  return NO_USAGE;
}

/** `MODEL_PRICES` as configured: a JSON object, or nothing when unset or not valid. */
export function parseModelPrices(text: string | undefined): ModelPrices {
  if (!text?.trim()) return {};
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as ModelPrices) : {};
  } catch {
    return {};
  }
}
