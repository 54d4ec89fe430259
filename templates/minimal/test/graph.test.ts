import { MemorySaver } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import { builder, graph } from "../src/graph.ts";

const saved = process.env.GREETING;
afterEach(() => {
  if (saved === undefined) delete process.env.GREETING;
  else process.env.GREETING = saved;
});

describe("the minimal graph", () => {
  it("greets whoever the run names, with the environment's greeting and the config's tone", async () => {
    process.env.GREETING = "Hi";
    expect(await graph.invoke({ name: "Ada" })).toEqual({ name: "Ada", greeting: "Hi, Ada.", count: 1 });
    delete process.env.GREETING;
    const excited = await graph.invoke({ name: "Grace" }, { configurable: { excited: true } });
    expect(excited.greeting).toBe("Hello, Grace!");
  });

  it("counts the greetings of a thread across its runs", async () => {
    // The platform keeps threads itself; here a checkpointer of the test's own does.
    const threaded = builder.compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "t1" } };
    await threaded.invoke({ name: "Ada" }, config);
    expect((await threaded.invoke({ name: "Ada" }, config)).count).toBe(2);
  });
});
