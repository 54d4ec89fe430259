// The store's embedding providers (src/store/semantic/providers.ts), pure: an OpenAI-compatible
// `/v1/embeddings` stand-in served on loopback, a stand-in Workers AI binding, and user functions. Each
// checks the requests the provider makes, the batching of a put (through embedItemTexts) and every
// failure: a 503 naming the provider and what happened, never the key; a vector of other dims, a 422.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type DomainError, isDomainError } from "../../src/core/errors.ts";
import { EMBED_BATCH_TEXTS, EMBED_CALL_TIMEOUT_MS } from "../../src/core/limits.ts";
import type { StoreEmbedEntry, StoreManifest } from "../../src/deployment/manifest.ts";
import { type Embedder, embedItemTexts, embedQuery } from "../../src/store/semantic/embed.ts";
import {
  DEFAULT_OPENAI_BASE_URL,
  type EmbeddingEnv,
  embedderFor,
  type WorkersAiBinding,
} from "../../src/store/semantic/providers.ts";

const DIMS = 3;
const KEY = "sk-test-0123456789abcdefSECRET";
const MODEL = "text-embedding-3-small";
const PROVIDER = `openai:${MODEL}`;

/** A text's vector in every stand-in: its length, its first character's code, 1. */
const vectorOf = (text: string) => [text.length, text.charCodeAt(0) || 0, 1];

function storeWith(embed: StoreEmbedEntry, dims = DIMS): StoreManifest {
  return { index: { embed, dims, fields: ["$"] }, ttl: null };
}
const openaiStore = (model = MODEL, dims = DIMS) =>
  storeWith({ kind: "openai", model, source: `openai:${model}` }, dims);

function embedderOf(store: StoreManifest, env: EmbeddingEnv, timeoutMs?: number): Embedder {
  const embedder = embedderFor(store, env, { timeoutMs });
  if (!embedder) throw new Error("expected an embedder");
  return embedder;
}

/** The error `promise` rejects with, which must be a DomainError. */
async function failure(promise: Promise<unknown>): Promise<DomainError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isDomainError(error)).toBe(true);
  return error as DomainError;
}

/** Items as embedItemTexts takes them: one text each, under field "$". */
const items = (texts: string[]) => texts.map((text, i) => ({ item: i, texts: [{ field: "$", text }] }));

// --- The OpenAI-compatible stand-in ------------------------------------------------------------------

interface Call {
  method: string;
  url: string;
  authorization: string | undefined;
  body: { model?: string; input?: string[]; dimensions?: number; [key: string]: unknown };
}

type Answer = (call: Call, res: ServerResponse) => void;

/** Answers every text with its vector, in reverse order (each entry carries its `index`). */
const embeddings: Answer = (call, res) => {
  const data = (call.body.input ?? []).map((text, index) => ({
    object: "embedding",
    index,
    embedding: vectorOf(text),
  }));
  json(res, 200, { object: "list", data: data.reverse(), model: call.body.model });
};

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
}

let server: Server;
let base: string;
let answer: Answer = embeddings;
const calls: Call[] = [];

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const call: Call = {
      method: req.method ?? "",
      url: req.url ?? "",
      authorization: req.headers.authorization,
      body: JSON.parse(await readBody(req)),
    };
    calls.push(call);
    answer(call, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

afterEach(() => {
  calls.length = 0;
  answer = embeddings;
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

const env = (): EmbeddingEnv => ({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: base });

describe("embedderFor", () => {
  it("is null without an index, and names the provider and dims otherwise", () => {
    expect(embedderFor({ index: null, ttl: null }, env())).toBeNull();
    const embedder = embedderOf(openaiStore(), env());
    expect(embedder.provider).toBe(PROVIDER);
    expect(embedder.dims).toBe(DIMS);
  });

  it("makes no call for no texts", async () => {
    expect(await embedderOf(openaiStore(), env()).embed([])).toEqual([]);
    expect(calls).toHaveLength(0);
  });
});

describe("openai:<model> against an OpenAI-compatible endpoint", () => {
  it("POSTs the model and texts to <base>/embeddings with the key, and orders vectors by index", async () => {
    // A trailing slash on the base URL is not doubled.
    const embedder = embedderOf(openaiStore(), { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${base}/` });
    expect(await embedder.embed(["a", "bb", "ccc"])).toEqual([vectorOf("a"), vectorOf("bb"), vectorOf("ccc")]);
    expect(calls).toEqual([
      {
        method: "POST",
        url: "/v1/embeddings",
        authorization: `Bearer ${KEY}`,
        body: { model: MODEL, input: ["a", "bb", "ccc"], dimensions: DIMS },
      },
    ]);
  });

  it("asks for `dimensions` only of text-embedding-3 models (others refuse it)", async () => {
    await embedderOf(openaiStore("text-embedding-ada-002"), env()).embed(["a"]);
    await embedderOf(openaiStore("nomic-embed-text"), env()).embed(["a"]);
    await embedderOf(openaiStore("text-embedding-3-large"), env()).embed(["a"]);
    expect(calls.map((call) => call.body)).toEqual([
      { model: "text-embedding-ada-002", input: ["a"] },
      { model: "nomic-embed-text", input: ["a"] },
      { model: "text-embedding-3-large", input: ["a"], dimensions: DIMS },
    ]);
  });

  it("embeds a put's texts in batches of EMBED_BATCH_TEXTS, each distinct text once", async () => {
    const distinct = Array.from({ length: 200 }, (_, i) => `text ${i}`);
    // Every text twice: 400 items, 200 distinct texts.
    const vectors = await embedItemTexts(items([...distinct, ...distinct]), embedderOf(openaiStore(), env()));
    expect(calls.map((call) => call.body.input?.length)).toEqual([EMBED_BATCH_TEXTS, EMBED_BATCH_TEXTS, 8]);
    expect(calls.flatMap((call) => call.body.input)).toEqual(distinct);
    expect(vectors).toHaveLength(400);
    for (const { item, vector } of vectors) expect([...vector]).toEqual(vectorOf(distinct[item % 200]));
  });

  it("embeds a search's query in one call", async () => {
    const vector = await embedQuery("hello", embedderOf(openaiStore(), env()));
    expect([...vector]).toEqual(vectorOf("hello"));
    expect(calls.map((call) => call.body.input)).toEqual([["hello"]]);
  });

  it("reads the key and base URL from process.env (langgraph.json env) when the Worker's env has none", async () => {
    vi.stubEnv("OPENAI_API_KEY", "sk-from-process-env");
    vi.stubEnv("OPENAI_BASE_URL", base);
    await embedderOf(openaiStore(), {}).embed(["a"]);
    // The Worker's own vars and secrets come first.
    await embedderOf(openaiStore(), { OPENAI_API_KEY: KEY }).embed(["b"]);
    expect(calls.map((call) => call.authorization)).toEqual(["Bearer sk-from-process-env", `Bearer ${KEY}`]);
  });

  it("calls https://api.openai.com/v1/embeddings when no base URL is set", async () => {
    vi.stubEnv("OPENAI_BASE_URL", undefined);
    const urls: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      urls.push(String(input));
      return Response.json({ data: [{ index: 0, embedding: [1, 2, 3] }] });
    });
    expect(await embedderOf(openaiStore(), { OPENAI_API_KEY: KEY }).embed(["a"])).toEqual([[1, 2, 3]]);
    expect(DEFAULT_OPENAI_BASE_URL).toBe("https://api.openai.com/v1");
    expect(urls).toEqual(["https://api.openai.com/v1/embeddings"]);
  });

  it("without a key: a 503 naming the provider and OPENAI_API_KEY, and no call", async () => {
    vi.stubEnv("OPENAI_API_KEY", undefined);
    const error = await failure(embedderOf(openaiStore(), { OPENAI_BASE_URL: base }).embed(["a"]));
    expect(error.kind).toBe("unavailable");
    expect(error.detail).toBe(
      `${PROVIDER}: OPENAI_API_KEY is not set; set it as a secret of the Worker (wrangler secret put OPENAI_API_KEY) or in langgraph.json env`,
    );
    expect(calls).toHaveLength(0);
  });

  it("a base URL that is not one: a 503 saying so", async () => {
    const error = await failure(
      embedderOf(openaiStore(), { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: "nope" }).embed(["a"]),
    );
    expect(error.kind).toBe("unavailable");
    expect(error.detail).toBe(`${PROVIDER}: OPENAI_BASE_URL is not a URL: nope`);
  });

  it("an upstream 401: a 503 naming the provider, the status and the upstream's message, never the key", async () => {
    answer = (_call, res) =>
      json(res, 401, {
        error: {
          message: `Incorrect API key provided: ${KEY}. Find yours at platform.openai.com.`,
          code: "invalid_api_key",
        },
      });
    const error = await failure(embedderOf(openaiStore(), env()).embed(["a"]));
    expect(error.kind).toBe("unavailable");
    expect(error.detail).toBe(
      `${PROVIDER}: ${base}/embeddings answered 401: Incorrect API key provided: ***. Find yours at platform.openai.com.`,
    );
    expect(String(error.detail)).not.toContain("0123456789");
  });

  it("an upstream 400, 413 or 422 refusing the texts: a 422 (the request's fault, not to retry), naming the provider", async () => {
    for (const status of [400, 413, 422]) {
      answer = (_call, res) =>
        json(res, status, { error: { message: "This model's maximum context length is 8192 tokens" } });
      const error = await failure(embedderOf(openaiStore(), env()).embed(["a"]));
      expect(error.kind, String(status)).toBe("invalid");
      expect(error.detail).toBe(
        `${PROVIDER}: ${base}/embeddings answered ${status}: This model's maximum context length is 8192 tokens`,
      );
    }
    answer = (_call, res) => json(res, 429, { error: { message: "Rate limit reached" } });
    expect((await failure(embedderOf(openaiStore(), env()).embed(["a"]))).kind).toBe("unavailable");
  });

  it("masks a partial key an endpoint echoes (sk-...)", async () => {
    answer = (_call, res) => json(res, 401, { error: { message: "Incorrect API key provided: sk-test-***CRET." } });
    const error = await failure(embedderOf(openaiStore(), env()).embed(["a"]));
    expect(error.detail).toBe(`${PROVIDER}: ${base}/embeddings answered 401: Incorrect API key provided: sk-***`);
  });

  it("an upstream 500 with a long text body: a 503 with the status and the body cut to 300 characters", async () => {
    answer = (_call, res) => res.writeHead(500, { "Content-Type": "text/plain" }).end(`${"x".repeat(1000)}`);
    const error = await failure(embedderOf(openaiStore(), env()).embed(["a"]));
    expect(error.kind).toBe("unavailable");
    expect(error.detail).toBe(`${PROVIDER}: ${base}/embeddings answered 500: ${"x".repeat(300)}…`);
  });

  it("an upstream error without a body: the status alone", async () => {
    answer = (_call, res) => res.writeHead(502).end();
    const error = await failure(embedderOf(openaiStore(), env()).embed(["a"]));
    expect(error.detail).toBe(`${PROVIDER}: ${base}/embeddings answered 502 with no message`);
  });

  it("a body that is not JSON, no data list, too few embeddings, a bad index, an entry without a vector: a 503 saying which", async () => {
    const cases: [Answer, string][] = [
      [(_c, res) => res.writeHead(200).end("<html>"), "answered 200 with a body that is not JSON"],
      [(_c, res) => json(res, 200, { object: "list" }), 'answered without a "data" list'],
      [(_c, res) => json(res, 200, { data: [{ index: 0, embedding: [1, 2, 3] }] }), "answered 1 embedding for 2 texts"],
      [
        (_c, res) =>
          json(res, 200, {
            data: [
              { index: 0, embedding: [1, 2, 3] },
              { index: 0, embedding: [1, 2, 3] },
            ],
          }),
        "answered an embedding with index 0; expected each of 0 to 1 once",
      ],
      [
        (_c, res) => json(res, 200, { data: [{ index: 1, embedding: [1, 2, 3] }, { index: 0 }] }),
        'answered an entry without an "embedding" list (index 0)',
      ],
    ];
    for (const [respond, what] of cases) {
      answer = respond;
      const error = await failure(embedderOf(openaiStore(), env()).embed(["a", "b"]));
      expect(error.kind).toBe("unavailable");
      expect(error.detail).toBe(`${PROVIDER}: ${base}/embeddings ${what}`);
    }
  });

  it("vectors of other dims: a 422 naming both numbers, for a put and for a search", async () => {
    answer = (call, res) =>
      json(res, 200, { data: (call.body.input ?? []).map((_, index) => ({ index, embedding: [1, 2, 3, 4] })) });
    const embedder = embedderOf(openaiStore(), env());
    for (const pending of [embedItemTexts(items(["a"]), embedder), embedQuery("a", embedder)]) {
      const error = await failure(pending);
      expect(error.kind).toBe("invalid");
      expect(error.detail).toBe(`${PROVIDER} returned a vector of 4 dimensions; the index has dims 3`);
    }
  });

  it("an endpoint that never answers: a 503 once the call's time is up", async () => {
    answer = () => {}; // holds the request open
    const error = await failure(embedderOf(openaiStore(), env(), 50).embed(["a"]));
    expect(error.kind).toBe("unavailable");
    expect(error.detail).toBe(`${PROVIDER}: no answer within 50 ms`);
    expect(calls).toHaveLength(1);
    expect(EMBED_CALL_TIMEOUT_MS).toBe(30_000);
  });

  it("an endpoint that cannot be reached: a 503 naming the URL", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/v1`;
    await new Promise((resolve) => closed.close(resolve));
    const error = await failure(embedderOf(openaiStore(), { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: url }).embed(["a"]));
    expect(error.kind).toBe("unavailable");
    expect(String(error.detail).startsWith(`${PROVIDER}: could not reach ${url}/embeddings: `)).toBe(true);
    expect(String(error.detail)).toContain("ECONNREFUSED");
    expect(String(error.detail)).not.toContain(KEY);
  });
});

// --- Workers AI through the AI binding ---------------------------------------------------------------

const CF_MODEL = "@cf/baai/bge-base-en-v1.5";
const CF_PROVIDER = `cloudflare:${CF_MODEL}`;
const cloudflareStore = () => storeWith({ kind: "cloudflare", model: CF_MODEL, source: CF_PROVIDER });

/** A stand-in `AI` binding: records each call and answers as the text embedding models do. */
function standInAi(run?: WorkersAiBinding["run"]) {
  const aiCalls: { model: string; input: { text: string[] } }[] = [];
  const ai: WorkersAiBinding = {
    async run(model, input) {
      aiCalls.push({ model, input });
      if (run) return run(model, input);
      return { shape: [input.text.length, DIMS], data: input.text.map(vectorOf), pooling: "mean" };
    },
  };
  return { ai, aiCalls };
}

describe("cloudflare:<model> through the AI binding", () => {
  it("runs the model on each batch of texts", async () => {
    const { ai, aiCalls } = standInAi();
    const texts = Array.from({ length: 100 }, (_, i) => `t${i}`);
    const vectors = await embedItemTexts(items(texts), embedderOf(cloudflareStore(), { AI: ai }));
    expect(aiCalls.map((call) => call.model)).toEqual([CF_MODEL, CF_MODEL]);
    expect(aiCalls.map((call) => call.input.text)).toEqual([texts.slice(0, EMBED_BATCH_TEXTS), texts.slice(96)]);
    expect(vectors.map(({ vector }) => [...vector])).toEqual(texts.map(vectorOf));
  });

  it("without the binding: a 503 saying how to add it", async () => {
    const error = await failure(embedderOf(cloudflareStore(), {}).embed(["a"]));
    expect(error.kind).toBe("unavailable");
    expect(error.detail).toBe(
      `${CF_PROVIDER}: the Worker has no AI binding; add "ai": {"binding": "AI"} to its wrangler config (the build adds it to a project's generated config)`,
    );
  });

  it("a failing run, an answer without data, too few vectors: a 503 saying which", async () => {
    const cases: [WorkersAiBinding["run"], string][] = [
      [
        async () => {
          throw new Error("3010: Invalid or incomplete input for the model");
        },
        "Workers AI failed: 3010: Invalid or incomplete input for the model",
      ],
      [async () => ({ shape: [0, 0] }), 'Workers AI answered without a "data" list'],
      [async () => ({ shape: [1, 3], data: [[1, 2, 3]] }), "Workers AI answered 1 embedding for 2 texts"],
    ];
    for (const [run, what] of cases) {
      const error = await failure(embedderOf(cloudflareStore(), { AI: standInAi(run).ai }).embed(["a", "b"]));
      expect(error.kind).toBe("unavailable");
      expect(error.detail).toBe(`${CF_PROVIDER}: ${what}`);
    }
  });

  it("vectors of other dims: a 422 naming both numbers", async () => {
    const { ai } = standInAi(async (_model, input) => ({
      shape: [1, 768],
      data: input.text.map(() => new Array(768).fill(0)),
    }));
    const error = await failure(embedQuery("a", embedderOf(cloudflareStore(), { AI: ai })));
    expect(error.kind).toBe("invalid");
    expect(error.detail).toBe(`${CF_PROVIDER} returned a vector of 768 dimensions; the index has dims 3`);
  });

  it("a run that never ends: a 503 once the call's time is up", async () => {
    const { ai } = standInAi(() => new Promise(() => {}));
    const error = await failure(embedderOf(cloudflareStore(), { AI: ai }, 20).embed(["a"]));
    expect(error.detail).toBe(`${CF_PROVIDER}: no answer within 20 ms`);
  });
});

// --- The deployment's own function -------------------------------------------------------------------

const FN_SOURCE = "./embed.ts:embed";
const functionStore = (embed: unknown) =>
  storeWith({ kind: "function", module: { embed }, exportName: "embed", source: FN_SOURCE });

describe("a function of the deployment", () => {
  it("sync or async, gets each batch in one call", async () => {
    for (const make of [
      (fn: (t: string[]) => number[][]) => fn,
      (fn: (t: string[]) => number[][]) => async (t: string[]) => fn(t),
    ]) {
      const seen: string[][] = [];
      const embedder = embedderOf(
        functionStore(
          make((texts) => {
            seen.push(texts);
            return texts.map(vectorOf);
          }),
        ),
        {},
      );
      expect(embedder.provider).toBe(FN_SOURCE);
      const texts = Array.from({ length: 97 }, (_, i) => `f${i}`);
      const vectors = await embedItemTexts(items(texts), embedder);
      expect(seen.map((batch) => batch.length)).toEqual([EMBED_BATCH_TEXTS, 1]);
      expect(vectors.map(({ vector }) => [...vector])).toEqual(texts.map(vectorOf));
    }
  });

  it("a throw, a sync throw, an answer that is no list, too few vectors: a 503 naming the function", async () => {
    const cases: [unknown, string][] = [
      [
        async () => {
          throw new Error("model not loaded");
        },
        "the embedding function failed: model not loaded",
      ],
      [
        () => {
          throw new TypeError("bad input");
        },
        "the embedding function failed: bad input",
      ],
      [() => ({ vectors: [] }), "the embedding function returned object, not a list of vectors"],
      [() => [[1, 2, 3]], "the embedding function returned 1 vector for 2 texts"],
    ];
    for (const [fn, what] of cases) {
      const error = await failure(embedderOf(functionStore(fn), {}).embed(["a", "b"]));
      expect(error.kind).toBe("unavailable");
      expect(error.detail).toBe(`${FN_SOURCE}: ${what}`);
    }
  });

  it("vectors of other dims: a 422 naming both numbers", async () => {
    const error = await failure(
      embedItemTexts(
        items(["a"]),
        embedderOf(
          functionStore(() => [[1, 2]]),
          {},
        ),
      ),
    );
    expect(error.kind).toBe("invalid");
    expect(error.detail).toBe(`${FN_SOURCE} returned a vector of 2 dimensions; the index has dims 3`);
  });

  it("a function that never resolves: a 503 once the call's time is up", async () => {
    const error = await failure(
      embedderOf(
        functionStore(() => new Promise(() => {})),
        {},
        20,
      ).embed(["a"]),
    );
    expect(error.detail).toBe(`${FN_SOURCE}: no answer within 20 ms`);
  });
});
