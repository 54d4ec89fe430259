import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AuthFilter } from "../core/auth-filter.ts";
import { forbidden } from "../core/errors.ts";
import { deployment } from "./index.ts";

/**
 * Custom authentication and authorization from langgraph.json `auth.path`: an `Auth` from
 * @langchain/langgraph-sdk/auth. Its handlers are read from the instance's handler cache, as the
 * official server does. They are the deployment's code, as its graphs are: domain code may run
 * them (an assistant a user's filter hides), `auth/` applies them to requests.
 */

/** The user a request acts as. Custom fields from the handler (roles, tokens) are kept. */
export interface AuthUser {
  identity: string;
  permissions: string[];
  display_name: string;
  is_authenticated: boolean;
  kind?: string;
  [field: string]: unknown;
}

type AuthEvent = {
  event: string;
  resource: string;
  action: string;
  value: unknown;
  user: AuthUser;
  permissions: string[];
};
type Handlers = {
  authenticate?: (request: Request) => unknown;
  callbacks?: Record<string, (event: AuthEvent) => unknown>;
};

const instance = deployment.auth ? deployment.auth.module[deployment.auth.exportName] : undefined;
const handlers: Handlers | undefined =
  instance && typeof instance === "object"
    ? ((instance as Record<string, unknown>)["~handlerCache"] as Handlers)
    : undefined;

/** Whether this deployment replaced API-key auth on the Agent Server routes. */
export const customAuthEnabled = Boolean(handlers?.authenticate);
export const studioAuthDisabled = deployment.auth?.disableStudioAuth ?? false;

export const STUDIO_USER: AuthUser = {
  kind: "StudioUser",
  identity: "langgraph-studio-user",
  display_name: "langgraph-studio-user",
  permissions: [],
  is_authenticated: true,
};

/** An `HTTPException` of the SDK (or anything shaped like it) becomes the API's error. */
function asApiError(error: unknown): HTTPException | undefined {
  if (!(error instanceof Error)) return undefined;
  const { status, headers } = error as Error & { status?: unknown; headers?: unknown };
  if (typeof status !== "number" || status < 400 || status > 599) return undefined;
  // The handler chose an HTTP answer itself (status and headers such as WWW-Authenticate): keep it whole.
  const detail = error.message || "Unauthorized";
  const res = Response.json({ detail }, { status, headers: (headers as Record<string, string> | undefined) ?? {} });
  return new HTTPException(status as ContentfulStatusCode, { message: detail, res });
}

/** Runs the deployment's `authenticate` handler. Throws its HTTPException as the API error. */
export async function authenticateUser(request: Request): Promise<AuthUser> {
  let result: unknown;
  try {
    result = await handlers!.authenticate!(request);
  } catch (error) {
    throw asApiError(error) ?? error;
  }
  if (typeof result === "string" && result)
    return { identity: result, permissions: [], display_name: result, is_authenticated: true };
  if (result && typeof result === "object" && typeof (result as { identity?: unknown }).identity === "string") {
    const user = result as Partial<AuthUser> & { identity: string };
    return {
      ...user,
      identity: user.identity,
      permissions: Array.isArray(user.permissions) ? user.permissions.map(String) : [],
      display_name: typeof user.display_name === "string" ? user.display_name : user.identity,
      is_authenticated: user.is_authenticated ?? true,
    };
  }
  throw new Error(`The auth handler must return an identity string or an object with "identity"; got ${typeof result}`);
}

/**
 * Runs the most specific authorization handler for `resource:action` (then `resource`, `*:action`,
 * `*`). Returns its filter; `undefined` means allowed without one. `false` is a 403. The handler may
 * change `value` (e.g. stamp `metadata.owner`); callers use `value` afterwards.
 */
export async function authorize(
  user: AuthUser,
  event: string,
  value: Record<string, unknown>,
): Promise<AuthFilter | undefined> {
  const callbacks = handlers?.callbacks;
  if (!callbacks) return undefined;
  const [resource, action] = event.split(":");
  const handler = callbacks[event] ?? callbacks[resource] ?? callbacks[`*:${action}`] ?? callbacks["*"];
  if (!handler) return undefined;
  let result: unknown;
  try {
    result = await handler({ event, resource, action, value, user, permissions: user.permissions });
  } catch (error) {
    throw asApiError(error) ?? error;
  }
  if (result === undefined || result === null || result === true) return undefined;
  if (result === false) throw forbidden("Forbidden");
  if (typeof result === "object" && !Array.isArray(result))
    return Object.keys(result).length ? (result as AuthFilter) : undefined;
  throw new Error(
    `Auth handler returned invalid result. Expected filter object, null, undefined or boolean. Got "${typeof result}" instead.`,
  );
}
