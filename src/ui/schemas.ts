import { z } from "@hono/zod-openapi";
import { MAX_ID_LENGTH, MAX_NAME_LENGTH } from "../core/limits.ts";

export const UiComponentRequestSchema = z
  .object({
    name: z.string().max(MAX_NAME_LENGTH).describe("The component name, a key of the UI module's default export"),
    props: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("Accepted and unused: the component gets its props from the UI message, in the browser"),
  })
  .openapi("UiComponentRequest");

export const UiGraphParams = z.object({ graph_id: z.string().max(MAX_ID_LENGTH) });
export const UiAssetParams = UiGraphParams.extend({ file: z.string().max(MAX_ID_LENGTH) });
