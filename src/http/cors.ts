import { cors } from "hono/cors";
import { D1_BOOKMARK_HEADER } from "../db/client.ts";
import type { CorsConfig } from "../deployment/config.ts";

/** Headers browsers must be able to read for the SDK to work (run ids, pagination, reconnection, D1 bookmarks). */
const REQUIRED_EXPOSED = [
  "content-location",
  "location",
  "x-pagination-total",
  "x-pagination-next",
  "x-request-id",
  D1_BOOKMARK_HEADER,
];

/** CORS from langgraph.json `http.cors`; without it, any origin may call (as the official JS server). */
export function corsMiddleware(config: CorsConfig | undefined) {
  const exposeHeaders = [...new Set([...(config?.expose_headers ?? []), ...REQUIRED_EXPOSED])];
  if (!config) return cors({ origin: "*", exposeHeaders });
  const origins = config.allow_origins ?? [];
  const pattern = config.allow_origin_regex ? new RegExp(`^(?:${config.allow_origin_regex})$`) : undefined;
  return cors({
    origin: (origin) => {
      if (origins.includes("*")) return config.allow_credentials ? origin : "*";
      if (origins.includes(origin) || pattern?.test(origin)) return origin;
      return null;
    },
    allowMethods: config.allow_methods ?? ["GET", "HEAD", "PUT", "POST", "PATCH", "DELETE", "OPTIONS"],
    allowHeaders: config.allow_headers ?? [],
    credentials: config.allow_credentials ?? false,
    exposeHeaders,
    maxAge: config.max_age,
  });
}
