import { Link } from "wouter";
import { langGraphClient } from "../../api.ts";
import { Empty, ErrorBox, Loading } from "../../components/ErrorBox.tsx";
import { StatusBadge } from "../../components/StatusBadge.tsx";
import { elapsed, formatDuration, formatTime } from "../../format.ts";
import { useInterval, useLoad } from "../../hooks.ts";

const ACTIVE = new Set(["pending", "running"]);

/** The thread's runs, newest first, each linking to its trace; refreshes while one is active. */
export function RunsTab({ threadId, version }: { threadId: string; version: number }) {
  const { data, error, loading, reload } = useLoad(
    (signal) => langGraphClient().runs.list(threadId, { limit: 100, signal }),
    [threadId, version],
  );
  useInterval(reload, 2000, !error && Boolean(data?.some((run) => ACTIVE.has(run.status))));
  if (error) return <ErrorBox error={error} />;
  if (loading && !data) return <Loading />;
  if (!data) return null;
  if (data.length === 0) return <Empty>No runs on this thread.</Empty>;
  return (
    <div className="table-wrap">
      <table className="table" aria-label="Runs">
        <thead>
          <tr>
            <th>Run</th>
            <th>Status</th>
            <th>Created</th>
            <th>Updated</th>
            <th>Duration</th>
            <th>Trace</th>
          </tr>
        </thead>
        <tbody>
          {data.map((run) => (
            <tr key={run.run_id}>
              <td className="mono">{run.run_id}</td>
              <td>
                <StatusBadge status={run.status} />
              </td>
              <td>{formatTime(run.created_at)}</td>
              <td>{formatTime(run.updated_at)}</td>
              <td>{ACTIVE.has(run.status) ? "…" : formatDuration(elapsed(run.created_at, run.updated_at))}</td>
              <td>
                <Link href={`/traces/agent-runs/${run.run_id}`} aria-label={`Trace of run ${run.run_id}`}>
                  trace
                </Link>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
