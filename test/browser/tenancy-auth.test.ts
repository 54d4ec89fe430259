import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDeployment } from "../node/helpers.ts";
import { type ConsoleHarness, startConsoleHarness } from "./harness.ts";

async function call<T>(url: string, headers: Record<string, string>, method = "GET", body?: unknown): Promise<T> {
  const response = await fetch(url, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

describe("workspaces: the console shows one workspace's data at a time", () => {
  let harness: ConsoleHarness;
  let workspaceKey: string;
  let workspaceId: string;

  beforeAll(async () => {
    harness = await startConsoleHarness();
    const { url, apiKey } = harness.server;
    const admin = { "X-Api-Key": apiKey };
    const workspace = await call<{ id: string }>(`${url}/api/v1/workspaces`, admin, "POST", {
      display_name: "Second team",
    });
    workspaceId = workspace.id;
    workspaceKey = (await call<{ key: string }>(`${url}/api/v1/api-key`, admin, "POST", { workspace_id: workspace.id }))
      .key;
    await call(`${url}/assistants`, admin, "POST", { graph_id: "echo", name: "default-team-assistant" });
    await call(`${url}/assistants`, { "X-Api-Key": workspaceKey }, "POST", {
      graph_id: "echo",
      name: "second-team-assistant",
    });
  });
  afterAll(async () => {
    await harness?.close();
  });

  it("a workspace key sees its workspace only, and its key never appears on the page", async () => {
    const page = await harness.open();
    await harness.signIn(page, { apiKey: workspaceKey });
    const table = page.getByRole("table", { name: "Assistants" });
    await table.getByText("second-team-assistant").waitFor();
    expect(await table.textContent()).not.toContain("default-team-assistant");
    expect(await page.content()).not.toContain(workspaceKey);
    // Only organization admins may list workspaces (and pick one): this key is offered no picker.
    expect(await page.getByLabel("Workspace").count()).toBe(0);
  });

  it("an organization key switches workspace with X-Tenant-Id, and nothing of the previous one stays", async () => {
    const page = await harness.open();
    await harness.signIn(page);
    const table = page.getByRole("table", { name: "Assistants" });
    await table.getByText("default-team-assistant").waitFor();
    expect(await table.textContent()).not.toContain("second-team-assistant");

    await page.getByLabel("Workspace").selectOption(workspaceId);
    await table.getByText("second-team-assistant").waitFor();
    expect(await table.textContent()).not.toContain("default-team-assistant");
    expect(await page.content()).not.toContain(harness.server.apiKey);
    await harness.screenshot(page, "1b-workspace-switch");
  });
});

describe("custom auth: the console signs in with the deployment's bearer tokens", () => {
  let deployment: Awaited<ReturnType<typeof startDeployment>>;
  let harness: ConsoleHarness;

  beforeAll(async () => {
    deployment = await startDeployment("examples/custom-auth/langgraph.json");
    harness = await startConsoleHarness({ target: { url: deployment.url, apiKey: "" } });
    await call(`${deployment.url}/assistants`, { Authorization: "Bearer token-alice" }, "POST", {
      graph_id: "echo",
      name: "alice-private-assistant",
    });
  });
  afterAll(async () => {
    await harness?.close();
    await deployment?.stop();
  });

  it("refuses an unknown token with the handler's message", async () => {
    const page = await harness.open();
    await page.getByLabel(/Bearer token/).fill("token-mallory");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("Invalid bearer token");
  });

  it("each user sees what the auth handler lets them see", async () => {
    const alice = await harness.open();
    await harness.signIn(alice, { bearerToken: "token-alice" });
    const aliceTable = alice.getByRole("table", { name: "Assistants" });
    await aliceTable.getByText("alice-private-assistant").waitFor();
    expect(await alice.content()).not.toContain("token-alice");

    const bob = await harness.open();
    await harness.signIn(bob, { bearerToken: "token-bob" });
    await expect
      .poll(
        async () =>
          (await bob.getByRole("table", { name: "Assistants" }).count()) +
          (await bob.getByText("No assistants.").count()),
      )
      .toBeGreaterThan(0);
    expect(await bob.content()).not.toContain("alice-private-assistant");
    await harness.screenshot(alice, "1c-custom-auth");
  });
});
