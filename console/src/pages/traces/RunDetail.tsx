import type { ReactNode } from "react";
import { Link } from "wouter";
import { Empty, ErrorBox, Loading } from "../../components/ErrorBox.tsx";
import { JsonTree } from "../../components/JsonTree.tsx";
import { StatusBadge } from "../../components/StatusBadge.tsx";
import { formatCost, formatDuration, formatNumber, formatTime } from "../../format.ts";
import { useLoad } from "../../hooks.ts";
import { getRun, listFeedback, runSeconds, type TracedRun, threadIdOf, toNumber } from "./tracing-api.ts";

/**
 * One run of a trace: what the trace list already holds is shown at once; the run itself is
 * re-read for its attachments (pre-signed URLs only come with GET /runs/{id}), with its feedback.
 */
export function RunDetail({ run: listed }: { run: TracedRun }) {
  const { data, error, loading } = useLoad(
    async (signal) => {
      const [run, feedback] = await Promise.all([getRun(listed.id, signal), listFeedback(listed.id, signal)]);
      return { run, feedback };
    },
    [listed.id],
  );
  const run = data?.run.id === listed.id ? data.run : listed;
  const metadata = run.extra?.metadata;
  const threadId = threadIdOf(run);
  const attachments = Object.entries(run.s3_urls ?? {}).filter(([key]) => key.startsWith("attachment."));
  const seconds = runSeconds(run);
  return (
    <section className="run-detail card" aria-label="Selected run">
      <div className="run-detail-head">
        <h2>{run.name}</h2>
        <StatusBadge status={run.status} />
        <span className={`run-type run-type-${run.run_type}`}>{run.run_type}</span>
      </div>
      <div className="muted mono small">{run.id}</div>
      {threadId ? (
        <p>
          <Link href={`/threads/${threadId}`}>Open thread {threadId}</Link>
        </p>
      ) : null}
      <dl className="run-facts">
        <Fact label="Latency">{formatDuration(seconds === null ? null : seconds * 1000)}</Fact>
        <Fact label="Start">{formatTime(run.start_time)}</Fact>
        <Fact label="End">{formatTime(run.end_time)}</Fact>
        <Fact label="Tokens">
          {run.total_tokens || run.prompt_tokens || run.completion_tokens ? (
            <span data-testid="run-tokens">
              {formatNumber(run.prompt_tokens)} prompt · {formatNumber(run.completion_tokens)} completion ·{" "}
              <strong>{formatNumber(run.total_tokens)}</strong> total
            </span>
          ) : (
            <span className="muted">none</span>
          )}
        </Fact>
        <Fact label="Cost">
          {toNumber(run.total_cost) === null ? (
            <span className="muted">none</span>
          ) : (
            <span data-testid="run-cost">
              {formatCost(toNumber(run.prompt_cost))} prompt · {formatCost(toNumber(run.completion_cost))} completion ·{" "}
              <strong>{formatCost(toNumber(run.total_cost))}</strong> total
            </span>
          )}
        </Fact>
        <Fact label="Tags">
          {run.tags?.length ? (
            run.tags.map((tag) => (
              <span key={tag} className="badge badge-neutral tag">
                {tag}
              </span>
            ))
          ) : (
            <span className="muted">none</span>
          )}
        </Fact>
      </dl>
      <ErrorBox error={error} title="Run details" />
      {run.error ? (
        <>
          <h3>Error</h3>
          <pre className="run-error">{run.error}</pre>
        </>
      ) : null}
      <h3>Inputs</h3>
      <div data-testid="run-inputs">
        {run.inputs && Object.keys(run.inputs).length ? <JsonTree value={run.inputs} /> : <Empty>No inputs.</Empty>}
      </div>
      <h3>Outputs</h3>
      <div data-testid="run-outputs">
        {run.outputs && Object.keys(run.outputs).length ? <JsonTree value={run.outputs} /> : <Empty>No outputs.</Empty>}
      </div>
      <h3>Metadata</h3>
      {metadata && Object.keys(metadata).length ? <JsonTree value={metadata} openDepth={1} /> : <Empty>None.</Empty>}
      <h3>Attachments</h3>
      {loading && !data ? <Loading /> : null}
      {attachments.length ? (
        <ul className="attachments" aria-label="Attachments">
          {attachments.map(([key, entry]) => {
            const name = key.slice("attachment.".length);
            return (
              <li key={key}>
                <a href={entry.presigned_url} download={name} rel="noreferrer">
                  {name}
                </a>{" "}
                <span className="muted small">{entry.mime_type}</span>
              </li>
            );
          })}
        </ul>
      ) : data ? (
        <Empty>None.</Empty>
      ) : null}
      <h3>Feedback</h3>
      {data?.feedback.length ? (
        <div className="table-wrap">
          <table className="table" aria-label="Feedback">
            <thead>
              <tr>
                <th>Key</th>
                <th className="num">Score</th>
                <th>Value</th>
                <th>Comment</th>
              </tr>
            </thead>
            <tbody>
              {data.feedback.map((item) => (
                <tr key={item.id}>
                  <td>{item.key}</td>
                  <td className="num">{formatNumber(item.score, 3)}</td>
                  <td className="mono">
                    {item.value === null || item.value === undefined ? "—" : JSON.stringify(item.value)}
                  </td>
                  <td>{item.comment ?? "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : data ? (
        <Empty>No feedback.</Empty>
      ) : null}
    </section>
  );
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}
