import { useState } from "react";
import { Link, useParams } from "wouter";
import { api } from "../../api.ts";
import { DataTable } from "../../components/DataTable.tsx";
import { ErrorBox, Loading } from "../../components/ErrorBox.tsx";
import { PageHeader } from "../../components/Layout.tsx";
import { Stat } from "../../components/Stat.tsx";
import { StatusBadge } from "../../components/StatusBadge.tsx";
import { formatBytes, formatNumber, formatTime, shortId } from "../../format.ts";
import { useInterval, useLoad } from "../../hooks.ts";
import { windowOf } from "./ExportsPage.tsx";
import {
  type BulkExport,
  type Destination,
  destinationWhere,
  type ExportRun,
  FINISHED,
  manifestLocation,
  progressOf,
} from "./types.ts";

/** One export: status and progress (refreshed while it runs), its runs with errors and retries, cancel, the manifest. */
export function ExportDetailPage() {
  const { exportId = "" } = useParams<{ exportId: string }>();
  const [cancelError, setCancelError] = useState<unknown>();
  const loaded = useLoad(
    async (signal) => {
      const exported = await api<BulkExport>(`/api/v1/bulk-exports/${exportId}`, { signal });
      const [runs, destination, spawned] = await Promise.all([
        api<ExportRun[]>(`/api/v1/bulk-exports/${exportId}/runs`, { signal }),
        api<Destination>(`/api/v1/bulk-exports/destinations/${exported.bulk_export_destination_id}`, { signal }),
        // A scheduled export's work happens in the exports it spawns.
        exported.status === "IntervalScheduled" || exported.interval_hours
          ? api<ExportRun[]>("/api/v1/bulk-exports/runs", { query: { source_bulk_export_id: exportId }, signal })
          : Promise.resolve([]),
      ]);
      return { exported, runs: [...runs, ...spawned], destination };
    },
    [exportId],
  );
  const data = loaded.data;
  const active = data ? !FINISHED.has(data.exported.status) : false;
  // A scheduled export never finishes: its spawned exports are looked at every 30 s, not every 2 s.
  const scheduled = data?.exported.status === "IntervalScheduled";
  useInterval(loaded.reload, scheduled ? 30_000 : 2000, active && !loaded.loading && !loaded.error);

  async function cancel() {
    setCancelError(undefined);
    try {
      await api(`/api/v1/bulk-exports/${exportId}`, { method: "PATCH", body: { status: "Cancelled" } });
      loaded.reload();
    } catch (reason) {
      setCancelError(reason);
    }
  }

  const progress = data ? progressOf(data.runs) : undefined;
  return (
    <>
      <PageHeader
        title={
          <>
            Export <span className="mono">{shortId(exportId)}</span>{" "}
            {data ? <StatusBadge status={data.exported.status} /> : null}
          </>
        }
      >
        {active ? (
          <button type="button" className="danger" onClick={cancel}>
            Cancel export
          </button>
        ) : null}
      </PageHeader>
      <p className="muted">
        <Link href="/exports">Bulk exports</Link> / <span className="mono">{exportId}</span>
      </p>
      <ErrorBox error={loaded.error} />
      <ErrorBox error={cancelError} title="Cancel" />
      {loaded.loading && !data ? <Loading /> : null}
      {data && progress ? (
        <>
          {data.exported.error ? <div className="error">{data.exported.error}</div> : null}
          <section className="stats" aria-label="Progress">
            <Stat label="Runs done" value={`${progress.done} / ${progress.planned}`} name="runs" />
            <Stat label="Rows" value={formatNumber(progress.rows)} name="rows" />
            <Stat label="Files" value={formatNumber(progress.files)} name="files" />
            <Stat label="Bytes" value={formatBytes(progress.bytes)} name="bytes" />
            <Stat label="Retries" value={formatNumber(progress.retries)} name="retries" />
          </section>
          <div className="grid export-facts">
            <dl className="card facts">
              <dt>Destination</dt>
              <dd>
                {data.destination.display_name}{" "}
                <span className="muted mono">{destinationWhere(data.destination.config)}</span>
              </dd>
              <dt>Project</dt>
              <dd>
                <Link href={`/traces/projects/${data.exported.session_id}`} className="mono">
                  {data.exported.session_id}
                </Link>
              </dd>
              <dt>Window</dt>
              <dd>{windowOf(data.exported)}</dd>
              <dt>Filter</dt>
              <dd className="mono">{data.exported.filter ?? "—"}</dd>
              <dt>Format</dt>
              <dd>
                {data.exported.format} {data.exported.format_version}, {data.exported.compression}
              </dd>
              <dt>Created / finished</dt>
              <dd>
                {formatTime(data.exported.created_at)} / {formatTime(data.exported.finished_at)}
              </dd>
            </dl>
            <section className="card" aria-label="Manifest">
              <h3>Manifest</h3>
              <p className="muted">
                {data.exported.status === "Completed"
                  ? "Written after the last file; lists every file with its rows and bytes."
                  : "Written when the export completes."}{" "}
                The API does not serve it: read it from the bucket.
              </p>
              <code className="manifest-location" data-testid="manifest-location">
                {manifestLocation(data.destination.config, exportId)}
              </code>
            </section>
          </div>
          <h2>Export runs</h2>
          <DataTable
            label="Export runs"
            columns={["Day", "Status", "Rows", "Files", "Bytes", "Retries", "Errors", "Finished"]}
            rows={data.runs}
            empty={active ? "Not planned yet: the scheduler picks the export up within a minute." : "No runs."}
          >
            {(run) => (
              <tr key={run.id}>
                <td>{run.start_time.slice(0, 10)}</td>
                <td>
                  <StatusBadge status={run.status} />
                </td>
                <td>{formatNumber(run.rows_written)}</td>
                <td title={run.exported_files.join("\n")}>{run.exported_files.length}</td>
                <td>{formatBytes(run.metadata?.result?.bytes_written)}</td>
                <td>{run.retry_number}</td>
                <td>
                  {Object.entries(run.errors).map(([attempt, message]) => (
                    <div key={attempt} className="run-error">
                      <span className="muted">{attempt}:</span> {message}
                    </div>
                  ))}
                </td>
                <td>{formatTime(run.finished_at)}</td>
              </tr>
            )}
          </DataTable>
        </>
      ) : null}
    </>
  );
}
