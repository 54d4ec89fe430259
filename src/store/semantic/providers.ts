import { shownDuration, withDeadline } from "../../core/deadline.ts";
import { invalid, unavailable } from "../../core/errors.ts";
import { isObject } from "../../core/json.ts";
import { EMBED_CALL_TIMEOUT_MS, EMBED_ERROR_MESSAGE_CHARS } from "../../core/limits.ts";
import type { StoreManifest } from "../../deployment/manifest.ts";
import { embedFunction } from "../../deployment/store-config.ts";
import type { Embedder } from "./embed.ts";

/**
 * The providers `store.index.embed` names: an OpenAI-compatible endpoint (`openai:<model>`), Workers AI
 * through the `AI` binding (`cloudflare:<model>`), or the deployment's own function. Each `embed` is one
 * provider call for the texts it is given (embed.ts batches them). Every failure is a `unavailable`
 * error (503) whose detail names the provider and what happened; none carries the API key.
 */

/** The `AI` binding of Workers AI, as far as embeddings use it (the generated `Ai` type fits it). */
export interface WorkersAiBinding {
  run(model: string, input: { text: string[] }): Promise<unknown>;
}

/**
 * What the providers read from the Worker's env: the OpenAI key and base URL (also read from
 * `process.env`, where langgraph.json `env` lands) and the `AI` binding. `object &` lets the Worker's
 * `Env`, which names none of them unless configured, be passed as it is.
 */
export type EmbeddingEnv = object & {
  OPENAI_API_KEY?: string;
  OPENAI_BASE_URL?: string;
  AI?: WorkersAiBinding;
};

export interface EmbedderOptions {
  /** One provider call's limit, in milliseconds (EMBED_CALL_TIMEOUT_MS unless a test sets a shorter one). */
  timeoutMs?: number;
}

/** Upstream statuses that refuse the texts themselves, answered as a 422 rather than a 503. */
const REFUSED_INPUT = new Set([400, 413, 422]);

export const DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1";

/** The store's embedder, or null when `store.index` is not configured. */
export function embedderFor(store: StoreManifest, env: EmbeddingEnv, options: EmbedderOptions = {}): Embedder | null {
  const index = store.index;
  if (!index) return null;
  const { embed, dims } = index;
  const provider = embed.kind === "function" ? embed.source : `${embed.kind}:${embed.model}`;
  let call: (texts: string[], signal: AbortSignal) => Promise<number[][]>;
  if (embed.kind === "openai") call = (texts, signal) => openaiEmbed(provider, embed.model, dims, env, texts, signal);
  else if (embed.kind === "cloudflare") call = (texts) => workersAiEmbed(provider, embed.model, env, texts);
  else {
    const fn = embedFunction(store)!;
    call = async (texts) => {
      let answer: unknown;
      try {
        answer = await fn(texts);
      } catch (error) {
        throw unavailable(`${provider}: the embedding function failed: ${shortMessage(messageOf(error))}`);
      }
      if (!Array.isArray(answer))
        throw unavailable(`${provider}: the embedding function returned ${describe(answer)}, not a list of vectors`);
      if (answer.length !== texts.length)
        throw unavailable(
          `${provider}: the embedding function returned ${counted(answer.length, "vector")} for ${counted(texts.length, "text")}`,
        );
      return answer as number[][];
    };
  }
  const timeoutMs = options.timeoutMs ?? EMBED_CALL_TIMEOUT_MS;
  return {
    provider,
    dims,
    embed: async (texts) =>
      texts.length === 0 ? [] : withTimeout(provider, timeoutMs, (signal) => call(texts, signal)),
  };
}

/** `run` within `ms`, else a `unavailable` error naming the provider (see `withDeadline`). */
const withTimeout = <T>(provider: string, ms: number, run: (signal: AbortSignal) => Promise<T>): Promise<T> =>
  withDeadline(ms, () => unavailable(`${provider}: no answer within ${shownDuration(ms)}`), run);

/** A setting from the Worker's env (vars, secrets), else from process.env (langgraph.json `env`). */
function setting(env: EmbeddingEnv, name: "OPENAI_API_KEY" | "OPENAI_BASE_URL"): string | undefined {
  const own = env[name];
  if (typeof own === "string" && own.trim()) return own.trim();
  const fromProcess = typeof process === "undefined" ? undefined : process.env[name];
  return fromProcess?.trim() || undefined;
}

async function openaiEmbed(
  provider: string,
  model: string,
  dims: number,
  env: EmbeddingEnv,
  texts: string[],
  signal: AbortSignal,
): Promise<number[][]> {
  const key = setting(env, "OPENAI_API_KEY");
  if (!key) {
    throw unavailable(
      `${provider}: OPENAI_API_KEY is not set; set it as a secret of the Worker (wrangler secret put OPENAI_API_KEY) or in langgraph.json env`,
    );
  }
  const base = (setting(env, "OPENAI_BASE_URL") ?? DEFAULT_OPENAI_BASE_URL).replace(/\/+$/, "");
  let url: URL;
  try {
    url = new URL(`${base}/embeddings`);
  } catch {
    throw unavailable(`${provider}: OPENAI_BASE_URL is not a URL: ${shortMessage(base)}`);
  }
  // Shown in errors without its query (where a gateway might carry a token).
  const shownUrl = `${url.origin}${url.pathname}`;
  // `dimensions` is accepted by text-embedding-3 and later models only; LangChain's OpenAIEmbeddings
  // sends it when set, and the index's `dims` asks for exactly that many.
  const body = { model, input: texts, ...(model.startsWith("text-embedding-3") ? { dimensions: dims } : {}) };
  const redact = (text: string) => shortMessage(redactKey(text, key));
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
      signal,
    });
    text = await response.text();
  } catch (error) {
    throw unavailable(`${provider}: could not reach ${shownUrl}: ${redact(messageOf(error))}`);
  }
  if (!response.ok) {
    const message = upstreamMessage(text);
    const detail = `${provider}: ${shownUrl} answered ${response.status}${message ? `: ${redact(message)}` : " with no message"}`;
    // The provider refused these texts (too long, empty…): the request's fault, which a retry would not
    // mend (SDKs retry a 503). An unusable key, a quota or the provider's own failure stay a 503.
    throw REFUSED_INPUT.has(response.status) ? invalid(detail) : unavailable(detail);
  }
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw unavailable(`${provider}: ${shownUrl} answered ${response.status} with a body that is not JSON`);
  }
  const data = isObject(answer) ? answer.data : undefined;
  if (!Array.isArray(data)) throw unavailable(`${provider}: ${shownUrl} answered without a "data" list`);
  if (data.length !== texts.length)
    throw unavailable(
      `${provider}: ${shownUrl} answered ${counted(data.length, "embedding")} for ${counted(texts.length, "text")}`,
    );
  // In the order of `index` (the texts' positions); entries without one keep their place.
  const vectors: unknown[] = new Array(texts.length);
  data.forEach((entry, position) => {
    const at = isObject(entry) && entry.index !== undefined ? entry.index : position;
    if (typeof at !== "number" || !Number.isInteger(at) || at < 0 || at >= texts.length || vectors[at])
      throw unavailable(
        `${provider}: ${shownUrl} answered an embedding with index ${JSON.stringify(at)}; expected each of 0 to ${texts.length - 1} once`,
      );
    const embedding = isObject(entry) ? entry.embedding : undefined;
    if (!Array.isArray(embedding))
      throw unavailable(`${provider}: ${shownUrl} answered an entry without an "embedding" list (index ${at})`);
    vectors[at] = embedding;
  });
  return vectors as number[][];
}

async function workersAiEmbed(
  provider: string,
  model: string,
  env: EmbeddingEnv,
  texts: string[],
): Promise<number[][]> {
  const ai = env.AI;
  if (!ai || typeof ai.run !== "function") {
    throw unavailable(
      `${provider}: the Worker has no AI binding; add "ai": {"binding": "AI"} to its wrangler config (the build adds it to a project's generated config)`,
    );
  }
  let answer: unknown;
  try {
    answer = await ai.run(model, { text: texts });
  } catch (error) {
    throw unavailable(`${provider}: Workers AI failed: ${shortMessage(messageOf(error))}`);
  }
  const data = isObject(answer) ? answer.data : undefined;
  if (!Array.isArray(data)) throw unavailable(`${provider}: Workers AI answered without a "data" list`);
  if (data.length !== texts.length)
    throw unavailable(
      `${provider}: Workers AI answered ${counted(data.length, "embedding")} for ${counted(texts.length, "text")}`,
    );
  return data as number[][];
}

/** The message of an OpenAI-style error body (`{"error": {"message"}}` and kin), else the body itself. */
function upstreamMessage(text: string): string {
  try {
    const body: unknown = JSON.parse(text);
    if (isObject(body)) {
      const error = body.error;
      for (const candidate of [isObject(error) ? error.message : error, body.message, body.detail]) {
        if (typeof candidate === "string" && candidate.trim()) return candidate.trim();
      }
    }
  } catch {
    // Not JSON: the text as it came.
  }
  return text.trim();
}

/** `1 text`, `2 texts`. */
const counted = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

function describe(value: unknown): string {
  return value === null ? "null" : typeof value;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : "";
    return `${error.message}${cause}`;
  }
  return String(error);
}

/** The key, and anything shaped like an OpenAI key (an endpoint may echo part of it), masked. */
function redactKey(text: string, key: string): string {
  return text
    .split(key)
    .join("***")
    .replace(/\bsk-[A-Za-z0-9_*.-]{3,}/g, "sk-***");
}

/** An upstream's message cut to EMBED_ERROR_MESSAGE_CHARS, on one line. */
function shortMessage(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > EMBED_ERROR_MESSAGE_CHARS ? `${line.slice(0, EMBED_ERROR_MESSAGE_CHARS)}…` : line;
}
