// A `ui` component bundle runs on the host page's React and SDK, as the official bundler's does. Here it
// is loaded the way the SDK's LoadExternalComponent loads it (the fragment's script, then its onload with
// the shadow root id filled in) with the SDK's own host side (the LGUI_REQUIRE and LGUI_EXT_STORE its
// react-ui module installs); test/browser/ui-components.test.ts renders it through LoadExternalComponent
// in Chromium.

import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { runInThisContext } from "node:vm";
import * as HostReact from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import { scratchDir } from "../../scripts/lib/scratch.ts";
import { bundleUi, routeToHostRequire } from "../../scripts/lib/ui-bundle.ts";
import { UiCatalog } from "../../src/ui/service.ts";

interface ComponentStore {
  getBoundStore(id: string): {
    getSnapshot(): { comp: HostReact.FunctionComponent<{ city: string }>; target: unknown };
  };
}

const globals = globalThis as Record<string | symbol, unknown>;
let dir: string;
let script: string;

beforeAll(async () => {
  dir = scratchDir("ui-bundle");
  const configDir = join(PROJECT_ROOT, "test/fixtures/ui");
  const bundles = await bundleUi({ "my-agent": "./cards.tsx" }, { configDir, assetsDir: join(dir, "assets") });
  expect(bundles).toEqual([{ id: "my-agent", source: "./cards.tsx", files: ["entrypoint.js"] }]);
  script = readFileSync(join(dir, "assets/ui/my-agent/entrypoint.js"), "utf8");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a ui bundle takes React and the SDK from the host page", () => {
  it("has the official bundle's shape: an IIFE global, no React inside, imports read through LGUI_REQUIRE", () => {
    expect(script).toMatch(/^var __LGUI_my_agent = \(\(\) => \{/);
    // The official server's own test (langgraphjs libs/langgraph-api/tests/api.test.mts, "generative
    // ui") checks the served script for exactly this text.
    expect(script).toContain(`globalThis[Symbol.for("LGUI_REQUIRE")]`);
    // esbuild's require shim, rewritten as the official bundler (@langchain/langgraph-ui) rewrites it.
    expect(script).toContain(
      `var __require = /* @__PURE__ */ ((x) => typeof globalThis[Symbol.for("LGUI_REQUIRE")] !== "undefined" ? globalThis[Symbol.for("LGUI_REQUIRE")] : `,
    );
    for (const name of ["react", "react/jsx-runtime", "@langchain/langgraph-sdk/react-ui"]) {
      expect(script).toContain(`__require(${JSON.stringify(name)})`);
    }
    expect(script).not.toContain("react.production");
    expect(script).not.toContain("react.development");
    expect(script.length).toBeLessThan(4_000);
  });

  it("loaded as LoadExternalComponent loads it, gets the host's React instance and SDK", async () => {
    const REQUIRE = Symbol.for("LGUI_REQUIRE");
    const requested: string[] = [];
    const appended: unknown[] = [];
    globals.window = globalThis;
    globals.document = {
      getElementById: (id: string) =>
        id === "child-shadow-:r1:" ? { shadowRoot: { appendChild: (el: unknown) => appended.push(el) } } : null,
      createElement: (tag: string) => ({ tag }),
    };
    try {
      // The SDK's host side: importing its react-ui module installs LGUI_REQUIRE (this React, react-dom,
      // jsx-runtime, the react-ui hooks) and the LGUI_EXT_STORE component store on window.
      const hostSdk = await import("@langchain/langgraph-sdk/react-ui");
      const sdkRequire = globals[REQUIRE] as (name: string) => unknown;
      expect(typeof sdkRequire).toBe("function");
      globals[REQUIRE] = (name: string) => {
        requested.push(name);
        return sdkRequire(name);
      };

      // The fragment POST /ui/{graph_id} answers, then what the browser does with it.
      const fragment = new UiCatalog([{ id: "my-agent", files: ["entrypoint.js"] }]).fragment(
        "my-agent",
        "visits",
        "localhost:2024",
      );
      const onload = /onload='([^']+)'/.exec(fragment ?? "")?.[1];
      expect(onload).toBe('__LGUI_my_agent.render("visits", "{{shadowRootId}}")');
      // A classic script, as the browser runs it: its `var` is a global the onload code then calls.
      runInThisContext(script);
      runInThisContext(onload!.replace("{{shadowRootId}}", "child-shadow-:r1:"));

      expect(requested.sort()).toEqual(["@langchain/langgraph-sdk/react-ui", "react", "react/jsx-runtime"]);
      const probe = globals.__lguiProbe as { useState: unknown; useStreamContext: unknown };
      expect(probe.useState).toBe(HostReact.useState);
      expect(probe.useStreamContext).toBe(hostSdk.useStreamContext);

      const { comp, target } = (globals[Symbol.for("LGUI_EXT_STORE")] as ComponentStore)
        .getBoundStore("child-shadow-:r1:")
        .getSnapshot();
      expect(target).toBe(appended[0]);
      // The host's renderer runs the component's hook: a second React would fail "Invalid hook call".
      expect(renderToStaticMarkup(HostReact.createElement(comp, { city: "Oslo" }))).toBe(
        '<button type="button" class="visits">Oslo: 2 visits</button>',
      );
    } finally {
      delete globals.window;
      delete globals.document;
      delete globals.__lguiProbe;
    }
  });

  it("fails the build when esbuild's require shim cannot be routed to the host", () => {
    expect(() => routeToHostRequire('var __require = (x) => 1;\nvar React = __require("react");')).toThrow(
      "esbuild's require shim changed shape",
    );
    expect(routeToHostRequire("var a = 1;")).toBe("var a = 1;");
  });
});
