import { z } from "@hono/zod-openapi";
import { JsonObject } from "../../core/schemas.ts";
import { ERROR_CODES, isChannel } from "./types.ts";

/**
 * Protocol v2 wire schemas, for validation (HTTP and WebSocket alike) and the OpenAPI document; the
 * types of commands, responses and event filters are inferred from them.
 */

const Namespace = z.array(z.string().max(1024)).max(32);

export const CommandSchema = z
  .object({
    id: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    method: z.string().min(1).max(256),
    params: JsonObject.optional(),
  })
  .openapi("ProtocolCommand", {
    description:
      "A command: run.start, input.respond, state.get, agent.getTree (subscription.* belong to the WebSocket)",
  });

export const EventsFilterSchema = z
  .strictObject({
    channels: z
      .array(
        z.string().max(1024).refine(isChannel, {
          message:
            "Unknown channel: use values, updates, messages, tools, custom, custom:<name>, lifecycle, input, tasks or checkpoints",
        }),
      )
      .max(64),
    namespaces: z.array(Namespace).max(64).optional(),
    depth: z.number().int().min(0).max(1024).optional(),
    since: z.number().int().min(0).optional(),
  })
  .openapi("ProtocolEventsFilter");

const Meta = z.object({ thread_id: z.string(), applied_through_seq: z.number().int() });

const SuccessSchema = z.object({
  type: z.literal("success"),
  id: z.number().int(),
  result: z.record(z.string(), z.unknown()),
  meta: Meta.optional(),
});

const ErrorSchema = z.object({
  type: z.literal("error"),
  id: z.number().int().nullable(),
  error: z.enum(ERROR_CODES),
  message: z.string(),
  meta: Meta.optional(),
});

export const ProtocolResponseSchema = z.union([SuccessSchema, ErrorSchema]).openapi("ProtocolResponse");

export type ProtocolCommand = z.infer<typeof CommandSchema>;
/** Which events a connection (an SSE stream, or one WebSocket subscription) receives; `since`: only events after it. */
export type EventFilter = z.infer<typeof EventsFilterSchema>;
export type ResponseMeta = z.infer<typeof Meta>;
export type ProtocolSuccess = z.infer<typeof SuccessSchema>;
export type ProtocolError = z.infer<typeof ErrorSchema>;
export type ProtocolResponse = z.infer<typeof ProtocolResponseSchema>;
