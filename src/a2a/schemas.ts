import { z } from "@hono/zod-openapi";

/** A JSON-RPC 2.0 request, as the A2A endpoint takes it (any `params`: each method checks its own). */
export const RpcRequestSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.unknown().optional(),
  method: z.string(),
  params: z.unknown().optional(),
});

/** What `SendMessage` / `message/send` reads from `params.configuration` (only `false` and `true` count). */
export const SendConfigurationSchema = z.looseObject({
  blocking: z.unknown().optional(),
  returnImmediately: z.unknown().optional(),
});

/** The message a send carries: its parts are read by `messageParts`, whichever dialect sent them. */
export const MessageSchema = z.looseObject({
  contextId: z.unknown().optional(),
  messageId: z.unknown().optional(),
  parts: z.unknown().optional(),
});
