import { request as httpRequest } from "node:http";
import { Client } from "@langchain/langgraph-sdk";
import { type UIMessage, uiMessageReducer } from "@langchain/langgraph-sdk/react-ui/server";
import { createElement, type FunctionComponent } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { beforeAll, describe, expect, it } from "vitest";
import type { WeatherCardProps } from "../../graphs/ui/weather.tsx";
import { type SharedServerInfo, sharedServer } from "./helpers.ts";

// Generative UI end to end: the weather graph's `ui` entry (langgraph.json), bundled by the build,
// served by the Worker, fetched the way the SDK's LoadExternalComponent fetches it.

let server: SharedServerInfo;
let client: Client;

beforeAll(async () => {
  server = sharedServer();
  client = new Client({ apiUrl: server.url, apiKey: server.apiKey });
});

const host = () => new URL(server.url).host;

const postUi = (path: string, body: unknown, headers: Record<string, string> = { "X-Api-Key": server.apiKey }) =>
  fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { ...headers, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });

/** A POST with a Host header of our choosing (fetch may not set Host). */
function postWithHost(hostHeader: string, body: unknown): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        hostname,
        port,
        method: "POST",
        path: "/ui/weather",
        headers: { Host: hostHeader, "X-Api-Key": server.apiKey, "Content-Type": "application/json" },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

describe("generative UI: POST /ui/{graph_id}", () => {
  it("the SDK's ~ui client gets the fragment that loads the served bundle", async () => {
    const html = await client["~ui"].getComponent("weather", "weather");
    expect(html).toBe(
      [
        `<link rel="stylesheet" href="http://${host()}/ui/weather/entrypoint.css" />`,
        `<script src="http://${host()}/ui/weather/entrypoint.js" onload='__LGUI_weather.render("weather", "{{shadowRootId}}")'></script>`,
      ].join("\n"),
    );
  });

  it("answers text/html, protocol-relative for hosts other than localhost and 127.0.0.1", async () => {
    const response = await postUi("/ui/weather", { name: "weather", props: { city: "Oslo" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html");

    const remote = await postWithHost("agents.example.com", { name: "weather" });
    expect(remote.text).toBe(
      [
        `<link rel="stylesheet" href="//agents.example.com/ui/weather/entrypoint.css" />`,
        `<script src="//agents.example.com/ui/weather/entrypoint.js" onload='__LGUI_weather.render("weather", "{{shadowRootId}}")'></script>`,
      ].join("\n"),
    );
    const local = await postWithHost("localhost", { name: "weather" });
    expect(local.text).toContain(`<script src="http://localhost/ui/weather/entrypoint.js"`);
  });

  it("a name with a quote or markup cannot leave the onload attribute", async () => {
    const html = await (await postUi("/ui/weather", { name: "x' onerror='alert(1)<script>" })).text();
    expect(html).toContain(
      `onload='__LGUI_weather.render("x&#39; onerror=&#39;alert(1)&lt;script&gt;", "{{shadowRootId}}")'`,
    );
    expect(html.match(/'/g)).toHaveLength(2);
  });

  it("404s in plain text for a graph without UI, as the official server does", async () => {
    for (const graph of ["echo", "nope", "weather..", "weather.x", "ü"]) {
      const response = await postUi(`/ui/${encodeURIComponent(graph)}`, { name: "weather" });
      expect(response.status, graph).toBe(404);
      expect(await response.text()).toBe(`UI not found for agent "${graph}"`);
    }
    const error = await client["~ui"].getComponent("echo", "weather").catch((e: Error) => e);
    expect(String(error)).toContain('UI not found for agent "echo"');
  });

  it("needs an API key, and a component name", async () => {
    const refused = await postUi("/ui/weather", { name: "weather" }, {});
    expect(refused.status).toBe(401);
    const invalid = await postUi("/ui/weather", { props: {} });
    expect(invalid.status).toBe(422);
    expect(((await invalid.json()) as { detail: { loc: string[] }[] }).detail[0].loc).toEqual(["body", "name"]);
  });
});

describe("generative UI: GET /ui/{graph_id}/{file}", () => {
  it("serves the bundle's script and stylesheet without a key", async () => {
    const script = await fetch(`${server.url}/ui/weather/entrypoint.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    const js = await script.text();
    expect(js).toMatch(/^var __LGUI_weather = /);
    // What the official server's own test checks the served script for (langgraphjs
    // libs/langgraph-api/tests/api.test.mts, "generative ui"): imports read the host's registry.
    expect(js).toContain(`globalThis[Symbol.for("LGUI_REQUIRE")]`);
    const style = await fetch(`${server.url}/ui/weather/entrypoint.css`);
    expect(style.status).toBe(200);
    expect(style.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(await style.text()).toContain(".weather-card");
  });

  it("404s File not found for anything but a listed file of a UI graph: no traversal to other assets", async () => {
    const paths = [
      "/ui/weather/missing.js",
      "/ui/echo/entrypoint.js",
      "/ui/docs/swagger-ui.css",
      "/ui/weather/..%2F..%2Fdocs%2Fswagger-ui.css",
      "/ui/..%2Fdocs/swagger-ui.css",
      "/ui/weather/entrypoint.js%00",
      "/ui/weather/ENTRYPOINT.JS",
    ];
    for (const path of paths) {
      const response = await fetch(`${server.url}${path}`);
      expect(response.status, path).toBe(404);
      expect(await response.text(), path).toBe("File not found");
    }
  });

  it("the served bundle registers a render function that mounts the component through the SDK's host store", async () => {
    const js = await (await fetch(`${server.url}/ui/weather/entrypoint.js`)).text();
    // A minimal browser: `window`, and a document whose element has a shadow root. The SDK's react-ui
    // module installs the real host side (LGUI_REQUIRE with this React, the LGUI_EXT_STORE store).
    const appended: unknown[] = [];
    const globals = globalThis as Record<string, unknown>;
    globals.window = globalThis;
    globals.document = {
      getElementById: (id: string) =>
        id === "child-shadow-1" ? { shadowRoot: { appendChild: (el: unknown) => appended.push(el) } } : null,
      createElement: (tag: string) => ({ tag }),
    };
    try {
      await import("@langchain/langgraph-sdk/react-ui");
      const lgui = new Function(`${js}\nreturn __LGUI_weather;`)() as { render(name: string, id: string): void };
      lgui.render("weather", "child-shadow-1");
      expect(appended).toEqual([{ tag: "div" }]);
      const store = globals[Symbol.for("LGUI_EXT_STORE") as unknown as string] as {
        getBoundStore(id: string): { getSnapshot(): { comp: FunctionComponent<WeatherCardProps>; target: unknown } };
      };
      const { comp, target } = store.getBoundStore("child-shadow-1").getSnapshot();
      expect(target).toBe(appended[0]);
      expect(renderToStaticMarkup(createElement(comp, { city: "Oslo", temperature: 3, conditions: "snowy" }))).toBe(
        '<div class="weather-card"><h3>Oslo</h3><p>3°C, snowy</p></div>',
      );
    } finally {
      delete globals.window;
      delete globals.document;
    }
  });
});

describe("generative UI: a graph pushes UI messages", () => {
  it("a run streams the weather UI message as a custom event that uiMessageReducer accepts, and keeps it in state", async () => {
    const thread = await client.threads.create();
    const custom: unknown[] = [];
    let runId = "";
    let values: { messages: { id: string; content: string }[]; ui: UIMessage[] } | undefined;
    for await (const chunk of client.runs.stream(thread.thread_id, "weather", {
      input: { messages: [{ role: "human", content: "Oslo" }] },
      streamMode: ["custom", "values"],
    })) {
      if (chunk.event === "metadata") runId = (chunk.data as { run_id: string }).run_id;
      if (chunk.event === "custom") custom.push(chunk.data);
      if (chunk.event === "values") values = chunk.data as typeof values;
    }
    expect(custom).toHaveLength(1);
    const answer = values!.messages.at(-1)!;
    expect(custom[0]).toEqual({
      type: "ui",
      id: expect.any(String),
      name: "weather",
      props: { city: "Oslo", temperature: expect.any(Number), conditions: expect.any(String) },
      metadata: expect.objectContaining({ run_id: runId, message_id: answer.id }),
    });
    const message = custom[0] as UIMessage;
    expect(answer.content).toBe(`It is ${message.props.temperature}°C and ${message.props.conditions} in Oslo.`);
    expect(uiMessageReducer([], message)).toEqual([message]);
    expect(values!.ui).toEqual([message]);
    const state = await client.threads.getState<{ ui: UIMessage[] }>(thread.thread_id);
    expect(state.values.ui).toEqual([message]);
  });
});
