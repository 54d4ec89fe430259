import { Link, useParams, useSearchParams } from "wouter";
import { Empty, ErrorBox, Loading } from "../../components/ErrorBox.tsx";
import { PageHeader } from "../../components/Layout.tsx";
import { StatusBadge } from "../../components/StatusBadge.tsx";
import { formatCost, formatDuration, formatNumber, formatTime, shortId } from "../../format.ts";
import { useLoad } from "../../hooks.ts";
import { RunDetail } from "./RunDetail.tsx";
import { TraceTree } from "./TraceTree.tsx";
import { loadTrace, MAX_TRACE_RUNS, runSeconds, threadIdOf, toNumber } from "./tracing-api.ts";

/** A trace: its runs as a tree with a waterfall, and the selected run (`?run=`) beside it. */
export function TracePage() {
  const { traceId } = useParams<{ traceId: string }>();
  const [params, setParams] = useSearchParams();
  const { data, error, loading, reload } = useLoad((signal) => loadTrace(traceId, signal), [traceId]);
  const runs = data?.runs ?? [];
  const root = runs.find((run) => run.id === traceId) ?? runs.find((run) => !run.parent_run_id) ?? runs[0];
  const selected = runs.find((run) => run.id === params.get("run")) ?? root;
  const threadId = root ? threadIdOf(root) : undefined;
  const seconds = root ? runSeconds(root) : null;
  const tokens = runs.reduce((sum, run) => sum + (run.total_tokens ?? 0), 0);
  const cost = runs.reduce<number | null>((sum, run) => {
    const value = toNumber(run.total_cost);
    return value === null ? sum : (sum ?? 0) + value;
  }, null);

  return (
    <>
      <PageHeader
        title={
          <>
            <Link href="/traces" className="muted">
              Traces
            </Link>{" "}
            / {root?.name ?? "Trace"} <span className="muted mono small">{shortId(traceId)}</span>
          </>
        }
      >
        <button type="button" className="secondary" onClick={reload}>
          Refresh
        </button>
      </PageHeader>
      <ErrorBox error={error} />
      {loading && !data ? <Loading what="Loading the trace" /> : null}
      {data && runs.length === 0 ? (
        <Empty>No runs stored for trace {traceId} (yet: tracers send runs when they end).</Empty>
      ) : null}
      {root ? (
        <div className="trace-summary">
          <StatusBadge status={root.status} />
          <span>
            <span className="muted">Runs</span> <strong data-testid="trace-run-count">{runs.length}</strong>
          </span>
          <span>
            <span className="muted">Latency</span> {formatDuration(seconds === null ? null : seconds * 1000)}
          </span>
          <span>
            <span className="muted">Tokens</span> {formatNumber(tokens)}
          </span>
          <span>
            <span className="muted">Cost</span> {formatCost(cost)}
          </span>
          <span>
            <span className="muted">Started</span> {formatTime(root.start_time)}
          </span>
          <Link href={`/traces/projects/${root.session_id}`}>Project runs</Link>
          {threadId ? (
            <Link href={`/threads/${threadId}`} data-testid="trace-thread-link">
              Thread {shortId(threadId)}
            </Link>
          ) : null}
        </div>
      ) : null}
      {data?.more ? (
        <p className="muted">This trace holds more than {MAX_TRACE_RUNS} runs; the first ones are shown.</p>
      ) : null}
      {runs.length ? (
        <div className="trace-layout">
          <TraceTree
            runs={runs}
            selectedId={selected?.id}
            onSelect={(id) => setParams({ run: id }, { replace: true })}
          />
          {selected ? <RunDetail run={selected} /> : null}
        </div>
      ) : null}
    </>
  );
}
