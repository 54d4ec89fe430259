import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { Annotation, Command, InMemoryStore, MemorySaver, StateGraph } from "@langchain/langgraph";
import { describe, expect, it, vi } from "vitest";
import { GraphRegistry } from "../../src/deployment/graphs.ts";
import { graphs } from "../../src/deployment/index.ts";

describe("deployed example graphs", () => {
  it("registers the graphs of langgraph.json", () => {
    expect(graphs.ids()).toEqual(["echo", "steps", "agent", "nested", "memory", "factory", "approval", "weather"]);
    expect(graphs.entry("agent")?.description).toContain("tool-calling agent");
  });

  it("echo answers with the last human message", async () => {
    const echo = (await graphs.load("echo"))!;
    const result = await echo.invoke({
      messages: [new HumanMessage("first"), new AIMessage("x"), new HumanMessage("hello there")],
    });
    const last = result.messages.at(-1);
    expect(AIMessage.isInstance(last)).toBe(true);
    expect(last.content).toBe("hello there");
  });

  it("steps runs step1 → step2 → step3 → review", async () => {
    const steps = (await graphs.load("steps"))!;
    const result = await steps.invoke({ items: [] });
    expect(result.items).toEqual(["step1", "step2", "step3", "review"]);
  });

  it("steps interrupts at review when ask_human is set, and resumes with the answer", async () => {
    // This is what the AsyncLocalStorage registration in src/index.ts makes possible inside workerd.
    const steps = (await graphs.load("steps"))!;
    const withMemory = steps.withConfig({}) as typeof steps;
    withMemory.checkpointer = new MemorySaver();
    const config = { configurable: { thread_id: crypto.randomUUID() } };
    const paused = await withMemory.invoke({ ask_human: true }, config);
    expect(paused.__interrupt__).toHaveLength(1);
    expect(paused.__interrupt__[0].value).toEqual({ question: "approve?", items: ["step1", "step2", "step3"] });
    const resumed = await withMemory.invoke(new Command({ resume: { approved: true } }), config);
    expect(resumed.answer).toEqual({ approved: true });
    expect(resumed.items).toEqual(["step1", "step2", "step3", "review"]);
  });

  it("steps holds a gated run before the gate's node until the store opens its gate, or until the run is stopped", async () => {
    const steps = (await graphs.load("steps"))!;
    const gated = steps.withConfig({}) as typeof steps;
    gated.checkpointer = new MemorySaver();
    const store = new InMemoryStore();
    const looks = vi.spyOn(store, "batch"); // LangGraph hands a node's store calls over in batches
    gated.store = store;
    const config = { configurable: { thread_id: crypto.randomUUID(), gates: { step3: "g1" } } };
    const done = gated.invoke({ items: [] }, config);
    // The node has looked at the closed gate three times, and the run is still before step3.
    await vi.waitFor(() => expect(looks.mock.calls.length).toBeGreaterThanOrEqual(3));
    expect((await gated.getState(config)).values.items).toEqual(["step1", "step2"]);
    await store.put(["gates"], "g1", { open: true });
    expect((await done).items).toEqual(["step1", "step2", "step3", "review"]);

    // A gate never opened holds the run until it is stopped.
    const controller = new AbortController();
    const stopped = gated.invoke(
      { items: [] },
      { configurable: { thread_id: crypto.randomUUID(), gates: { step1: "shut" } }, signal: controller.signal },
    );
    await vi.waitFor(() => expect(looks.mock.calls.length).toBeGreaterThanOrEqual(6));
    controller.abort(new Error("stopped by the test"));
    await expect(stopped).rejects.toThrow(/stopped by the test|abort/i);
  });

  // Time itself is under test: delay_ms is a real wait (the wall-clock limit's tests use it).
  it("steps sleeps delay_ms in every node", async () => {
    const steps = (await graphs.load("steps"))!;
    const started = Date.now();
    await steps.invoke({ delay_ms: 30 });
    // Four nodes, 30 ms each (workerd advances the clock across I/O such as timers).
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
  });

  it("agent calls its tool, then streams the answer token by token", async () => {
    const agent = (await graphs.load("agent"))!;
    const tokens: string[] = [];
    let finalMessages: unknown[] = [];
    for await (const [mode, chunk] of await agent.stream(
      { messages: [new HumanMessage("Tell me about LangGraph")] },
      { streamMode: ["messages", "values"] },
    )) {
      if (mode === "messages") {
        const [message] = chunk as unknown as [unknown];
        if (AIMessageChunk.isInstance(message) && typeof message.content === "string" && message.content)
          tokens.push(message.content);
      } else {
        finalMessages = (chunk as { messages: unknown[] }).messages;
      }
    }
    expect(tokens.length).toBeGreaterThan(5);
    expect(tokens.join("")).toBe(
      "Here is what I found: LangGraph builds stateful agents as graphs of nodes that share state.",
    );
    const [human, call, tool, answer] = finalMessages;
    expect(HumanMessage.isInstance(human)).toBe(true);
    expect(AIMessage.isInstance(call) && call.tool_calls?.[0]).toMatchObject({
      name: "search",
      args: { query: "Tell me about LangGraph" },
    });
    expect(ToolMessage.isInstance(tool) && tool.content).toContain("LangGraph builds stateful agents");
    expect(AIMessage.isInstance(answer) && answer.content).toBe(tokens.join(""));
  });
});

describe("GraphRegistry", () => {
  const State = Annotation.Root({ value: Annotation<string>() });
  const build = (value: string) => new StateGraph(State).addNode("set", () => ({ value })).addEdge("__start__", "set");

  it("compiles an uncompiled StateGraph once, and calls a factory with each config", async () => {
    const calls: unknown[] = [];
    const registry = new GraphRegistry({
      graphs: [
        { id: "plain", module: { g: build("plain") }, exportName: "g", source: "./plain.ts:g", description: null },
        {
          id: "factory",
          module: {
            make: (config: { configurable?: { who?: string } }) => {
              calls.push(config);
              return build(`hi ${config.configurable?.who}`).compile();
            },
          },
          exportName: "make",
          source: "./factory.ts:make",
          description: null,
        },
        { id: "broken", module: { x: () => 42 }, exportName: "x", source: "./broken.ts:x", description: null },
      ],
    });
    const plain = await registry.load("plain");
    expect(await plain!.invoke({})).toEqual({ value: "plain" });
    expect(await registry.load("plain")).toBe(plain);
    const factory = await registry.load("factory", { configurable: { who: "ada" } });
    expect(await factory!.invoke({})).toEqual({ value: "hi ada" });
    expect(calls).toHaveLength(1);
    expect(await registry.load("missing")).toBeUndefined();
    await expect(registry.load("broken")).rejects.toThrow(
      'Graph "broken" (./broken.ts:x) did not produce a graph: got a number',
    );
  });
});
