/**
 * In-process calls to the platform's own API, for a deployment's custom routes and graphs: the SDK's
 * `new Client()` without an `apiUrl` looks up a fetch and a base URL on global symbols, which the
 * official servers set, and then talks to the server it runs in without a network hop.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { ExecutionContext } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./app-env.ts";

const FETCH = Symbol.for("langgraph_api:fetch");
const URL_KEY = Symbol.for("langgraph_api:url");
/**
 * The caller's credentials, which a loopback request carries when it sets none of its own. They go as
 * one set: a request with its own key must not pick up the caller's workspace (X-Tenant-Id).
 */
const CREDENTIAL_HEADERS = ["x-api-key", "authorization", "cookie"];
const FORWARDED_HEADERS = [...CREDENTIAL_HEADERS, "x-tenant-id"];

interface RequestScope {
  request: Request;
  env: Env;
  ctx: ExecutionContext;
}

type AppFetch = (request: Request, env: Env, ctx: ExecutionContext) => Response | Promise<Response>;

const scope = new AsyncLocalStorage<RequestScope>();

/**
 * Binds the SDK's loopback to `app` and returns the middleware that records each request's bindings
 * and credentials, so a loopback call acts for the request that made it, with its Worker bindings.
 */
export function bindLoopback(app: { fetch: AppFetch }) {
  const global = globalThis as { [FETCH]?: typeof fetch; [URL_KEY]?: string };
  global[FETCH] = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const current = scope.getStore();
    if (!current) {
      // Graph runs execute in the thread's Durable Object, with no request to act for. A 400 (which the
      // SDK does not retry) says so at once.
      return Response.json(
        {
          detail:
            "In-process calls to the platform's API (new Client() without apiUrl) work inside the deployment's http.app routes only; elsewhere pass apiUrl and apiKey",
        },
        { status: 400 },
      );
    }
    const request = new Request(input, init);
    const headers = new Headers(request.headers);
    if (!CREDENTIAL_HEADERS.some((name) => headers.has(name))) {
      for (const name of FORWARDED_HEADERS) {
        const value = current.request.headers.get(name);
        if (value !== null && !headers.has(name)) headers.set(name, value);
      }
    }
    return app.fetch(new Request(request, { headers }), current.env, current.ctx);
  }) as typeof fetch;
  return createMiddleware<AppEnv>(async (c, next) => {
    global[URL_KEY] = new URL(c.req.url).origin;
    await scope.run({ request: c.req.raw, env: c.env, ctx: c.executionCtx }, next);
  });
}
