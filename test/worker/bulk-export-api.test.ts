// The bulk export API's own rules: destination and export validation, workspace isolation,
// cancellation, credentials never shown, and the planner driven by an injected clock.
import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { database } from "../../src/db/client.ts";
import { bulkExportRuns, bulkExports, exportDestinations } from "../../src/db/schema.ts";
import { encryptJson } from "../../src/export/crypto.ts";
import { createDestination } from "../../src/export/destinations.ts";
import { stableId } from "../../src/export/planner.ts";
import { tickExports } from "./export-tick.ts";
import { call, json } from "./helpers.ts";

type Destination = {
  id: string;
  display_name: string;
  config: Record<string, unknown>;
  credentials_keys: string[];
} & Record<string, unknown>;
type Export = {
  id: string;
  status: string;
  format_version: string;
  compression: string;
  end_time: string | null;
  interval_hours: number | null;
  source_bulk_export_id: string | null;
} & Record<string, unknown>;
type ExportRun = { id: string; status: string; start_time: string; end_time: string; metadata: { prefix: string } };

let key: string;
let otherKey: string;
let workspaceId: string;
let projectId: string;
let destinationId: string;
const SECRET = "s3cr3t-never-shown-0123456789";

const post = (path: string, body: unknown, k = key) => call(path, { method: "POST", json: body, key: k });
const detailOf = async (response: Response) => JSON.stringify(await response.json());

async function workspaceKey(name: string): Promise<{ id: string; key: string }> {
  const workspace = await json<{ id: string }>(
    await call("/api/v1/workspaces", { method: "POST", json: { display_name: name } }),
  );
  return {
    id: workspace.id,
    key: (
      await json<{ key: string }>(
        await call("/api/v1/api-key", { method: "POST", json: { workspace_id: workspace.id } }),
      )
    ).key,
  };
}

beforeAll(async () => {
  ({ id: workspaceId, key } = await workspaceKey("Exports"));
  ({ key: otherKey } = await workspaceKey("Other"));
  projectId = (await json<{ id: string }>(await post("/api/v1/sessions", { name: "exported" }))).id;
  // A destination as a successful create leaves it (creating one for real needs a bucket: see the e2e suite).
  destinationId = crypto.randomUUID();
  const now = new Date().toISOString();
  await database(env)
    .insert(exportDestinations)
    .values({
      id: destinationId,
      workspaceId,
      destinationType: "s3",
      displayName: "lake",
      config: {
        bucket_name: "lake",
        prefix: "exports",
        region: null,
        endpoint_url: "http://127.0.0.1:9",
        include_bucket_in_prefix: false,
        config_kwargs_s3: null,
      },
      credentials: await encryptJson(env, { access_key_id: "AKIDEXAMPLE", secret_access_key: SECRET }),
      credentialsKeys: ["access_key_id", "secret_access_key"],
      createdAt: now,
      updatedAt: now,
    });
});

describe("destinations", () => {
  const valid = {
    display_name: "My lake",
    config: { bucket_name: "lake", prefix: "p", endpoint_url: "http://127.0.0.1:9" },
    credentials: { access_key_id: "AKID", secret_access_key: SECRET },
  };

  it("validates the body", async () => {
    const badName = await post("/api/v1/bulk-exports/destinations", { ...valid, display_name: "no/slashes" });
    expect(badName.status).toBe(422);
    expect(await detailOf(badName)).toContain("display_name");
    const awsWithoutRegion = await post("/api/v1/bulk-exports/destinations", {
      ...valid,
      config: { bucket_name: "lake", prefix: "" },
    });
    expect(awsWithoutRegion.status).toBe(422);
    expect(await detailOf(awsWithoutRegion)).toContain("region is required");
    const badEndpoint = await post("/api/v1/bulk-exports/destinations", {
      ...valid,
      config: { ...valid.config, endpoint_url: "ftp://x" },
    });
    expect(badEndpoint.status).toBe(422);
    for (const bucket_name of ["ab", "Upper", "attacker.example/x?", "a..b"]) {
      const badBucket = await post("/api/v1/bulk-exports/destinations", {
        ...valid,
        config: { ...valid.config, bucket_name },
      });
      expect(badBucket.status, bucket_name).toBe(422);
    }
  });

  it("refuses an endpoint that does not answer, with LangSmith's message and no secret", async () => {
    const response = await post("/api/v1/bulk-exports/destinations", valid);
    expect(response.status).toBe(400);
    const detail = await detailOf(response);
    expect(detail).toContain("Invalid endpoint");
    expect(detail).not.toContain(SECRET);
  });

  it("signs with the deployment's default keys only for the deployment's own store", async () => {
    const withDefaults = Object.assign({}, env, {
      EXPORT_DEFAULT_ACCESS_KEY_ID: "deployment-key",
      EXPORT_DEFAULT_SECRET_ACCESS_KEY: "deployment-secret",
    });
    const attempt = createDestination(database(env), withDefaults, workspaceId, {
      display_name: "x",
      config: { ...valid.config, region: null, include_bucket_in_prefix: false, config_kwargs_s3: null, prefix: "" },
    });
    await expect(attempt).rejects.toMatchObject({
      kind: "bad_request",
      message: expect.stringContaining("deployment's bucket store"),
    });
  });

  it("needs credentials when the deployment has no default ones", async () => {
    const response = await post("/api/v1/bulk-exports/destinations", { ...valid, credentials: undefined });
    expect(response.status).toBe(400);
    expect(await detailOf(response)).toContain("no default bucket credentials");
  });

  it("lists and reads destinations with credential names only, in their workspace only", async () => {
    const listed = await json<Destination[]>(await call("/api/v1/bulk-exports/destinations", { key }));
    expect(listed.map((d) => d.id)).toEqual([destinationId]);
    const one = await json<Destination>(await call(`/api/v1/bulk-exports/destinations/${destinationId}`, { key }));
    expect(one).toMatchObject({
      display_name: "lake",
      credentials_keys: ["access_key_id", "secret_access_key"],
      destination_type: "s3",
    });
    expect(JSON.stringify(one)).not.toContain(SECRET);
    expect(one).not.toHaveProperty("credentials");
    expect((await call(`/api/v1/bulk-exports/destinations/${destinationId}`, { key: otherKey })).status).toBe(404);
    expect(await json(await call("/api/v1/bulk-exports/destinations", { key: otherKey }))).toEqual([]);
  });
});

describe("exports", () => {
  const oneOff = () => ({
    bulk_export_destination_id: destinationId,
    session_id: projectId,
    start_time: "2026-11-18T00:00:00Z",
    end_time: "2026-11-20T00:00:00Z",
  });

  it("creates a one-off export with the documented defaults", async () => {
    const response = await post("/api/v1/bulk-exports", oneOff());
    expect(response.status).toBe(200);
    const created = await json<Export>(response);
    expect(created).toMatchObject({
      status: "Created",
      format: "Parquet",
      format_version: "v1",
      compression: "zstandard",
      interval_hours: null,
      end_time: "2026-11-20T00:00:00.000Z",
      tenant_id: workspaceId,
    });
    expect(await json<Export>(await call(`/api/v1/bulk-exports/${created.id}`, { key }))).toEqual(created);
    expect((await json<Export[]>(await call("/api/v1/bulk-exports", { key }))).map((e) => e.id)).toContain(created.id);
    expect(await json(await call(`/api/v1/bulk-exports/${created.id}/runs`, { key }))).toEqual([]);
    expect((await call(`/api/v1/bulk-exports/${created.id}`, { key: otherKey })).status).toBe(404);
  });

  it("enforces the window rules, interval_hours, export_fields and the filter", async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [{ end_time: undefined }, 422, "end_time is required"],
      [{ interval_hours: 24 }, 422, "end_time must be omitted"],
      [{ end_time: undefined, interval_hours: 0 }, 422, "interval_hours"],
      [{ end_time: undefined, interval_hours: 169 }, 422, "interval_hours"],
      [{ end_time: "2026-11-17T00:00:00Z" }, 422, "end_time must be after start_time"],
      [{ export_fields: ["id", "bogus"] }, 422, "unknown export field(s): bogus"],
      [{ format_version: "v3" }, 422, "format_version"],
      [{ compression: "lz4" }, 422, "compression"],
      [{ filter: 'eq(name, "x"' }, 400, "filter: Invalid filter at position"],
      // The bounds of /runs/query and /runs/query/validate: refused at creation, not in every export run.
      [
        { filter: `or(${Array(501).fill("eq(id, null)").join(", ")})` },
        400,
        "filter: Invalid filter at position 0: expected filters with at most 500 conditions together, found 501 conditions",
      ],
      [{ bulk_export_destination_id: crypto.randomUUID() }, 404, "destination"],
      [{ session_id: crypto.randomUUID() }, 404, "Tracing project"],
    ];
    for (const [patch, status, text] of cases) {
      const response = await post("/api/v1/bulk-exports", { ...oneOff(), ...patch });
      expect(response.status, JSON.stringify(patch)).toBe(status);
      expect(await detailOf(response), JSON.stringify(patch)).toContain(text);
    }
    // Another workspace cannot export this project or use this destination.
    expect((await post("/api/v1/bulk-exports", oneOff(), otherKey)).status).toBe(404);
  });

  it("cancels once; a cancelled export cannot change again", async () => {
    const created = await json<Export>(await post("/api/v1/bulk-exports", oneOff()));
    const wrong = await call(`/api/v1/bulk-exports/${created.id}`, {
      method: "PATCH",
      json: { status: "Running" },
      key,
    });
    expect(wrong.status).toBe(422);
    const cancelled = await call(`/api/v1/bulk-exports/${created.id}`, {
      method: "PATCH",
      json: { status: "Cancelled" },
      key,
    });
    expect(cancelled.status).toBe(200);
    expect(await json<Export>(cancelled)).toMatchObject({ status: "Cancelled" });
    const again = await call(`/api/v1/bulk-exports/${created.id}`, {
      method: "PATCH",
      json: { status: "Cancelled" },
      key,
    });
    expect(again.status).toBe(409);
    expect(await detailOf(again)).toContain("already Cancelled");
  });
});

describe("planner", () => {
  it("makes the same id from the same name", async () => {
    expect(await stableId("export/2026-10-05")).toBe(await stableId("export/2026-10-05"));
    expect(await stableId("export/2026-10-05")).not.toBe(await stableId("export/2026-10-06"));
    expect(await stableId("x")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("spawns contiguous windows of a schedule, each 10 minutes after it ends, and stops when cancelled", async () => {
    const schedule = await json<Export>(
      await post("/api/v1/bulk-exports", {
        bulk_export_destination_id: destinationId,
        session_id: projectId,
        start_time: "2026-11-01T00:00:00Z",
        interval_hours: 6,
      }),
    );
    expect(schedule).toMatchObject({ status: "IntervalScheduled", interval_hours: 6, end_time: null });
    const db = database(env);
    const children = async () =>
      (await db.select().from(bulkExports).where(eq(bulkExports.sourceBulkExportId, schedule.id)).all()).sort((a, b) =>
        a.startTime.localeCompare(b.startTime),
      );

    // 06:09: the first window [00:00, 06:00) is not due until 06:10.
    await tickExports(env, new Date("2026-11-01T06:09:00Z"));
    expect(await children()).toHaveLength(0);
    await tickExports(env, new Date("2026-11-01T06:10:00Z"));
    expect((await children()).map((c) => [c.startTime, c.endTime])).toEqual([
      ["2026-11-01T00:00:00.000Z", "2026-11-01T06:00:00.000Z"],
    ]);
    // 18:30: two more windows are due, contiguous with the first.
    await tickExports(env, new Date("2026-11-01T18:30:00Z"));
    const spawned = await children();
    expect(spawned.map((c) => [c.startTime, c.endTime])).toEqual([
      ["2026-11-01T00:00:00.000Z", "2026-11-01T06:00:00.000Z"],
      ["2026-11-01T06:00:00.000Z", "2026-11-01T12:00:00.000Z"],
      ["2026-11-01T12:00:00.000Z", "2026-11-01T18:00:00.000Z"],
    ]);
    // The project has no runs in those windows: each spawned export completes with no export runs.
    expect(spawned.every((c) => c.intervalHours === null && c.sourceBulkExportId === schedule.id)).toBe(true);

    await call(`/api/v1/bulk-exports/${schedule.id}`, { method: "PATCH", json: { status: "Cancelled" }, key });
    await tickExports(env, new Date("2026-11-02T18:30:00Z"));
    expect(await children()).toHaveLength(3);
  });

  it("runs at most EXPORT_MAX_CONCURRENT_PER_WORKSPACE exports of a workspace at once; the rest wait", async () => {
    const { id: workspace, key: ownKey } = await workspaceKey("Concurrency");
    const db = database(env);
    const project = (await json<{ id: string }>(await post("/api/v1/sessions", { name: "limited" }, ownKey))).id;
    const destination = crypto.randomUUID();
    const now = new Date().toISOString();
    await db.insert(exportDestinations).values({
      id: destination,
      workspaceId: workspace,
      destinationType: "s3",
      displayName: "d",
      config: {
        bucket_name: "lake",
        prefix: "",
        region: null,
        endpoint_url: "http://127.0.0.1:9",
        include_bucket_in_prefix: false,
        config_kwargs_s3: null,
      },
      credentials: await encryptJson(env, { access_key_id: "a", secret_access_key: "b" }),
      credentialsKeys: ["access_key_id", "secret_access_key"],
      createdAt: now,
      updatedAt: now,
    });
    const body = {
      bulk_export_destination_id: destination,
      session_id: project,
      start_time: "2026-08-01T00:00:00Z",
      end_time: "2026-08-02T00:00:00Z",
    };
    const first = await json<Export>(await post("/api/v1/bulk-exports", body, ownKey));
    const second = await json<Export>(await post("/api/v1/bulk-exports", body, ownKey));
    // Hold the first at Running: as if its runs were still being written.
    await db.update(bulkExports).set({ status: "Running", startedAt: now }).where(eq(bulkExports.id, first.id));
    await tickExports(
      Object.assign({}, env, { EXPORT_MAX_CONCURRENT_PER_WORKSPACE: "1" }),
      new Date("2026-08-02T01:00:00Z"),
    );
    expect((await db.select().from(bulkExports).where(eq(bulkExports.id, second.id)).get())?.status).toBe("Created");
    // Once the first has ended, the second starts (it has no runs to write, so it completes at once).
    await db.update(bulkExports).set({ status: "Completed" }).where(eq(bulkExports.id, first.id));
    await tickExports(
      Object.assign({}, env, { EXPORT_MAX_CONCURRENT_PER_WORKSPACE: "1" }),
      new Date("2026-08-02T01:01:00Z"),
    );
    expect((await db.select().from(bulkExports).where(eq(bulkExports.id, second.id)).get())?.startedAt).toBe(
      "2026-08-02T01:01:00.000Z",
    );
  });

  it("starts a Created export with one export run per day that holds runs, and times out after 24 h", async () => {
    const trace = (start: string) => {
      const id = crypto.randomUUID();
      const stamp = `${start.replace(/[-:]/g, "").replace(".", "").replace("Z", "")}000Z${id}`;
      return {
        id,
        name: "r",
        run_type: "chain",
        start_time: start,
        session_id: projectId,
        trace_id: id,
        dotted_order: stamp,
      };
    };
    const ingest = await post("/api/v1/runs/batch", {
      post: [trace("2026-10-05T10:00:00.000Z"), trace("2026-10-07T10:00:00.000Z")],
    });
    expect(await json(ingest)).toMatchObject({ accepted: 2, errors: [] });
    const created = await json<Export>(
      await post("/api/v1/bulk-exports", {
        bulk_export_destination_id: destinationId,
        session_id: projectId,
        start_time: "2026-10-05T06:00:00Z",
        end_time: "2026-10-08T00:00:00Z",
      }),
    );
    const db = database(env);
    // Two ticks at once (an overlap, or a retried tick) plan the export exactly once.
    await Promise.all([
      tickExports(env, new Date("2026-10-09T00:00:00Z")),
      tickExports(env, new Date("2026-10-09T00:00:00Z")),
    ]);
    const runs = await json<ExportRun[]>(await call(`/api/v1/bulk-exports/${created.id}/runs`, { key }));
    expect(runs.map((r) => [r.start_time, r.end_time])).toEqual([
      ["2026-10-05T06:00:00.000Z", "2026-10-06T00:00:00.000Z"],
      ["2026-10-07T00:00:00.000Z", "2026-10-08T00:00:00.000Z"],
    ]);
    expect(runs[0].metadata.prefix).toBe(
      `exports/export_id=${created.id}/tenant_id=${workspaceId}/session_id=${projectId}/runs/year=2026/month=10/day=05`,
    );
    const row = await db.select().from(bulkExports).where(eq(bulkExports.id, created.id)).get();
    expect(row?.startedAt).toBe("2026-10-09T00:00:00.000Z");

    // A run that has not moved for 5 minutes lost its queue message: the tick sends it a new one.
    // (A recording queue: the real one would wake writers that move the runs themselves.)
    const sent: unknown[] = [];
    const recording = Object.assign({}, env, {
      QUEUE: { send: async (body: unknown) => void sent.push(body), sendBatch: async () => {} } as unknown as Queue,
    });
    await db
      .update(bulkExports)
      .set({ status: "Running", finishedAt: null, startedAt: "2026-10-09T00:00:00.000Z" })
      .where(eq(bulkExports.id, created.id));
    await db
      .update(bulkExportRuns)
      .set({ status: "Running", finishedAt: null, updatedAt: "2026-10-09T00:00:00.000Z" })
      .where(eq(bulkExportRuns.exportId, created.id));
    await tickExports(recording, new Date("2026-10-09T00:04:00Z"));
    expect(sent).toEqual([]);
    // Far enough ahead that even a run a background retry just touched counts as stalled (the export
    // itself restarted recently, so it is not timed out).
    await db.update(bulkExports).set({ startedAt: "2099-01-01T00:00:00.000Z" }).where(eq(bulkExports.id, created.id));
    await tickExports(recording, new Date("2099-01-01T06:00:00Z"));
    expect((sent as { runId: string }[]).map((m) => m.runId).sort()).toEqual(runs.map((r) => r.id).sort());

    // Whatever the writer did meanwhile, a day later an unfinished export is TimedOut.
    await db
      .update(bulkExports)
      .set({ status: "Running", finishedAt: null, startedAt: "2026-10-09T00:00:00.000Z" })
      .where(eq(bulkExports.id, created.id));
    await db
      .update(bulkExportRuns)
      .set({ status: "Running", finishedAt: null })
      .where(eq(bulkExportRuns.exportId, created.id));
    await tickExports(env, new Date("2026-10-10T00:00:01Z"));
    expect(await json<Export>(await call(`/api/v1/bulk-exports/${created.id}`, { key }))).toMatchObject({
      status: "TimedOut",
    });
    const after = await json<ExportRun[]>(await call(`/api/v1/bulk-exports/${created.id}/runs`, { key }));
    expect(after.map((r) => r.status)).toEqual(["TimedOut", "TimedOut"]);
  });
});
