// Plan tiers: the organization's plan, who may set it, the deployment default (DEFAULT_PLAN), the
// plan-gated create routes of crons and bulk export, and what a downgrade does to what exists.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { database } from "../../src/db/client.ts";
import worker from "../../src/index.ts";
import { defaultPlan, organizationPlan, planRefusal } from "../../src/tenancy/plans.ts";
import { DEFAULT_ORGANIZATION_ID } from "../../src/tenancy/store.ts";
import { tickExports } from "./export-tick.ts";
import { call, FAR_SCHEDULE, fireCrons, json } from "./helpers.ts";

interface Organization {
  id: string;
  display_name: string;
  plan: string;
  plan_is_default: boolean;
}
interface Cron {
  cron_id: string;
  enabled: boolean;
  next_run_date: string | null;
}

const post = (path: string, body: unknown, key?: string) => call(path, { method: "POST", json: body, key });
const setPlan = (plan: string | null, key?: string) =>
  call("/api/v1/orgs/current", { method: "PATCH", json: { plan }, key });

const CRONS_DETAIL = "Crons need the plus or enterprise plan; this organization is on developer";
const EXPORT_DETAIL = "Bulk export needs the plus or enterprise plan; this organization is on developer";

async function memberKey(): Promise<string> {
  const response = await post("/api/v1/api-key", { description: "member", role: "member" });
  expect(response.status).toBe(200);
  return (await json<{ key: string }>(response)).key;
}

async function newThread(): Promise<string> {
  return (await json<{ thread_id: string }>(await post("/threads", {}))).thread_id;
}

async function r2Destination(): Promise<string> {
  const response = await post("/api/v1/bulk-exports/destinations", {
    display_name: "r2",
    config: { bucket_name: "exports", prefix: "plans/", r2_binding: "EXPORT_TEST_BUCKET" },
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await json<{ id: string }>(response)).id;
}

async function project(name: string): Promise<string> {
  return (await json<{ id: string }>(await post("/api/v1/sessions", { name }))).id;
}

/** Sends a request through the Worker with other vars, as a deployment configured so would see it. */
async function callWith(vars: Record<string, string>, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("X-Api-Key", "lgp_test_bootstrap_key");
  if (init.body) headers.set("Content-Type", "application/json");
  const ctx = createExecutionContext();
  const response = await worker.fetch(
    new Request(`http://platform.test${path}`, { ...init, headers }),
    Object.assign({}, env, vars),
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return response;
}

describe("the organization's plan", () => {
  it("is the deployment's DEFAULT_PLAN (enterprise here) until one is set", async () => {
    const response = await call("/api/v1/orgs/current");
    expect(response.status).toBe(200);
    expect(await json<Organization>(response)).toMatchObject({
      id: DEFAULT_ORGANIZATION_ID,
      display_name: "Default organization",
      plan: "enterprise",
      plan_is_default: true,
    });
  });

  it("members read it; only organization admins set it (members get 403)", async () => {
    const key = await memberKey();
    const read = await call("/api/v1/orgs/current", { key });
    expect(read.status).toBe(200);
    expect((await json<Organization>(read)).plan).toBe("enterprise");

    const refused = await setPlan("developer", key);
    expect(refused.status).toBe(403);
    expect(await json(refused)).toEqual({ detail: "This operation needs an organization-admin API key" });
    expect((await json<Organization>(await call("/api/v1/orgs/current"))).plan).toBe("enterprise");

    const set = await setPlan("plus");
    expect(set.status).toBe(200);
    expect(await json<Organization>(set)).toMatchObject({ plan: "plus", plan_is_default: false });
    expect(await json<Organization>(await call("/api/v1/orgs/current", { key }))).toMatchObject({ plan: "plus" });

    // null hands the organization back to the deployment default.
    expect(await json<Organization>(await setPlan(null))).toMatchObject({ plan: "enterprise", plan_is_default: true });
  });

  it("refuses plans that do not exist with 422", async () => {
    for (const plan of ["free", "Plus", 3]) {
      const response = await call("/api/v1/orgs/current", { method: "PATCH", json: { plan } });
      expect(response.status, String(plan)).toBe(422);
    }
    expect((await call("/api/v1/orgs/current", { method: "PATCH", json: {} })).status).toBe(422);
  });

  it("organizations without a plan follow DEFAULT_PLAN; unset or unknown means enterprise", async () => {
    expect(defaultPlan({})).toBe("enterprise");
    expect(defaultPlan({ DEFAULT_PLAN: "" })).toBe("enterprise");
    expect(defaultPlan({ DEFAULT_PLAN: "gold" })).toBe("enterprise");
    expect(defaultPlan({ DEFAULT_PLAN: "Developer" })).toBe("developer");
    const db = database(env);
    expect(await organizationPlan(db, { DEFAULT_PLAN: "developer" }, DEFAULT_ORGANIZATION_ID)).toBe("developer");
    expect(await organizationPlan(db, { DEFAULT_PLAN: "plus" }, DEFAULT_ORGANIZATION_ID)).toBe("plus");

    // Through the Worker: a deployment with DEFAULT_PLAN = "developer" refuses crons to the default organization.
    const developer = { DEFAULT_PLAN: "developer" };
    expect(await json<Organization>(await callWith(developer, "/api/v1/orgs/current"))).toMatchObject({
      plan: "developer",
      plan_is_default: true,
    });
    const refused = await callWith(developer, "/runs/crons", {
      method: "POST",
      body: JSON.stringify({ assistant_id: "echo", schedule: "0 0 1 1 *" }),
    });
    expect(refused.status).toBe(403);
    expect(await json(refused)).toEqual({ detail: CRONS_DETAIL });

    // An explicit plan wins over the default.
    await setPlan("plus");
    expect(await json<Organization>(await callWith(developer, "/api/v1/orgs/current"))).toMatchObject({
      plan: "plus",
      plan_is_default: false,
    });
    await setPlan(null);
  });

  it("names every plan that has the feature", () => {
    expect(planRefusal("developer", "crons")).toBe(CRONS_DETAIL);
    expect(planRefusal("developer", "bulk_export")).toBe(EXPORT_DETAIL);
    expect(planRefusal("plus", "crons")).toBeNull();
    expect(planRefusal("enterprise", "bulk_export")).toBeNull();
  });
});

describe("plan-gated create routes", () => {
  it("on developer, creating a cron or an export destination or export answers 403 naming the plan", async () => {
    const threadId = await newThread();
    const destination = await r2Destination();
    const session = await project("gated");
    await setPlan("developer");
    try {
      const refusals = [
        ["/runs/crons", { assistant_id: "echo", schedule: "* * * * *" }, CRONS_DETAIL],
        [`/threads/${threadId}/runs/crons`, { assistant_id: "echo", schedule: "* * * * *" }, CRONS_DETAIL],
        // The plan is checked before the body: even an invalid one is told about the plan.
        ["/runs/crons", {}, CRONS_DETAIL],
        [
          "/api/v1/bulk-exports/destinations",
          { display_name: "r2", config: { bucket_name: "exports", r2_binding: "EXPORT_TEST_BUCKET" } },
          EXPORT_DETAIL,
        ],
        [
          "/api/v1/bulk-exports",
          {
            bulk_export_destination_id: destination,
            session_id: session,
            start_time: "2026-08-01T00:00:00Z",
            end_time: "2026-08-02T00:00:00Z",
          },
          EXPORT_DETAIL,
        ],
      ] as const;
      for (const [path, body, detail] of refusals) {
        const response = await post(path, body);
        expect(response.status, path).toBe(403);
        expect(await json(response), path).toEqual({ detail });
      }
      // A workspace member of the organization is refused the same way.
      const member = await post("/runs/crons", { assistant_id: "echo", schedule: "* * * * *" }, await memberKey());
      expect(member.status).toBe(403);

      // Everything but creating stays open: reading, listing, searching.
      expect((await post("/runs/crons/search", {})).status).toBe(200);
      expect((await call("/api/v1/bulk-exports")).status).toBe(200);
      expect((await call("/api/v1/bulk-exports/destinations")).status).toBe(200);
      expect((await call(`/api/v1/bulk-exports/destinations/${destination}`)).status).toBe(200);
    } finally {
      await setPlan(null);
    }
  });

  for (const plan of ["plus", "enterprise"] as const) {
    it(`on ${plan}, crons, destinations and exports are created`, async () => {
      await setPlan(plan);
      try {
        const threadId = await newThread();
        const crons = [
          await post("/runs/crons", { assistant_id: "echo", schedule: "0 0 1 1 *" }),
          await post(`/threads/${threadId}/runs/crons`, { assistant_id: "echo", schedule: "0 0 1 1 *" }),
        ];
        for (const response of crons) {
          expect(response.status, await response.clone().text()).toBe(200);
          // Not left behind to fire in the downgrade tests below.
          await call(`/runs/crons/${(await json<Cron>(response)).cron_id}`, { method: "DELETE" });
        }
        const destination = await r2Destination();
        const exported = await post("/api/v1/bulk-exports", {
          bulk_export_destination_id: destination,
          session_id: await project(`allowed-${plan}`),
          start_time: "2026-08-01T00:00:00Z",
          end_time: "2026-08-02T00:00:00Z",
        });
        expect(exported.status, await exported.clone().text()).toBe(200);
        await call(`/api/v1/bulk-exports/${(await json<{ id: string }>(exported)).id}`, {
          method: "PATCH",
          json: { status: "Cancelled" },
        });
      } finally {
        await setPlan(null);
      }
    });
  }
});

describe("after a downgrade", () => {
  it("existing crons stay, but their occurrences pass unrun until the plan has crons again", async () => {
    await setPlan("plus");
    const threadId = await newThread();
    const cron = await json<Cron>(
      await post(`/threads/${threadId}/runs/crons`, { assistant_id: "echo", schedule: FAR_SCHEDULE }),
    );
    const occurrence = Date.parse(cron.next_run_date!);

    await setPlan("developer");
    expect(await fireCrons(new Date(occurrence))).toBe(0);
    expect(await json<unknown[]>(await call(`/threads/${threadId}/runs`))).toHaveLength(0);
    // Still enabled, readable, and moved on to its next occurrence (the missed one is not replayed).
    const kept = await json<Cron>(await call(`/runs/crons/${cron.cron_id}`));
    expect(kept).toMatchObject({ enabled: true, next_run_date: new Date(occurrence + 60_000).toISOString() });
    // Changing it is allowed; only creating is gated.
    expect((await call(`/runs/crons/${cron.cron_id}`, { method: "PATCH", json: { metadata: { a: 1 } } })).status).toBe(
      200,
    );

    await setPlan("plus");
    expect(await fireCrons(new Date(occurrence + 60_000))).toBe(1);
    const runs = await json<{ metadata: Record<string, unknown> }[]>(await call(`/threads/${threadId}/runs`));
    expect(runs).toHaveLength(1);
    expect(runs[0]!.metadata).toMatchObject({ cron_id: cron.cron_id });
    await call(`/runs/crons/${cron.cron_id}`, { method: "DELETE" });
    await setPlan(null);
  });

  it("scheduled exports pause (their windows wait) and exports already created still finish", async () => {
    await setPlan("plus");
    const destination = await r2Destination();
    const session = await project("downgraded");
    const schedule = await json<{ id: string }>(
      await post("/api/v1/bulk-exports", {
        bulk_export_destination_id: destination,
        session_id: session,
        start_time: "2026-11-01T00:00:00Z",
        interval_hours: 6,
      }),
    );
    const oneOff = await json<{ id: string }>(
      await post("/api/v1/bulk-exports", {
        bulk_export_destination_id: destination,
        session_id: session,
        start_time: "2026-10-01T00:00:00Z",
        end_time: "2026-10-02T00:00:00Z",
      }),
    );
    const children = async () =>
      (
        await env.DB.prepare("SELECT start_time FROM bulk_exports WHERE source_bulk_export_id = ? ORDER BY start_time")
          .bind(schedule.id)
          .all<{ start_time: string }>()
      ).results.map((row) => row.start_time);
    const statusOf = async (id: string) =>
      (await json<{ status: string }>(await call(`/api/v1/bulk-exports/${id}`))).status;

    await setPlan("developer");
    await tickExports(env, new Date("2026-11-02T00:30:00Z"));
    expect(await children()).toEqual([]);
    expect(await statusOf(schedule.id)).toBe("IntervalScheduled");
    // The one-off export was accepted on plus: it runs (no runs in its window, so it completes at once).
    expect(await statusOf(oneOff.id)).toBe("Completed");

    // Back on plus, the schedule catches up the windows that waited.
    await setPlan("plus");
    await tickExports(env, new Date("2026-11-02T00:30:00Z"));
    expect(await children()).toEqual([
      "2026-11-01T00:00:00.000Z",
      "2026-11-01T06:00:00.000Z",
      "2026-11-01T12:00:00.000Z",
      "2026-11-01T18:00:00.000Z",
    ]);
    await call(`/api/v1/bulk-exports/${schedule.id}`, { method: "PATCH", json: { status: "Cancelled" } });
    await setPlan(null);
  });
});
