// An export through a Worker R2 binding: no credentials, the same planner, writer and layout.
import { env } from "cloudflare:test";
import { tableFromIPC } from "apache-arrow";
import { readParquet } from "parquet-wasm/esm";
import { describe, expect, it } from "vitest";
import { type ExportRunMessage, handleExportRun } from "../../src/export/partition-writer.ts";
import { tickExports } from "./export-tick.ts";
import { call, completedExport, json } from "./helpers.ts";

const post = (path: string, body: unknown) => call(path, { method: "POST", json: body });

function run(projectId: string, start: string, runType: string) {
  const id = crypto.randomUUID();
  const stamp = `${start.replace(/[-:]/g, "").replace(".", "").replace("Z", "")}000Z${id}`;
  return {
    id,
    name: `${runType}-run`,
    run_type: runType,
    start_time: start,
    end_time: start,
    session_id: projectId,
    trace_id: id,
    dotted_order: stamp,
  };
}

describe("exports through an R2 binding", () => {
  it("refuses a binding the deployment does not have, and credentials beside a binding", async () => {
    const missing = await post("/api/v1/bulk-exports/destinations", {
      display_name: "r2",
      config: { bucket_name: "exports", r2_binding: "NO_SUCH_BUCKET" },
    });
    expect(missing.status).toBe(400);
    expect(JSON.stringify(await missing.json())).toContain("Bucket is not valid (NoSuchBinding)");
    const withKeys = await post("/api/v1/bulk-exports/destinations", {
      display_name: "r2",
      config: { bucket_name: "exports", r2_binding: "EXPORT_TEST_BUCKET" },
      credentials: { access_key_id: "a", secret_access_key: "b" },
    });
    expect(withKeys.status).toBe(422);
  });

  it("writes the filtered runs of each day as Parquet in the bucket, with a manifest", async () => {
    // Other files' exports share the bucket (one runtime for many files): compare with what was there.
    const keysBefore = (await env.EXPORT_TEST_BUCKET.list({ prefix: "workspaces/" })).objects.map((o) => o.key);
    const destination = await json<{ id: string; credentials_keys: string[] }>(
      await post("/api/v1/bulk-exports/destinations", {
        display_name: "r2 lake",
        config: { bucket_name: "exports", prefix: "lake/", r2_binding: "EXPORT_TEST_BUCKET" },
      }),
    );
    expect(destination.credentials_keys).toEqual([]);
    // The write check cleaned up after itself.
    const keysAfter = (await env.EXPORT_TEST_BUCKET.list({ prefix: "workspaces/" })).objects.map((o) => o.key);
    expect(keysAfter).toEqual(keysBefore);

    const project = await json<{ id: string }>(await post("/api/v1/sessions", { name: "r2-exported" }));
    const runs = [
      run(project.id, "2026-09-01T10:00:00.000Z", "llm"),
      run(project.id, "2026-09-01T11:00:00.000Z", "chain"),
      run(project.id, "2026-09-02T10:00:00.000Z", "llm"),
      run(project.id, "2026-09-02T12:00:00.000Z", "llm"),
    ];
    expect(await json(await post("/api/v1/runs/batch", { post: runs }))).toMatchObject({ accepted: 4 });
    const exported = await json<{ id: string }>(
      await post("/api/v1/bulk-exports", {
        bulk_export_destination_id: destination.id,
        session_id: project.id,
        start_time: "2026-09-01T00:00:00Z",
        end_time: "2026-09-03T00:00:00Z",
        filter: 'eq(run_type, "llm")',
        format_version: "v2_beta",
      }),
    );
    await tickExports(env, new Date("2026-09-03T01:00:00Z"));
    const { tenant_id: tenant } = await completedExport(exported.id);

    // The deployment's own store: every key sits under the workspace's root.
    const root = `workspaces/${tenant}/lake`;
    const listed = await env.EXPORT_TEST_BUCKET.list({ prefix: `${root}/export_id=${exported.id}/` });
    const files = listed.objects
      .map((o) => o.key)
      .filter((key) => key.endsWith(".parquet"))
      .sort();
    expect(files.map((key) => key.replace(/\/part-.*$/, ""))).toEqual([
      `${root}/export_id=${exported.id}/tenant_id=${tenant}/session_id=${project.id}/runs/year=2026/month=09/day=01`,
      expect.stringMatching(/day=02$/),
    ]);
    const counts = [];
    for (const key of files) {
      const bytes = new Uint8Array(await (await env.EXPORT_TEST_BUCKET.get(key))!.arrayBuffer());
      const table = tableFromIPC(readParquet(bytes).intoIPCStream());
      counts.push(table.numRows);
      expect(table.getChild("run_type")!.toArray()).toEqual(Array(table.numRows).fill("llm"));
    }
    expect(counts).toEqual([1, 2]);
    // The manifest sits beside the export's folder, so the folder holds Parquet only (polars refuses
    // a dataset folder with any other extension in it, even under a `_` name).
    const manifest = JSON.parse(
      await (await env.EXPORT_TEST_BUCKET.get(`${root}/_manifest.export_id=${exported.id}.json`))!.text(),
    );
    expect(manifest).toMatchObject({ total_rows: 3, format_version: "v2_beta" });
    const names = (await env.EXPORT_TEST_BUCKET.list({ prefix: `${root}/export_id=${exported.id}/` })).objects.map(
      (o) => o.key.slice(o.key.lastIndexOf("/") + 1),
    );
    expect(names.length).toBeGreaterThan(0);
    expect(names.every((name) => name.endsWith(".parquet"))).toBe(true);
  });

  describe("the writer, driven message by message", () => {
    /** The environment with a queue that records messages instead of delivering them. */
    function recorded() {
      const messages: ExportRunMessage[] = [];
      const queue = {
        send: async (body: ExportRunMessage) => void messages.push(body),
        sendBatch: async (batch: { body: ExportRunMessage }[]) => void messages.push(...batch.map((m) => m.body)),
      };
      return { messages, env: Object.assign({}, env, { QUEUE: queue as unknown as Queue }) };
    }

    async function plannedExport(config: Record<string, unknown>, runs: number) {
      const destination = await json<{ id: string }>(
        await post("/api/v1/bulk-exports/destinations", { display_name: "driven", config }),
      );
      const project = await json<{ id: string }>(
        await post("/api/v1/sessions", { name: `driven-${crypto.randomUUID()}` }),
      );
      const posts = Array.from({ length: runs }, (_, i) => run(project.id, `2026-07-01T10:00:0${i}.000Z`, "llm"));
      expect(await json(await post("/api/v1/runs/batch", { post: posts }))).toMatchObject({ accepted: runs });
      const exported = await json<{ id: string }>(
        await post("/api/v1/bulk-exports", {
          bulk_export_destination_id: destination.id,
          session_id: project.id,
          start_time: "2026-07-01T00:00:00Z",
          end_time: "2026-07-02T00:00:00Z",
        }),
      );
      const driven = recorded();
      await tickExports(driven.env, new Date("2026-07-02T01:00:00Z"));
      return { exported, ...driven };
    }

    it("splits a day into files of EXPORT_ROWS_PER_FILE rows and continues in a new message when the budget is spent", async () => {
      const {
        exported,
        messages,
        env: driven,
      } = await plannedExport({ bucket_name: "exports", prefix: "split", r2_binding: "EXPORT_TEST_BUCKET" }, 5);
      expect(messages).toHaveLength(1);
      // Two rows per file, one row per shard page, and no time budget: one file per message.
      const limits = { rowsPerFile: 2, pageRows: 1, budgetMs: 0 };
      for (let i = 0; i < 10 && messages.length; i++) await handleExportRun(messages.shift()!, driven, { limits });
      expect(messages).toEqual([]);
      const [exportRun] = await json<{ status: string; rows_written: number; exported_files: string[] }[]>(
        await call(`/api/v1/bulk-exports/${exported.id}/runs`),
      );
      expect(exportRun.status).toBe("Completed");
      expect(exportRun.exported_files.map((key) => key.split("/").at(-1)!.slice(0, 10))).toEqual([
        "part-00000",
        "part-00001",
        "part-00002",
      ]);
      const ids: string[] = [];
      for (const key of exportRun.exported_files) {
        const table = tableFromIPC(
          readParquet(new Uint8Array(await (await env.EXPORT_TEST_BUCKET.get(key))!.arrayBuffer())).intoIPCStream(),
        );
        ids.push(...(table.getChild("id")!.toArray() as string[]));
      }
      expect([ids.length, new Set(ids).size, exportRun.rows_written]).toEqual([5, 5, 5]);
      expect((await json<{ status: string }>(await call(`/api/v1/bulk-exports/${exported.id}`))).status).toBe(
        "Completed",
      );
    });

    it("also ends a file once its pages reach the file's text budget", async () => {
      const {
        exported,
        messages,
        env: driven,
      } = await plannedExport({ bucket_name: "exports", prefix: "bytes", r2_binding: "EXPORT_TEST_BUCKET" }, 5);
      // One row per page, and a budget that one page already reaches: one row per file.
      const limits = { rowsPerFile: 1000, fileBytes: 1, pageRows: 1 };
      for (let i = 0; i < 10 && messages.length; i++) await handleExportRun(messages.shift()!, driven, { limits });
      const [exportRun] = await json<{ status: string; rows_written: number; exported_files: string[] }[]>(
        await call(`/api/v1/bulk-exports/${exported.id}/runs`),
      );
      expect([exportRun.status, exportRun.rows_written, exportRun.exported_files.length]).toEqual(["Completed", 5, 5]);
    });

    it("fails the run and the export once the retries are spent, recording each attempt", async () => {
      // A destination whose bucket stopped answering after it was created (the check is skipped by writing the row).
      const {
        exported,
        messages,
        env: driven,
      } = await plannedExport({ bucket_name: "exports", prefix: "fail", r2_binding: "EXPORT_TEST_BUCKET" }, 1);
      const row = await env.DB.prepare("SELECT destination_id FROM bulk_exports WHERE id = ?")
        .bind(exported.id)
        .first<{ destination_id: string }>();
      await env.DB.prepare(
        "UPDATE export_destinations SET config = json_set(config, '$.r2_binding', 'GONE_BUCKET') WHERE id = ?",
      )
        .bind(row!.destination_id)
        .run();
      const message = messages.shift()!;
      await handleExportRun(message, driven, { limits: { maxRetries: 1 } });
      expect(messages).toEqual([message]); // the retry, scheduled
      await handleExportRun(messages.shift()!, driven, { limits: { maxRetries: 1 } });
      const [exportRun] = await json<{ status: string; retry_number: number; errors: Record<string, string> }[]>(
        await call(`/api/v1/bulk-exports/${exported.id}/runs`),
      );
      expect(exportRun).toMatchObject({ status: "Failed", retry_number: 2 });
      expect(Object.keys(exportRun.errors)).toEqual(["retry_0", "retry_1"]);
      expect(exportRun.errors.retry_1).toContain("GONE_BUCKET");
      const failed = await json<{ status: string; error: string }>(await call(`/api/v1/bulk-exports/${exported.id}`));
      expect(failed.status).toBe("Failed");
      expect(failed.error).toContain("failed: ");
    });

    it("counts failed manifest writes tick by tick, then fails the export and frees its slot", async () => {
      // A bucket that takes the Parquet files but stops answering before the manifest.
      const flaky = new Proxy(env.EXPORT_TEST_BUCKET, {
        get(bucket, name) {
          if (name === "put")
            return (key: string, ...rest: Parameters<R2Bucket["put"]>[1][]) =>
              key.includes("_manifest.")
                ? Promise.reject(new Error("Network connection lost."))
                : bucket.put(key, ...(rest as [Parameters<R2Bucket["put"]>[1]]));
          const value = Reflect.get(bucket, name);
          return typeof value === "function" ? value.bind(bucket) : value;
        },
      });
      const {
        exported,
        messages,
        env: recordedEnv,
      } = await plannedExport({ bucket_name: "exports", prefix: "manifest-down", r2_binding: "EXPORT_TEST_BUCKET" }, 1);
      // One export at a time: while this one holds the slot, a new one waits.
      const driven = Object.assign({}, recordedEnv, {
        EXPORT_TEST_BUCKET: flaky,
        EXPORT_MAX_RETRIES: "2",
        EXPORT_MAX_CONCURRENT_PER_WORKSPACE: "1",
      });
      const status = async (id: string) =>
        json<{ status: string; error: string | null; bulk_export_destination_id: string; session_id: string }>(
          await call(`/api/v1/bulk-exports/${id}`),
        );
      // The writer finishes the only run, and the manifest fails: attempt 1.
      await handleExportRun(messages.shift()!, driven);
      const first = await status(exported.id);
      expect(first).toMatchObject({ status: "Running", error: null });
      const next = await json<{ id: string }>(
        await post("/api/v1/bulk-exports", {
          bulk_export_destination_id: first.bulk_export_destination_id,
          session_id: first.session_id,
          start_time: "2026-07-01T00:00:00Z",
          end_time: "2026-07-02T00:00:00Z",
        }),
      );
      // The next tick retries (attempt 2); the slot stays taken, so the new export waits.
      await tickExports(driven, new Date("2026-07-02T01:01:00Z"));
      expect((await status(exported.id)).status).toBe("Running");
      expect((await status(next.id)).status).toBe("Created");
      const attempts = await env.DB.prepare("SELECT manifest_attempts FROM bulk_exports WHERE id = ?")
        .bind(exported.id)
        .first<{ manifest_attempts: number }>();
      expect(attempts!.manifest_attempts).toBe(2);
      // Attempt 3 is the last of EXPORT_MAX_RETRIES = 2 retries: the export fails with the bucket's error.
      await tickExports(driven, new Date("2026-07-02T01:02:00Z"));
      const failed = await status(exported.id);
      expect(failed.status).toBe("Failed");
      expect(failed.error).toBe(
        "writing the manifest failed after 3 attempts: R2 PutObject failed: Network connection lost.",
      );
      // The slot is free: the next tick starts the waiting export.
      await tickExports(driven, new Date("2026-07-02T01:03:00Z"));
      expect((await status(next.id)).status).toBe("Running");
    });
  });
});
