import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { BaseChatModel, type BaseChatModelCallOptions } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { messageText } from "./message-text.ts";

export interface ScriptedChatModelFields {
  /** Name of the tool to call on a user's turn. */
  toolName: string;
  /** The tool call's arguments for the user's text (default `{query: text}`). */
  toolArgs?: (text: string) => Record<string, unknown>;
  /** The reply streamed once the tool has answered (default `Here is what I found: <result>`). */
  reply?: (toolResult: string) => string;
  /** Milliseconds between streamed tokens. */
  tokenDelayMs?: number;
}

/**
 * A deterministic chat model with no network: on a user's turn it calls `toolName` with the user's
 * text as `query` (or `toolArgs(text)`); once the tool has answered it streams a reply quoting the tool
 * result, word by word. The user's text is read from string or content-block messages alike.
 * It lets the example agent show tool calls and token streaming without a real LLM.
 */
export class ScriptedChatModel extends BaseChatModel<BaseChatModelCallOptions, AIMessageChunk> {
  readonly toolName: string;
  readonly tokenDelayMs: number;
  readonly toolArgs: (text: string) => Record<string, unknown>;
  readonly reply: (toolResult: string) => string;

  constructor(fields: ScriptedChatModelFields) {
    super({});
    this.toolName = fields.toolName;
    this.tokenDelayMs = fields.tokenDelayMs ?? 0;
    this.toolArgs = fields.toolArgs ?? ((text) => ({ query: text }));
    this.reply = fields.reply ?? ((result) => `Here is what I found: ${result}`);
  }

  _llmType(): string {
    return "scripted";
  }

  override bindTools(_tools: StructuredToolInterface[]) {
    // The script already knows its one tool; binding only has to keep the model usable in a chain.
    return this;
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const id = `run-${crypto.randomUUID()}`;
    const last = messages.at(-1);
    if (last && ToolMessage.isInstance(last)) {
      const words = this.reply(messageText(last)).split(/(?<= )/);
      for (const word of words) {
        if (options.signal?.aborted) return;
        if (this.tokenDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.tokenDelayMs));
        const chunk = new ChatGenerationChunk({ text: word, message: new AIMessageChunk({ id, content: word }) });
        yield chunk;
        await runManager?.handleLLMNewToken(word, undefined, undefined, undefined, undefined, { chunk });
      }
      return;
    }
    const lastHuman = messages.findLast((message) => HumanMessage.isInstance(message));
    const args = this.toolArgs(messageText(lastHuman));
    const chunk = new ChatGenerationChunk({
      text: "",
      message: new AIMessageChunk({
        id,
        content: "",
        tool_call_chunks: [
          {
            name: this.toolName,
            args: JSON.stringify(args),
            id: `call_${crypto.randomUUID().slice(0, 8)}`,
            index: 0,
            type: "tool_call_chunk",
          },
        ],
      }),
    });
    yield chunk;
    await runManager?.handleLLMNewToken("", undefined, undefined, undefined, undefined, { chunk });
  }

  async _generate(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    let merged: ChatGenerationChunk | undefined;
    for await (const chunk of this._streamResponseChunks(messages, options, runManager)) {
      merged = merged ? merged.concat(chunk) : chunk;
    }
    const message = (merged?.message as AIMessageChunk | undefined) ?? new AIMessageChunk({ content: "" });
    return {
      generations: [
        {
          text: merged?.text ?? "",
          message: new AIMessage({ id: message.id, content: message.content, tool_calls: message.tool_calls }),
        },
      ],
    };
  }
}
