import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";

/**
 * Demo users, by bearer token. A real deployment would verify a JWT or ask its identity provider;
 * `github_token` stands for a secret the handler fetches for the user's graphs to use.
 */
const USERS: Record<string, { identity: string; display_name: string; permissions: string[]; github_token: string }> = {
  "token-alice": {
    identity: "alice",
    display_name: "Alice",
    permissions: ["threads:write"],
    github_token: "ghp_alice_secret",
  },
  "token-bob": { identity: "bob", display_name: "Bob", permissions: [], github_token: "ghp_bob_secret" },
};

export const auth = new Auth()
  .authenticate(async (request: Request) => {
    const token = request.headers.get("authorization")?.match(/^Bearer\s+(.+)$/i)?.[1];
    if (!token) throw new HTTPException(401, { message: "Missing bearer token: send Authorization: Bearer <token>" });
    const user = USERS[token];
    if (!user) throw new HTTPException(401, { message: "Invalid bearer token" });
    return user;
  })
  // Threads, runs, assistants and crons: stamp the owner on what a user creates or changes, and let
  // each user see only what they own.
  .on("*", ({ value, user }) => {
    const resource = value as { metadata?: Record<string, unknown> };
    if (resource && typeof resource === "object" && "metadata" in resource) {
      resource.metadata = { ...(resource.metadata ?? {}), owner: user.identity };
    }
    return { owner: user.identity };
  })
  // The store: every user's items live under a namespace that starts with their identity.
  .on("store", ({ value, user }) => {
    const request = value as { namespace?: string[] };
    request.namespace = [user.identity, ...(request.namespace ?? [])];
  });
