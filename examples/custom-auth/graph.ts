import { Annotation, type LangGraphRunnableConfig, StateGraph } from "@langchain/langgraph";

type User = { identity: string; display_name?: string; permissions?: string[]; github_token?: string };

/**
 * Reports who the run acts for, as a node sees it: the user under both config keys. Only whether
 * the user's secret is there goes into state, never the secret.
 */
export const whoami = new StateGraph(Annotation.Root({ seen: Annotation<Record<string, unknown>>() }))
  .addNode("whoami", (_state: unknown, config: LangGraphRunnableConfig) => {
    const configurable = config.configurable ?? {};
    const user = configurable.langgraph_auth_user as User | undefined;
    const platformUser = configurable.platform_auth_user as User | undefined;
    return {
      seen: {
        identity: user?.identity ?? null,
        display_name: user?.display_name ?? null,
        permissions: user?.permissions ?? null,
        platform_identity: platformUser?.identity ?? null,
        same_object: JSON.stringify(user) === JSON.stringify(platformUser),
        has_secret: typeof user?.github_token === "string",
        user_id: configurable.user_id ?? null,
        langgraph_auth_user_id: configurable.langgraph_auth_user_id ?? null,
      },
    };
  })
  .addEdge("__start__", "whoami")
  .addEdge("whoami", "__end__")
  .compile();
