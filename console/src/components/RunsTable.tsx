import type { Client } from "@langchain/langgraph-sdk";
import { useEffect } from "react";
import { Link } from "wouter";
import { langGraphClient } from "../api.ts";
import { elapsed, formatDuration, formatTime, shortId } from "../format.ts";
import { useInterval, useLoad } from "../hooks.ts";
import { DataTable } from "./DataTable.tsx";
import { StatusBadge } from "./StatusBadge.tsx";

/** Statuses of a run that has not settled yet (its duration is still growing). */
const ACTIVE = new Set(["pending", "running"]);

/**
 * The runs of a thread, newest first, with status, timing and a link to each run's trace. A run
 * still going (here or elsewhere) is polled until it settles; `refresh` changing reloads at once
 * (a run was started or ended by the page).
 */
export function RunsTable({
  threadId,
  client,
  limit = 100,
  refresh,
}: {
  threadId: string;
  client?: Client;
  limit?: number;
  refresh?: unknown;
}) {
  const { data, error, loading, reload } = useLoad(
    (signal) => (client ?? langGraphClient()).runs.list(threadId, { limit, signal }),
    [client, threadId, limit],
  );
  // biome-ignore lint/correctness/useExhaustiveDependencies: `refresh` changes when a run starts or ends.
  useEffect(() => reload(), [refresh, reload]);
  useInterval(reload, 1500, !error && (data?.some((run) => ACTIVE.has(run.status)) ?? false));
  return (
    <DataTable
      label="Runs"
      columns={["Run", "Status", "Started", "Duration", "Trace"]}
      rows={data}
      loading={loading}
      error={error}
      empty="No runs on this thread yet."
    >
      {(run) => (
        <tr key={run.run_id} data-run-id={run.run_id}>
          <td className="mono" title={run.run_id}>
            {shortId(run.run_id)}
          </td>
          <td>
            <StatusBadge status={run.status} />
          </td>
          <td>{formatTime(run.created_at)}</td>
          <td>{ACTIVE.has(run.status) ? "…" : formatDuration(elapsed(run.created_at, run.updated_at))}</td>
          <td>
            <Link href={`/traces/agent-runs/${run.run_id}`} aria-label={`Trace of run ${run.run_id}`}>
              trace
            </Link>
          </td>
        </tr>
      )}
    </DataTable>
  );
}
