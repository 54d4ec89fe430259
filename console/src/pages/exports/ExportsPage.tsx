import { useState } from "react";
import { Link, useLocation } from "wouter";
import { api } from "../../api.ts";
import { DataTable } from "../../components/DataTable.tsx";
import { ErrorBox } from "../../components/ErrorBox.tsx";
import { PageHeader } from "../../components/Layout.tsx";
import { StatusBadge } from "../../components/StatusBadge.tsx";
import { formatBytes, formatNumber, formatTime, shortId } from "../../format.ts";
import { useInterval, useLoad } from "../../hooks.ts";
import { DestinationForm } from "./DestinationForm.tsx";
import { ExportForm } from "./ExportForm.tsx";
import {
  type BulkExport,
  type Destination,
  destinationWhere,
  type ExportRun,
  FINISHED,
  type Progress,
  type Project,
  progressOf,
} from "./types.ts";

/** Progress is read from each export's runs; the newest exports only, so the page stays one round of requests. */
const PROGRESS_OF_NEWEST = 25;

/** An export's progress, or why it could not be read (undefined both: not read, e.g. a scheduled export). */
type ProgressResult = { progress?: Progress; error?: unknown };
type ExportRow = ProgressResult & { export: BulkExport };

/** Bulk exports: destinations, exports with their progress, and the forms to create both. */
export function ExportsPage() {
  const [, navigate] = useLocation();
  const [showDestinationForm, setShowDestinationForm] = useState(false);
  const [showExportForm, setShowExportForm] = useState(false);
  const destinations = useLoad((signal) => api<Destination[]>("/api/v1/bulk-exports/destinations", { signal }), []);
  const projects = useLoad((signal) => api<Project[]>("/api/v1/sessions", { query: { limit: 100 }, signal }), []);
  const exports = useLoad(async (signal) => {
    const list = await api<BulkExport[]>("/api/v1/bulk-exports", { signal });
    const progress = await Promise.all(
      list.slice(0, PROGRESS_OF_NEWEST).map(async (e): Promise<ProgressResult> => {
        if (e.status === "IntervalScheduled") return {};
        try {
          return { progress: progressOf(await api<ExportRun[]>(`/api/v1/bulk-exports/${e.id}/runs`, { signal })) };
        } catch (reason) {
          // One export's runs failing shows in its row and leaves the others.
          if (signal.aborted) throw reason;
          return { error: reason };
        }
      }),
    );
    return list.map((e, i): ExportRow => ({ export: e, ...progress[i] }));
  }, []);
  // A row whose progress failed is not polled again: its error stays on screen until a reload.
  const running = exports.data?.some(
    (row) => !row.error && !FINISHED.has(row.export.status) && row.export.status !== "IntervalScheduled",
  );
  useInterval(exports.reload, 2000, Boolean(running) && !exports.loading && !exports.error);

  const destinationName = new Map(destinations.data?.map((d) => [d.id, d.display_name]));
  const projectName = new Map(projects.data?.map((p) => [p.id, p.name]));

  return (
    <>
      <PageHeader title="Bulk exports">
        <button type="button" className="secondary" onClick={() => setShowDestinationForm(!showDestinationForm)}>
          {showDestinationForm ? "Close destination form" : "New destination"}
        </button>
        <button type="button" onClick={() => setShowExportForm(!showExportForm)}>
          {showExportForm ? "Close export form" : "New export"}
        </button>
      </PageHeader>
      {showDestinationForm ? (
        <DestinationForm
          onCreated={() => {
            setShowDestinationForm(false);
            destinations.reload();
          }}
        />
      ) : null}
      {showExportForm ? (
        <ExportForm
          destinations={destinations.data ?? []}
          projects={projects.data ?? []}
          onCreated={(created) => navigate(`/exports/${created.id}`)}
        />
      ) : null}

      <h2>Exports</h2>
      <DataTable
        label="Exports"
        columns={[
          "Export",
          "Status",
          "Project",
          "Window",
          "Runs done",
          "Rows",
          "Files",
          "Bytes",
          "Destination",
          "Created",
        ]}
        rows={exports.data}
        loading={exports.loading}
        error={exports.error}
        empty="No exports yet."
      >
        {({ export: e, progress, error }) => (
          <tr key={e.id} data-export-id={e.id}>
            <td className="mono">
              <Link href={`/exports/${e.id}`}>{shortId(e.id)}</Link>
            </td>
            <td>
              <StatusBadge status={e.status} />
            </td>
            <td>{projectName.get(e.session_id) ?? shortId(e.session_id)}</td>
            <td>{windowOf(e)}</td>
            <ProgressCells progress={progress} error={error} />
            <td>{destinationName.get(e.bulk_export_destination_id) ?? shortId(e.bulk_export_destination_id)}</td>
            <td>{formatTime(e.created_at)}</td>
          </tr>
        )}
      </DataTable>

      <h2>Destinations</h2>
      <DataTable
        label="Destinations"
        columns={["Name", "Writes to", "Credentials", "Id", "Created"]}
        rows={destinations.data}
        error={destinations.error ?? projects.error}
        empty="No destinations yet."
      >
        {(d) => (
          <tr key={d.id}>
            <td>{d.display_name}</td>
            <td className="mono">{destinationWhere(d.config)}</td>
            {/* Only the names of the stored fields: the API never returns their values. */}
            <td>
              {d.credentials_keys.length
                ? `${d.credentials_keys.join(", ")} (stored, hidden)`
                : d.config.r2_binding
                  ? "none (binding)"
                  : "deployment default"}
            </td>
            <td className="mono">{shortId(d.id)}</td>
            <td>{formatTime(d.created_at)}</td>
          </tr>
        )}
      </DataTable>
    </>
  );
}

export function windowOf(e: BulkExport): string {
  const start = formatTime(e.start_time);
  if (e.interval_hours) return `from ${start}, every ${e.interval_hours} h`;
  return `${start} → ${formatTime(e.end_time)}`;
}

function ProgressCells({ progress, error }: ProgressResult) {
  if (error)
    return (
      <td colSpan={4}>
        <ErrorBox error={error} title="Progress" />
      </td>
    );
  if (!progress)
    return (
      <>
        <td>—</td>
        <td>—</td>
        <td>—</td>
        <td>—</td>
      </>
    );
  return (
    <>
      <td data-label="runs">
        {progress.done} / {progress.planned}
      </td>
      <td data-label="rows">{formatNumber(progress.rows)}</td>
      <td data-label="files">{formatNumber(progress.files)}</td>
      <td data-label="bytes">{formatBytes(progress.bytes)}</td>
    </>
  );
}
