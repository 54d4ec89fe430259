import { OpenAPIHono } from "@hono/zod-openapi";
import { invalid, validationIssues } from "../core/errors.ts";
import type { AppEnv } from "./app-env.ts";

/** Path-parameter targets are called "path" in FastAPI-style locations. */
const TARGET_NAMES: Record<string, string> = { param: "path", json: "body" };

/**
 * Every route module builds its routes on one of these, so that invalid bodies, queries and path
 * parameters all answer 422 with field-level detail.
 */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        throw invalid(validationIssues(result.error, TARGET_NAMES[result.target] ?? result.target));
      }
    },
  });
}

export type Router = ReturnType<typeof createRouter>;
