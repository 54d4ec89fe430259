import { expect, it } from "vitest";

// Every body field of these routes, read from the OpenAPI document, is sent as null in turn: each
// answers its 2xx or a 4xx, never a 500 (PATCH /assistants/{id} with context null once hit NOT NULL).
import { call, json } from "./helpers.ts";

type Schema = { $ref?: string; properties?: Record<string, unknown>; allOf?: Schema[] };
it("answers no 500 to null in any top-level field of an assistant, thread, run, cron or store body", async () => {
  const doc = await json<{
    paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>>;
    components: { schemas: Record<string, Schema> };
  }>(await call("/openapi.json"));
  const resolve = (s: Schema): Schema => (s.$ref ? doc.components.schemas[s.$ref.split("/").pop()!] : s);
  const thread = (await json<{ thread_id: string }>(await call("/threads", { method: "POST", json: {} }))).thread_id;
  const assistant = (
    await json<{ assistant_id: string }>(await call("/assistants", { method: "POST", json: { graph_id: "echo" } }))
  ).assistant_id;
  const cron = (
    await json<{ cron_id: string }>(
      await call("/runs/crons", { method: "POST", json: { assistant_id: "echo", schedule: "0 0 1 1 *" } }),
    )
  ).cron_id;
  const base: Record<string, Record<string, unknown>> = {
    "post /assistants": { graph_id: "echo" },
    "post /runs/crons": { assistant_id: "echo", schedule: "0 0 1 1 *" },
    "post /threads/{thread_id}/runs/crons": { assistant_id: "echo", schedule: "0 0 1 1 *" },
    "put /store/items": { namespace: ["a"], key: "k", value: {} },
    "post /threads/{thread_id}/runs/wait": { assistant_id: "echo" },
    "post /threads/{thread_id}/runs": { assistant_id: "echo" },
    "post /runs/wait": { assistant_id: "echo" },
    "post /runs": { assistant_id: "echo" },
    "post /threads/{thread_id}/state": { values: {} },
  };
  const bad: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    if (
      !/^\/(assistants|threads|runs|store)/.test(path) ||
      /stream|\/a2a|batch|join|cancel|checkpoints|history|protocol/.test(path)
    )
      continue;
    for (const [method, op] of Object.entries(ops)) {
      const schema = op.requestBody?.content["application/json"]?.schema;
      if (!schema) continue;
      const props = Object.keys(resolve(schema).properties ?? {});
      const url = path.replace("{thread_id}", thread).replace("{assistant_id}", assistant).replace("{cron_id}", cron);
      for (const field of props) {
        const body = { ...(base[`${method} ${path}`] ?? {}), [field]: null };
        const response = await call(url, { method: method.toUpperCase(), json: body });
        const text = await response.text();
        if (response.status >= 500) bad.push(`${method} ${path} ${field}: ${response.status} ${text.slice(0, 200)}`);
      }
    }
  }
  expect(bad).toEqual([]);
}, 120_000);
