import { type FormEvent, useState } from "react";
import { api } from "../../api.ts";
import { ErrorBox } from "../../components/ErrorBox.tsx";
import type { BulkExport, Destination, Project } from "./types.ts";

/** `datetime-local` gives no zone: the form says UTC, and means it. */
const utc = (value: string) => (value ? new Date(`${value}Z`).toISOString() : undefined);

/** Creates a one-off export (a time window) or a scheduled one (every N hours from the start). */
export function ExportForm({
  destinations,
  projects,
  onCreated,
}: {
  destinations: Destination[];
  projects: Project[];
  onCreated: (created: BulkExport) => void;
}) {
  const [destination, setDestination] = useState("");
  const [project, setProject] = useState("");
  const [start, setStart] = useState("");
  const [end, setEnd] = useState("");
  const [interval, setInterval] = useState("");
  const [filter, setFilter] = useState("");
  const [formatVersion, setFormatVersion] = useState("v1");
  const [compression, setCompression] = useState("zstandard");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await api<BulkExport>("/api/v1/bulk-exports", {
        body: {
          bulk_export_destination_id: destination || destinations[0]?.id,
          session_id: project || projects[0]?.id,
          start_time: utc(start),
          end_time: interval ? undefined : utc(end),
          interval_hours: interval ? Number(interval) : undefined,
          filter: filter || undefined,
          format_version: formatVersion,
          compression,
        },
      });
      onCreated(created);
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="card export-form" aria-label="New export" onSubmit={submit}>
      <h3>New export</h3>
      <div className="form-grid">
        <label>
          Destination
          <select required value={destination} onChange={(e) => setDestination(e.target.value)}>
            {destinations.map((d) => (
              <option key={d.id} value={d.id}>
                {d.display_name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Project
          <select required value={project} onChange={(e) => setProject(e.target.value)}>
            {projects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Start (UTC)
          <input type="datetime-local" required value={start} onChange={(e) => setStart(e.target.value)} />
        </label>
        <label>
          End (UTC)
          <input
            type="datetime-local"
            required={!interval}
            disabled={Boolean(interval)}
            value={end}
            onChange={(e) => setEnd(e.target.value)}
          />
        </label>
        <label>
          Every N hours (scheduled)
          <input
            type="number"
            min={1}
            max={168}
            value={interval}
            onChange={(e) => setInterval(e.target.value)}
            placeholder="one-off"
          />
        </label>
        <label>
          Filter (optional)
          <input value={filter} onChange={(e) => setFilter(e.target.value)} placeholder='eq(run_type, "llm")' />
        </label>
        <label>
          Format version
          <select value={formatVersion} onChange={(e) => setFormatVersion(e.target.value)}>
            <option value="v1">Parquet v1</option>
            <option value="v2_beta">Parquet v2_beta</option>
          </select>
        </label>
        <label>
          Compression
          <select value={compression} onChange={(e) => setCompression(e.target.value)}>
            {["zstandard", "snappy", "gzip", "none"].map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
      </div>
      <ErrorBox error={error} />
      <div className="row">
        <button type="submit" disabled={busy || destinations.length === 0 || projects.length === 0}>
          Create export
        </button>
        {destinations.length === 0 ? <span className="muted">Create a destination first.</span> : null}
        {projects.length === 0 ? <span className="muted">No tracing project to export yet.</span> : null}
      </div>
    </form>
  );
}
