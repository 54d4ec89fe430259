// A graph whose output nests deeper than LangChain deserializes (test/node/fixtures/deep-state/):
// the run that produced it fails with a message naming the limit, nothing of it is checkpointed,
// and the thread's state and history stay readable.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV_API_KEY } from "../../scripts/lib/wrangler.ts";
import { startDeployment } from "./helpers.ts";

let deployment: Awaited<ReturnType<typeof startDeployment>>;
beforeAll(async () => {
  deployment = await startDeployment("test/node/fixtures/deep-state/langgraph.json");
}, 120_000);
afterAll(async () => {
  await deployment?.stop();
}, 60_000);

type Message = { content: string };
type Answer = {
  thread_id?: string;
  status?: string;
  messages?: Message[];
  values?: { messages: Message[] };
  __error__?: { error: string; message: string };
};

async function api<T = Answer>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(`${deployment.url}${path}`, {
    method,
    headers: { "X-Api-Key": DEV_API_KEY, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

const say = (content: string) => ({ assistant_id: "deep", input: { messages: [{ role: "user", content }] } });

describe("a node that writes a message nested too deep", () => {
  it("fails its run with a message naming the limit and leaves the thread readable", async () => {
    const thread = (await api("POST", "/threads", {})).body.thread_id!;
    expect((await api("POST", `/threads/${thread}/runs/wait`, say("hello"))).status).toBe(200);

    const failed = await api("POST", `/threads/${thread}/runs/wait`, say("deep"));
    expect(failed.status).toBe(200);
    expect(failed.body.__error__).toMatchObject({
      error: "StateTooDeepError",
      message: expect.stringContaining("LangChain reads back at most 50"),
    });
    const [run] = (await api<Answer[]>("GET", `/threads/${thread}/runs`)).body;
    expect(run.status).toBe("error");

    const state = await api("GET", `/threads/${thread}/state`);
    expect(state.status, JSON.stringify(state.body)).toBe(200);
    expect(state.body.values!.messages.map((m) => m.content)).toEqual(["hello", "hello", "deep"]);
    const history = await api("GET", `/threads/${thread}/history`);
    expect(history.status, JSON.stringify(history.body)).toBe(200);
    expect((await api("GET", `/threads/${thread}`)).body.status).toBe("error");

    // The thread goes on.
    const again = await api("POST", `/threads/${thread}/runs/wait`, say("again"));
    expect(again.body.messages!.map((m) => m.content)).toEqual(["hello", "hello", "deep", "again", "again"]);
  });
});
