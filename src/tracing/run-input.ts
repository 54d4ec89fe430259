import type { z } from "zod";
import { isObject } from "../core/json.ts";
import { MAX_RUN_COST, MAX_RUN_TOKENS } from "../core/limits.ts";
import { toRunTime } from "./times.ts";

/**
 * Runs as the `langsmith` SDKs send them (their zod schemas are in schemas.ts): the
 * `dotted_order` invariants checked against `id`, `trace_id` and `parent_run_id`, and the usage and
 * costs derived from their payloads.
 */

/** A file attached to a run (multipart part `attachment.<run id>.<name>`). */
export type RunAttachment = { run_id: string; name: string; mime_type: string; data: Uint8Array };

const SEGMENT = /^(\d{8}T\d{6})(\d{6})Z([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The problem with a run's `dotted_order`, `trace_id` and `parent_run_id`, or null when they agree. */
export function dottedOrderProblem(run: {
  id: string;
  dotted_order?: string;
  trace_id?: string;
  parent_run_id?: string | null;
}): string | null {
  if (run.dotted_order === undefined) return null;
  const segments = run.dotted_order.split(".");
  const ids: string[] = [];
  for (const [index, segment] of segments.entries()) {
    const match = SEGMENT.exec(segment);
    if (!match)
      return `dotted_order segment ${index + 1} "${segment.slice(0, 60)}" is not <YYYYMMDDTHHMMSSffffff>Z<uuid>`;
    // The segment's time orders the trace and names the run's shard day: a time runs may carry.
    const [date, fraction] = [match[1], match[2]];
    const iso = `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}.${fraction}Z`;
    const time = toRunTime(iso);
    if ("problem" in time) return `dotted_order segment ${index + 1}: ${time.problem}`;
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
  const candidates = usageCandidates(outputs, extra).map(({ value }) => value);
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

/** Where usage may be, with the path that names it in a refusal. */
function usageCandidates(
  outputs: Record<string, unknown> | null | undefined,
  extra: Record<string, unknown> | null | undefined,
): { path: string; value: unknown }[] {
  const candidates: { path: string; value: unknown }[] = [];
  const generations = outputs?.generations;
  if (Array.isArray(generations)) {
    generations.forEach((group, i) => {
      (Array.isArray(group) ? group : [group]).forEach((generation, j) => {
        const at = Array.isArray(group) ? `outputs.generations.${i}.${j}.message` : `outputs.generations.${i}.message`;
        const message = (
          generation as { message?: { kwargs?: { usage_metadata?: unknown }; usage_metadata?: unknown } } | null
        )?.message;
        candidates.push(
          { path: `${at}.kwargs.usage_metadata`, value: message?.kwargs?.usage_metadata },
          { path: `${at}.usage_metadata`, value: message?.usage_metadata },
        );
      });
    });
  }
  candidates.push(
    { path: "outputs.usage_metadata", value: outputs?.usage_metadata },
    {
      path: "outputs.llm_output.token_usage",
      value: (outputs?.llm_output as { token_usage?: unknown } | undefined)?.token_usage,
    },
    {
      path: "extra.metadata.usage_metadata",
      value: (extra?.metadata as { usage_metadata?: unknown } | undefined)?.usage_metadata,
    },
  );
  return candidates;
}

const TOKEN_FIELDS = ["input_tokens", "prompt_tokens", "output_tokens", "completion_tokens", "total_tokens"];
const COST_FIELDS = ["input_cost", "prompt_cost", "output_cost", "completion_cost", "total_cost"];

/**
 * Why the token counts or costs of a run's usage cannot be summed, or null: each is read into the
 * run's totals and summed over projects, so a count is an integer from 0 to `MAX_RUN_TOKENS` and a
 * cost a number from 0 to `MAX_RUN_COST` (a negative or 1e308 one would make every sum wrong).
 */
export function usageProblem(
  outputs: Record<string, unknown> | null | undefined,
  extra: Record<string, unknown> | null | undefined,
): { path: string; message: string } | null {
  for (const { path, value } of usageCandidates(outputs, extra)) {
    if (!value || typeof value !== "object") continue;
    const usage = value as Record<string, unknown>;
    for (const field of TOKEN_FIELDS) {
      const count = usage[field];
      if (typeof count !== "number") continue; // not read (see usageOf)
      if (!Number.isInteger(count) || count < 0 || count > MAX_RUN_TOKENS)
        return {
          path: `${path}.${field}`,
          message: `${JSON.stringify(count)} is not a token count, an integer from 0 to ${MAX_RUN_TOKENS}`,
        };
    }
    for (const field of COST_FIELDS) {
      const cost = usage[field];
      if (typeof cost !== "number") continue;
      if (!Number.isFinite(cost) || cost < 0 || cost > MAX_RUN_COST)
        return {
          path: `${path}.${field}`,
          message: `${JSON.stringify(cost)} is not a cost, a number from 0 to ${MAX_RUN_COST}`,
        };
    }
  }
  return null;
}

/** `MODEL_PRICES` as configured: a JSON object, or nothing when unset or not valid. */
export function parseModelPrices(text: string | undefined): ModelPrices {
  if (!text?.trim()) return {};
  try {
    const parsed = JSON.parse(text) as unknown;
    return isObject(parsed) ? (parsed as ModelPrices) : {};
  } catch {
    return {};
  }
}
