import type { Client, Run } from "@langchain/langgraph-sdk";
import { useEffect } from "react";
import { Link } from "wouter";
import { readableError } from "../../api.ts";
import { ErrorBox, Loading } from "../../components/ErrorBox.tsx";
import { StatusBadge } from "../../components/StatusBadge.tsx";
import { elapsed, formatDuration, formatTime } from "../../format.ts";
import { useInterval, useLoad } from "../../hooks.ts";
import { runLabel } from "./util.ts";

const ACTIVE = new Set(["pending", "running"]);

/** The runs of a thread, newest first, with status, timing and a link to each run's trace. */
export function ThreadRuns({ client, threadId, refresh }: { client: Client; threadId: string; refresh: unknown }) {
  const { data, error, reload } = useLoad(
    (signal) => client.runs.list(threadId, { limit: 20, signal }),
    [client, threadId],
  );
  // biome-ignore lint/correctness/useExhaustiveDependencies: `refresh` changes when a run starts or ends.
  useEffect(() => reload(), [refresh, reload]);
  // A run still going (here or elsewhere) is polled until it settles.
  useInterval(reload, 1500, !error && (data?.some((run) => ACTIVE.has(run.status)) ?? false));
  return (
    <section aria-label="Runs of this thread">
      <h2>Runs</h2>
      <ErrorBox error={readableError(error)} />
      {!data && !error ? <Loading /> : null}
      {data && data.length === 0 ? <p className="muted">No runs yet.</p> : null}
      {data && data.length > 0 ? (
        <div className="table-wrap">
          <table className="table" aria-label="Runs">
            <thead>
              <tr>
                <th>Run</th>
                <th>Status</th>
                <th>Started</th>
                <th>Duration</th>
                <th>Trace</th>
              </tr>
            </thead>
            <tbody>
              {data.map((run: Run) => (
                <tr key={run.run_id} data-run-id={run.run_id}>
                  <td className="mono" title={run.run_id}>
                    {runLabel(run.run_id)}
                  </td>
                  <td>
                    <StatusBadge status={run.status} />
                  </td>
                  <td>{formatTime(run.created_at)}</td>
                  <td>{ACTIVE.has(run.status) ? "…" : formatDuration(elapsed(run.created_at, run.updated_at))}</td>
                  <td>
                    <Link href={`/traces/agent-runs/${run.run_id}`}>trace</Link>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
