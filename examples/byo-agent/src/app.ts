import { Client } from "@langchain/langgraph-sdk";
import { Hono } from "hono";

/** Custom routes and middleware, mounted before the platform's routes (langgraph.json `http.app`). */
export const app = new Hono();

// Runs before the platform's routes: every run created on a thread gets this metadata.
app.use("/threads/:thread_id/runs/*", async (c, next) => {
  if (c.req.method === "POST" && c.req.header("content-type")?.includes("application/json")) {
    const body = (await c.req.json()) as { metadata?: Record<string, unknown> };
    body.metadata = { ...body.metadata, stamped_by: "byo-agent" };
    c.req.raw = new Request(c.req.raw, { body: JSON.stringify(body) });
  }
  await next();
});

app.get("/custom/hello", (c) => c.json({ hello: "from the byo-agent app" }));

// Calls the platform's own API in-process: a Client without apiUrl talks to this deployment.
app.get("/custom/assistants", async (c) => {
  const client = new Client();
  const assistants = await client.assistants.search({ graphId: "greeter" });
  return c.json({ graphs: assistants.map((assistant) => assistant.graph_id) });
});
