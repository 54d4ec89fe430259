// A local stand-in for an OpenAI-compatible API, on loopback, so the tests run offline and free: point
// OPENAI_BASE_URL at `baseUrl` and the real ChatOpenAI / OpenAIEmbeddings talk to it unchanged.
//   POST /v1/chat/completions  answers what `reply` scripts, streamed as SSE chunks when asked
//                              (`stream: true`): the text a few characters at a time, the tool calls'
//                              arguments in pieces, and the usage in a last chunk when
//                              `stream_options.include_usage` is set, as OpenAI does.
//   POST /v1/embeddings        answers vectors from a tiny model of meaning (see `meaningVector`).
//   POST /v1/messages          the same script as Anthropic's Messages API (ANTHROPIC_BASE_URL =
//                              `anthropicUrl`), streamed as its SSE events when asked.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A chat message as the OpenAI API carries it. */
export interface ChatMessage {
  role: string;
  content: string | { type: string; text?: string }[] | null;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** One chat completions request, as received. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
}

/** What the model answers: text, tool calls, or both. */
export interface ScriptedReply {
  content?: string;
  toolCalls?: { name: string; args: Record<string, unknown> }[];
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface OpenAIStandIn {
  /** The base URL to configure (`OPENAI_BASE_URL`), ending in /v1. */
  baseUrl: string;
  /** The base URL for Anthropic's API (`ANTHROPIC_BASE_URL`). */
  anthropicUrl: string;
  /**
   * Every chat call: its body (an Anthropic one as the OpenAI shape `reply` reads), its key (the
   * Authorization header, or Anthropic's x-api-key) and the usage answered.
   */
  chats: { request: ChatRequest; authorization: string | undefined; usage: Usage; api: "openai" | "anthropic" }[];
  /** Every embeddings call: its model and texts. */
  embeddings: { model: string; input: string[] }[];
  close(): Promise<void>;
}

/** The text of a message's content (a string, or a list of text parts). */
export function textOf(content: ChatMessage["content"]): string {
  if (typeof content === "string") return content;
  return (content ?? []).map((part) => part.text ?? "").join("");
}

/** Words that mean the same thing here: each group is one axis of the vector. */
const CONCEPTS: string[][] = [
  ["ramen", "sushi", "noodles", "spicy", "cook", "cooking", "dinner", "eat", "food", "hungry", "lunch", "recipe"],
  ["dog", "cat", "pet", "rex", "walk", "walks", "puppy", "vet"],
  ["nurse", "job", "work", "works", "office", "shift", "shifts", "hospital"],
];

/** A text's vector: its concepts on the first axes, twice as strong, and its other words hashed beyond them. */
export function meaningVector(text: string, dims: number): number[] {
  const vector = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const concept = CONCEPTS.findIndex((words) => words.includes(word));
    if (concept >= 0) vector[concept] += 2;
    else {
      let hash = 0x811c9dc5;
      for (let i = 0; i < word.length; i++) hash = Math.imul(hash ^ word.charCodeAt(i), 0x01000193) >>> 0;
      vector[CONCEPTS.length + (hash % (dims - CONCEPTS.length))] += 1;
    }
  }
  return vector;
}

/** Tokens, as this stand-in counts them: words and punctuation. */
const countTokens = (text: string): number => text.match(/\w+|[^\s\w]/g)?.length ?? 0;

/** The text in pieces of at most 4 characters: enough pieces to see tokens stream. */
const pieces = (text: string): string[] => text.match(/[\s\S]{1,4}/g) ?? [];

/** An Anthropic Messages request. */
interface AnthropicRequest {
  model: string;
  system?: string | { type: string; text?: string }[];
  messages: { role: string; content: string | AnthropicBlock[] }[];
  tools?: { name: string; description?: string; input_schema?: unknown }[];
  stream?: boolean;
}
type AnthropicBlock = {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: string | { type: string; text?: string }[];
};

/** An Anthropic request as the OpenAI shape `reply` reads: tool results become "tool" messages. */
function asChatRequest(body: AnthropicRequest): ChatRequest {
  const messages: ChatMessage[] = [];
  if (body.system) messages.push({ role: "system", content: textOf(body.system) });
  for (const message of body.messages) {
    if (typeof message.content === "string") {
      messages.push({ role: message.role, content: message.content });
      continue;
    }
    const text = message.content.filter((block) => block.type === "text");
    if (text.length) messages.push({ role: message.role, content: text.map((block) => block.text ?? "").join("") });
    for (const block of message.content.filter((b) => b.type === "tool_result")) {
      messages.push({ role: "tool", content: textOf(block.content ?? ""), tool_call_id: block.tool_use_id });
    }
  }
  return {
    model: body.model,
    messages,
    tools: body.tools?.map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.input_schema },
    })),
    stream: body.stream,
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => resolve(body));
    request.on("error", reject);
  });
}

function sendJson(response: ServerResponse, status: number, json: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(json));
}

/**
 * Starts the stand-in. `reply` decides each chat answer from the request (e.g. a tool call first, then
 * text once the tool's result is in the messages).
 */
export async function startOpenAIStandIn(reply: (request: ChatRequest) => ScriptedReply): Promise<OpenAIStandIn> {
  const chats: OpenAIStandIn["chats"] = [];
  const embeddings: OpenAIStandIn["embeddings"] = [];
  let calls = 0;

  function chat(request: ChatRequest, authorization: string | undefined, response: ServerResponse): void {
    const answer = reply(request);
    const id = `chatcmpl-${++calls}`;
    const created = Math.floor(Date.now() / 1000);
    const toolCalls = (answer.toolCalls ?? []).map((call, index) => ({
      id: `call_${calls}_${index}`,
      type: "function" as const,
      function: { name: call.name, arguments: JSON.stringify(call.args) },
    }));
    const content = answer.content ?? "";
    const prompt = request.messages.reduce((sum, message) => sum + countTokens(textOf(message.content)), 0);
    const completion = countTokens(content) + toolCalls.reduce((sum, c) => sum + countTokens(c.function.arguments), 0);
    const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    chats.push({ request, authorization, usage, api: "openai" });
    const finish = toolCalls.length ? "tool_calls" : "stop";

    if (!request.stream) {
      sendJson(response, 200, {
        id,
        object: "chat.completion",
        created,
        model: request.model,
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: content || null,
              ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
            },
            finish_reason: finish,
          },
        ],
        usage,
      });
      return;
    }
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const send = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      response.write(
        `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: request.model, choices, ...extra })}\n\n`,
      );
    const delta = (value: Record<string, unknown>, finishReason: string | null = null) =>
      send([{ index: 0, delta: value, finish_reason: finishReason }]);
    delta({ role: "assistant", content: "" });
    for (const piece of pieces(content)) delta({ content: piece });
    toolCalls.forEach((call, index) => {
      delta({
        tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }],
      });
      for (const piece of pieces(call.function.arguments))
        delta({ tool_calls: [{ index, function: { arguments: piece } }] });
    });
    delta({}, finish);
    if (request.stream_options?.include_usage) send([], { usage });
    response.end("data: [DONE]\n\n");
  }

  function anthropic(body: AnthropicRequest, apiKey: string | undefined, response: ServerResponse): void {
    const request = asChatRequest(body);
    const answer = reply(request);
    const id = `msg_${++calls}`;
    const toolUses = (answer.toolCalls ?? []).map((call, index) => ({
      type: "tool_use",
      id: `toolu_${calls}_${index}`,
      name: call.name,
      input: call.args,
    }));
    const content = answer.content ?? "";
    const prompt = request.messages.reduce((sum, message) => sum + countTokens(textOf(message.content)), 0);
    const completion =
      countTokens(content) + toolUses.reduce((sum, use) => sum + countTokens(JSON.stringify(use.input)), 0);
    chats.push({
      request,
      authorization: apiKey,
      usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
      api: "anthropic",
    });
    const stop = toolUses.length ? "tool_use" : "end_turn";
    const blocks = [...(content ? [{ type: "text", text: content }] : []), ...toolUses];
    if (!body.stream) {
      sendJson(response, 200, {
        id,
        type: "message",
        role: "assistant",
        model: body.model,
        content: blocks,
        stop_reason: stop,
        stop_sequence: null,
        usage: { input_tokens: prompt, output_tokens: completion },
      });
      return;
    }
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const send = (event: Record<string, unknown> & { type: string }) =>
      response.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    send({
      type: "message_start",
      message: {
        id,
        type: "message",
        role: "assistant",
        model: body.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: prompt, output_tokens: 1 },
      },
    });
    blocks.forEach((block, index) => {
      if (block.type === "text") {
        send({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
        for (const piece of pieces(content)) {
          send({ type: "content_block_delta", index, delta: { type: "text_delta", text: piece } });
        }
      } else {
        const use = block as (typeof toolUses)[number];
        send({ type: "content_block_start", index, content_block: { ...use, input: {} } });
        for (const piece of pieces(JSON.stringify(use.input))) {
          send({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } });
        }
      }
      send({ type: "content_block_stop", index });
    });
    send({
      type: "message_delta",
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: completion },
    });
    send({ type: "message_stop" });
    response.end();
  }

  const server: Server = createServer(async (request, response) => {
    try {
      const body = await readBody(request);
      if (request.method === "POST" && request.url === "/v1/chat/completions") {
        chat(JSON.parse(body) as ChatRequest, request.headers.authorization, response);
        return;
      }
      if (request.method === "POST" && request.url?.startsWith("/v1/messages")) {
        const apiKey = request.headers["x-api-key"];
        anthropic(JSON.parse(body) as AnthropicRequest, Array.isArray(apiKey) ? apiKey[0] : apiKey, response);
        return;
      }
      if (request.method === "POST" && request.url === "/v1/embeddings") {
        const parsed = JSON.parse(body) as { model: string; input: string | string[]; dimensions?: number };
        // embedQuery sends one string, embedDocuments a list.
        const input = Array.isArray(parsed.input) ? parsed.input : [parsed.input];
        embeddings.push({ model: parsed.model, input });
        sendJson(response, 200, {
          object: "list",
          model: parsed.model,
          data: input.map((text, index) => ({
            object: "embedding",
            index,
            embedding: meaningVector(text, parsed.dimensions ?? 1536),
          })),
          usage: { prompt_tokens: input.length, total_tokens: input.length },
        });
        return;
      }
      sendJson(response, 404, { error: { message: `no route ${request.method} ${request.url}` } });
    } catch (error) {
      // A failing script answers an error the client reports, rather than a request left hanging.
      if (!response.headersSent) sendJson(response, 500, { error: { message: String(error), type: "server_error" } });
      else response.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    anthropicUrl: `http://127.0.0.1:${port}`,
    chats,
    embeddings,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
