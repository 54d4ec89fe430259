import { createMiddleware } from "hono/factory";
import { badRequest } from "../core/errors.ts";
import { D1_BOOKMARK_HEADER, inRequestSession, isD1Bookmark, RequestSession } from "../db/client.ts";
import type { AppEnv } from "./app-env.ts";

/**
 * Gives each request its D1 session (read replication, see `D1_BOOKMARK_HEADER`): from the bookmark
 * the client sends, else "first-unconstrained". A request whose session ran a query answers with the
 * session's bookmark (a WebSocket upgrade excepted: its response cannot be rebuilt).
 */
export const d1Session = createMiddleware<AppEnv>(async (c, next) => {
  // An empty header is no bookmark (Cloudflare's example sends one when a session has none).
  const sent = c.req.header(D1_BOOKMARK_HEADER)?.trim() || undefined;
  if (sent !== undefined && !isD1Bookmark(sent)) {
    throw badRequest(
      `${D1_BOOKMARK_HEADER} must be a bookmark this server returned, "first-primary" or "first-unconstrained"`,
    );
  }
  const session = new RequestSession(c.env, sent);
  await inRequestSession(session, next);
  const bookmark = session.finish();
  if (bookmark && c.res.status !== 101) c.header(D1_BOOKMARK_HEADER, bookmark);
});
