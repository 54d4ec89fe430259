// What a run's config, context and `configurable` become (src/threads/runs/run-config.ts), as tables
// of input → outcome. Pure: no server. test/worker/runs-config.test.ts checks the same rules end to
// end (422s where a config enters, runs whose stored config LangGraph refuses).
import { describe, expect, it } from "vitest";
import {
  type GraphConfigSource,
  graphConfig,
  mergeConfigs,
  runContext,
  storedRunConfig,
  threadConfig,
} from "../../src/threads/runs/run-config.ts";

type Config = Record<string, unknown>;

describe("mergeConfigs: assistant, thread and request layers, later ones winning", () => {
  it.each<[string, Config[], Config]>([
    ["no layer", [], { configurable: {} }],
    ["one layer without configurable", [{ tags: ["a"] }], { tags: ["a"], configurable: {} }],
    [
      "later layers win key by key",
      [{ recursion_limit: 5, tags: ["a"] }, { recursion_limit: 10 }],
      { recursion_limit: 10, tags: ["a"], configurable: {} },
    ],
    [
      "configurable is merged, not replaced",
      [{ configurable: { model: "a", temperature: 0 } }, { configurable: { model: "b" } }],
      { configurable: { model: "b", temperature: 0 } },
    ],
    [
      "server keys are dropped from every layer; user_id is the client's to choose",
      [
        { configurable: { thread_id: "t", run_id: "r", assistant_id: "a", graph_id: "g" } },
        { configurable: { langgraph_auth_user: { identity: "x" }, platform_auth_user: {}, user_id: "u" } },
        { configurable: { langgraph_auth_user_id: "x", langgraph_auth_permissions: ["p"], __pregel_send: 1 } },
      ],
      { configurable: { user_id: "u" } },
    ],
    [
      "a configurable that is not an object counts as none",
      [{ configurable: { model: "a" } }, { configurable: "model=b" }, { configurable: ["b"] }],
      { configurable: { model: "a" } },
    ],
    [
      "checkpoint keys a request sets are kept (the run forks from them)",
      [{ configurable: { checkpoint_id: "c1", checkpoint_ns: "" } }],
      { configurable: { checkpoint_id: "c1", checkpoint_ns: "" } },
    ],
  ])("%s", (_, layers, merged) => {
    expect(mergeConfigs(...layers)).toEqual(merged);
  });
});

describe("threadConfig: what the thread keeps of a run's config", () => {
  it.each<[string, Config, Config]>([
    ["no configurable", { tags: ["t"] }, { tags: ["t"], configurable: {} }],
    [
      "checkpoint keys are the run's own, never the thread's",
      { configurable: { checkpoint_id: "c", checkpoint_ns: "ns", checkpoint_map: {}, model: "m" } },
      { configurable: { model: "m" } },
    ],
    [
      "server keys are dropped",
      { configurable: { thread_id: "t", run_id: "r", langgraph_auth_user: {}, __pregel_x: 1, user_id: "u" } },
      { configurable: { user_id: "u" } },
    ],
    [
      "a configurable that is not an object",
      { configurable: 3, recursion_limit: 4 },
      { configurable: {}, recursion_limit: 4 },
    ],
  ])("%s", (_, config, kept) => {
    expect(threadConfig(config)).toEqual(kept);
  });
});

describe("runContext: the request's context over the assistant's", () => {
  it.each<[string, unknown, unknown, unknown]>([
    ["both objects: merged, the request's keys win", { a: 1, b: 1 }, { b: 2, c: 2 }, { a: 1, b: 2, c: 2 }],
    ["no request context: the assistant's", { a: 1 }, undefined, { a: 1 }],
    ["a null request context: the assistant's", { a: 1 }, null, { a: 1 }],
    ["a request context that is not an object replaces it", { a: 1 }, ["x"], ["x"]],
    ["a request string replaces it", { a: 1 }, "text", "text"],
    ["an assistant context that is not an object: the request's", "text", { b: 2 }, { b: 2 }],
  ])("%s", (_, assistant, request, context) => {
    expect(runContext(assistant, request)).toEqual(context);
  });
});

describe("storedRunConfig: the user and the checkpoint ride in the run's configurable", () => {
  it.each<[string, Config, Parameters<typeof storedRunConfig>[1], string | null, Config]>([
    ["neither", { tags: ["t"], configurable: { a: 1 } }, null, null, { tags: ["t"], configurable: { a: 1 } }],
    ["no configurable yet", {}, null, "u1", { configurable: { user_id: "u1" } }],
    [
      "the checkpoint and the user over the config's own keys",
      { configurable: { a: 1, user_id: "client", checkpoint_id: "old" } },
      { checkpoint_id: "c2", checkpoint_ns: "" },
      "u1",
      { configurable: { a: 1, user_id: "u1", checkpoint_id: "c2", checkpoint_ns: "" } },
    ],
    [
      "an empty user id sets nothing",
      { configurable: { user_id: "client" } },
      null,
      "",
      { configurable: { user_id: "client" } },
    ],
  ])("%s", (_, config, checkpoint, userId, stored) => {
    expect(storedRunConfig(config, checkpoint, userId)).toEqual(stored);
  });
});

describe("graphConfig: what the graph runs with", () => {
  const run = (overrides: Partial<GraphConfigSource> & { config?: Config; headers?: Record<string, string> } = {}) => {
    const { config = {}, headers = {}, ...rest } = overrides;
    return {
      run_id: "run-1",
      thread_id: "thread-1",
      assistant_id: "assistant-1",
      graphId: "agent",
      authUser: null,
      metadata: { source: "test" },
      attempt: 1,
      kwargs: { config, headers, context: { lang: "en" } },
      ...rest,
    } satisfies GraphConfigSource;
  };
  const server = { thread_id: "thread-1", run_id: "run-1", assistant_id: "assistant-1", graph_id: "agent" };

  it.each<[string, GraphConfigSource, Config]>([
    [
      "the server's ids, an empty checkpoint_ns, the run's metadata and context",
      run(),
      {
        configurable: { ...server, checkpoint_ns: "" },
        metadata: { source: "test", ...server, user_id: null, run_attempt: 1 },
        context: { lang: "en" },
      },
    ],
    [
      "the API's snake_case fields become LangGraph's; other config keys never reach it",
      run({
        config: { recursion_limit: 7, max_concurrency: 2, tags: ["t"], signal: "x", callbacks: [], maxConcurrency: 0 },
      }),
      {
        recursionLimit: 7,
        maxConcurrency: 2,
        tags: ["t"],
        configurable: { ...server, checkpoint_ns: "" },
        metadata: { source: "test", ...server, user_id: null, run_attempt: 1 },
        context: { lang: "en" },
      },
    ],
    [
      "a client's server keys lose to the server's; its own keys and checkpoint_ns stay",
      run({
        config: {
          configurable: {
            thread_id: "other",
            run_id: "other",
            langgraph_auth_user: { identity: "admin" },
            model: "m",
            user_id: "u",
            checkpoint_ns: "child",
          },
        },
      }),
      {
        configurable: { model: "m", user_id: "u", ...server, checkpoint_ns: "child" },
        metadata: { source: "test", ...server, user_id: "u", run_attempt: 1 },
        context: { lang: "en" },
      },
    ],
    [
      "request headers go in over the client's keys",
      run({
        config: { configurable: { "x-tenant": "client" } },
        headers: { "x-tenant": "header", "user-agent": "sdk" },
      }),
      {
        configurable: { "x-tenant": "header", "user-agent": "sdk", ...server, checkpoint_ns: "" },
        metadata: { source: "test", ...server, user_id: null, run_attempt: 1 },
        context: { lang: "en" },
      },
    ],
    [
      "the custom-auth user under LangGraph's keys and the platform's",
      run({ authUser: { identity: "u1", permissions: ["read"] }, attempt: 2 }),
      {
        configurable: {
          langgraph_auth_user: { identity: "u1", permissions: ["read"] },
          platform_auth_user: { identity: "u1", permissions: ["read"] },
          langgraph_auth_user_id: "u1",
          langgraph_auth_permissions: ["read"],
          ...server,
          checkpoint_ns: "",
        },
        metadata: { source: "test", ...server, user_id: null, run_attempt: 2 },
        context: { lang: "en" },
      },
    ],
    [
      "a user without permissions has none",
      run({ authUser: { identity: "u1" } }),
      {
        configurable: {
          langgraph_auth_user: { identity: "u1" },
          platform_auth_user: { identity: "u1" },
          langgraph_auth_user_id: "u1",
          langgraph_auth_permissions: [],
          ...server,
          checkpoint_ns: "",
        },
        metadata: { source: "test", ...server, user_id: null, run_attempt: 1 },
        context: { lang: "en" },
      },
    ],
    [
      "the server's ids win in the metadata too",
      run({ metadata: { thread_id: "spoofed", run_attempt: 9, source: "x" } }),
      {
        configurable: { ...server, checkpoint_ns: "" },
        metadata: { source: "x", ...server, user_id: null, run_attempt: 1 },
        context: { lang: "en" },
      },
    ],
  ])("%s", (_, source, config) => {
    expect(graphConfig(source)).toEqual(config);
  });
});
