import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type S3Peer, startS3Peer } from "../../scripts/lib/s3-peer/index.ts";
import { type ConsoleHarness, startConsoleHarness } from "./harness.ts";

let harness: ConsoleHarness;
let peer: S3Peer;
/** The tracing project the first test fills, for the next. */
let projectId: string;
beforeAll(async () => {
  [harness, peer] = await Promise.all([startConsoleHarness(), startS3Peer()]);
});
afterAll(async () => {
  await harness?.close();
  await peer?.stop();
});

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${harness.server.url}${path}`, {
    method,
    headers: { "X-Api-Key": harness.server.apiKey, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** A UTC day some days back, as YYYY-MM-DD. */
const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);

function tracedRuns(projectId: string, day: string, count: number) {
  return Array.from({ length: count }, (_, i) => {
    const id = crypto.randomUUID();
    const start = new Date(Date.parse(`${day}T01:00:00.000Z`) + i * 60_000).toISOString();
    const stamp = `${start.replace(/[-:]/g, "").replace(".", "").replace("Z", "")}000Z${id}`;
    return {
      id,
      name: "step",
      run_type: "chain",
      start_time: start,
      end_time: new Date(Date.parse(start) + 1500).toISOString(),
      session_id: projectId,
      trace_id: id,
      dotted_order: stamp,
      inputs: { question: `q${i}` },
      outputs: { answer: `a${i}` },
    };
  });
}

async function openExports(): Promise<Page> {
  const page = await harness.open("/console/exports");
  await harness.signIn(page);
  await page.getByRole("heading", { name: "Bulk exports" }).waitFor();
  return page;
}

describe("flow 6: bulk export to the R2 binding", () => {
  it("creates an R2 destination and an export through the forms, and watches it reach Completed", async () => {
    const project = await api<{ id: string }>("POST", "/api/v1/sessions", { name: "console-export" });
    projectId = project.id;
    const [first, second] = [daysAgo(10), daysAgo(9)];
    const runs = [...tracedRuns(project.id, first, 7), ...tracedRuns(project.id, second, 5)];
    await api("POST", "/api/v1/runs/batch", { post: runs });

    const page = await openExports();
    await page.getByRole("button", { name: "New destination" }).click();
    const destinationForm = page.getByRole("form", { name: "New destination" });
    await destinationForm.getByLabel("R2 binding of this deployment").check();
    await destinationForm.getByLabel("Name", { exact: true }).fill("Local R2");
    await destinationForm.getByLabel("Bucket", { exact: true }).fill("agent-platform-exports");
    await destinationForm.getByLabel("Prefix").fill("console-e2e");
    expect(await destinationForm.getByLabel("R2 binding", { exact: true }).inputValue()).toBe("EXPORT_BUCKET");
    await destinationForm.getByRole("button", { name: "Create destination" }).click();
    const destinations = page.getByRole("table", { name: "Destinations" });
    await expect.poll(() => destinations.textContent()).toContain("Local R2");
    expect(await destinations.textContent()).toContain("R2 binding EXPORT_BUCKET");

    await page.getByRole("button", { name: "New export" }).click();
    const exportForm = page.getByRole("form", { name: "New export" });
    await exportForm.getByLabel("Destination").selectOption({ label: "Local R2" });
    await exportForm.getByLabel("Project").selectOption({ label: "console-export" });
    await exportForm.getByLabel("Start (UTC)").fill(`${first}T00:00`);
    await exportForm.getByLabel("End (UTC)").fill(`${daysAgo(8)}T00:00`);
    await exportForm.getByRole("button", { name: "Create export" }).click();
    await expect.poll(() => page.url()).toMatch(/\/console\/exports\/[0-9a-f-]{36}$/);
    const exportId = page.url().split("/").pop()!;

    // The local runtime's scheduler picks the export up every minute; one tick now saves the wait.
    await fetch(`${harness.server.url}/cdn-cgi/local/scheduled?cron=*+*+*+*+*`);
    const status = page.locator(".page-header [data-status]");
    await expect.poll(() => status.getAttribute("data-status"), { timeout: 90_000, interval: 1000 }).toBe("Completed");

    // The page refreshed by itself up to the final numbers, which are the API's.
    const apiRuns = await api<{ rows_written: number; exported_files: string[] }[]>(
      "GET",
      `/api/v1/bulk-exports/${exportId}/runs`,
    );
    expect(apiRuns.map((run) => run.rows_written)).toEqual([7, 5]);
    const files = apiRuns.reduce((sum, run) => sum + run.exported_files.length, 0);
    expect(files).toBeGreaterThan(0);
    const stat = (name: string) => page.locator(`[data-stat="${name}"] .value`).textContent();
    await expect.poll(() => stat("rows")).toBe("12");
    expect(await stat("files")).toBe(String(files));
    expect(await stat("runs")).toBe("2 / 2");
    const exportRuns = page.getByRole("table", { name: "Export runs" });
    expect(await exportRuns.getByRole("row").count()).toBe(3);
    expect(await exportRuns.textContent()).toContain(first);
    expect(await page.getByTestId("manifest-location").textContent()).toMatch(
      new RegExp(`^R2 binding EXPORT_BUCKET: workspaces/[^/]+/console-e2e/_manifest\\.export_id=${exportId}\\.json$`),
    );
    expect(await page.getByRole("button", { name: "Cancel export" }).count()).toBe(0);
    await harness.screenshot(page, "6-export-completed");

    // The list shows the same progress.
    await page.getByRole("link", { name: "Bulk exports" }).click();
    const row = page.locator(`tr[data-export-id="${exportId}"]`);
    await expect.poll(() => row.locator("[data-status]").getAttribute("data-status")).toBe("Completed");
    expect(await row.locator('[data-label="rows"]').textContent()).toBe("12");
    expect(await row.locator('[data-label="runs"]').textContent()).toBe("2 / 2");

    // On a phone the page reflows: the numbers stay readable without scrolling sideways.
    const phone = await harness.open(`/console/exports/${exportId}`, { viewport: { width: 390, height: 844 } });
    await harness.signIn(phone);
    await expect.poll(() => phone.locator('[data-stat="rows"] .value').textContent()).toBe("12");
    expect(await phone.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await harness.screenshot(phone, "6-export-completed-phone");
  }, 150_000);

  it("cancels an export that has not run yet", async () => {
    const [destination] = await api<{ id: string }[]>("GET", "/api/v1/bulk-exports/destinations");
    const created = await api<{ id: string }>("POST", "/api/v1/bulk-exports", {
      bulk_export_destination_id: destination.id,
      session_id: projectId,
      start_time: `${daysAgo(30)}T00:00:00Z`,
      end_time: `${daysAgo(29)}T00:00:00Z`,
    });
    const page = await harness.open(`/console/exports/${created.id}`);
    await harness.signIn(page);
    await page.getByRole("button", { name: "Cancel export" }).click();
    await expect.poll(() => page.locator(".page-header [data-status]").getAttribute("data-status")).toBe("Cancelled");
    expect((await api<{ status: string }>("GET", `/api/v1/bulk-exports/${created.id}`)).status).toBe("Cancelled");
  });

  it("shows a failing progress request in that export's row and the other rows' progress", async () => {
    const list = await api<{ id: string; status: string }[]>("GET", "/api/v1/bulk-exports");
    const [failing, ...others] = list.filter((e) => e.status !== "IntervalScheduled");
    expect(others.length).toBeGreaterThan(0);
    const page = await harness.open("/console/exports");
    await page.route(`**/api/v1/bulk-exports/${failing.id}/runs*`, (route) =>
      route.fulfill({ status: 500, contentType: "application/json", body: JSON.stringify({ detail: "runs broke" }) }),
    );
    await harness.signIn(page);
    const row = page.locator(`tr[data-export-id="${failing.id}"]`);
    await expect.poll(() => row.getByRole("alert").textContent()).toContain("runs broke");
    for (const other of others) {
      const cells = page.locator(`tr[data-export-id="${other.id}"] [data-label="runs"]`);
      await expect.poll(() => cells.textContent()).toMatch(/^\d+ \/ \d+$/);
    }
    expect(await page.getByRole("alert").count()).toBe(1);
  });

  it("creates an S3 destination with a secret key and never shows the secret", async () => {
    const page = await openExports();
    await page.getByRole("button", { name: "New destination" }).click();
    const form = page.getByRole("form", { name: "New destination" });
    await form.getByLabel("S3-compatible bucket").check();
    await form.getByLabel("Name", { exact: true }).fill("Peer lake");
    await form.getByLabel("Bucket", { exact: true }).fill(peer.bucket);
    await form.getByLabel("Prefix").fill("lake");
    await form.getByLabel("Endpoint URL").fill(peer.endpoint);
    await form.getByLabel("Addressing style").selectOption("path");
    await form.getByLabel("Access key ID").fill(peer.accessKeyId);
    await form.getByLabel("Secret access key").fill(peer.secretAccessKey);
    await form.getByRole("button", { name: "Create destination" }).click();
    const destinations = page.getByRole("table", { name: "Destinations" });
    await expect.poll(() => destinations.textContent(), { timeout: 30_000 }).toContain("Peer lake");
    expect(await destinations.textContent()).toContain("access_key_id, secret_access_key (stored, hidden)");
    expect(await page.content()).not.toContain(peer.secretAccessKey);
    // Nor after a reload, nor once the form is opened again.
    await page.reload();
    await page.getByRole("table", { name: "Destinations" }).waitFor();
    await page.getByRole("button", { name: "New destination" }).click();
    expect(await page.content()).not.toContain(peer.secretAccessKey);
    await harness.screenshot(page, "exports-destinations");
  }, 60_000);
});
