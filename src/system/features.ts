/**
 * Which capabilities this build serves, as reported by /info. A flag turns true only when its
 * endpoints exist, so clients (Studio, the SDK) never call what is not there.
 */
export const FEATURES = {
  assistants: true,
  threads: true,
  runs: true,
  crons: true,
  store: true,
  a2a: true,
  mcp: true,
  /** Set per deployment from langgraph.json `auth.path` (see system/routes.ts). */
  custom_auth: false,
  langsmith: false,
  tracing: true,
  bulk_export: false,
} as const;
