import { type FormEvent, useEffect, useMemo, useState } from "react";
import { Link, useParams, useSearchParams } from "wouter";
import { Empty, ErrorBox, Loading } from "../../components/ErrorBox.tsx";
import { PageHeader } from "../../components/Layout.tsx";
import { StatusBadge } from "../../components/StatusBadge.tsx";
import { formatCost, formatDuration, formatNumber, formatTime } from "../../format.ts";
import { useLoad } from "../../hooks.ts";
import { FilterErrorView } from "./FilterError.tsx";
import { getProject, queryRuns, runSeconds, TABLE_SELECT, type TracedRun, toNumber } from "./tracing-api.ts";

const PAGE_SIZE = 50;

const EXAMPLES = [
  'and(eq(run_type, "llm"), gt(latency, 1))',
  "neq(error, null)",
  'search(name, "agent")',
  'has(tags, "beta")',
];

/**
 * A project's runs: the filter language typed in a text box (a refused filter shows the parser's
 * position), ordered by start time on the server, paged by the API's cursor. The filter, order and
 * root-only switch live in the URL so a view can be shared.
 */
export function RunsPage() {
  const { projectId } = useParams<{ projectId: string }>();
  const [params, setParams] = useSearchParams();
  const filter = params.get("filter") ?? "";
  const order = params.get("order") === "asc" ? "asc" : "desc";
  const rootsOnly = params.get("roots") === "1";
  const [draft, setDraft] = useState(filter);
  // The cursors of the pages before the current one, and the current page's; a new query starts
  // at its first page.
  const queryKey = JSON.stringify([projectId, filter, order, rootsOnly]);
  const [paging, setPaging] = useState<{ key: string; cursors: (string | undefined)[] }>({
    key: queryKey,
    cursors: [undefined],
  });
  const cursors = paging.key === queryKey ? paging.cursors : [undefined];
  const setCursors = (next: (string | undefined)[]) => setPaging({ key: queryKey, cursors: next });
  const cursor = cursors.at(-1);
  const [latencySort, setLatencySort] = useState<"asc" | "desc" | null>(null);

  useEffect(() => setDraft(filter), [filter]);

  const project = useLoad((signal) => getProject(projectId, signal), [projectId]);
  const runs = useLoad(
    (signal) =>
      queryRuns(
        {
          session: [projectId],
          filter: filter || undefined,
          is_root: rootsOnly || undefined,
          order,
          limit: PAGE_SIZE,
          cursor,
          select: TABLE_SELECT,
        },
        signal,
      ),
    [projectId, filter, order, rootsOnly, cursor],
  );

  const update = (changes: Record<string, string | null>) =>
    setParams((current) => {
      const next = new URLSearchParams(current);
      for (const [name, value] of Object.entries(changes)) {
        if (value === null || value === "") next.delete(name);
        else next.set(name, value);
      }
      return next;
    });
  const apply = (event: FormEvent) => {
    event.preventDefault();
    // The same filter again re-runs the query (e.g. for new runs).
    if (draft.trim() === filter) runs.reload();
    else update({ filter: draft.trim() });
  };

  const shown = useMemo(() => {
    const list = runs.data?.runs ?? [];
    if (!latencySort) return list;
    const sign = latencySort === "asc" ? 1 : -1;
    return [...list].sort((a, b) => sign * ((runSeconds(a) ?? -1) - (runSeconds(b) ?? -1)));
  }, [runs.data, latencySort]);

  const startSort = latencySort ? "none" : order === "asc" ? "ascending" : "descending";
  return (
    <>
      <PageHeader
        title={
          <>
            <Link href="/traces" className="muted">
              Traces
            </Link>{" "}
            / {project.data?.name ?? projectId}
          </>
        }
      />
      <ErrorBox error={project.error} title="Project" />
      <form className="runs-filter card" onSubmit={apply} aria-label="Filter runs">
        <label className="grow">
          Filter
          <input
            type="text"
            className="mono"
            value={draft}
            onChange={(event) => setDraft(event.target.value)}
            placeholder={EXAMPLES[0]}
            spellCheck={false}
            autoComplete="off"
            aria-describedby="filter-help"
          />
        </label>
        <button type="submit">Apply</button>
        {filter ? (
          <button type="button" className="secondary" onClick={() => update({ filter: null })}>
            Clear
          </button>
        ) : null}
        <label className="checkbox">
          <input
            type="checkbox"
            checked={rootsOnly}
            onChange={(event) => update({ roots: event.target.checked ? "1" : null })}
          />
          Root runs only
        </label>
        <div id="filter-help" className="muted small">
          e.g.{" "}
          {EXAMPLES.map((example, i) => (
            <span key={example}>
              {i ? " · " : ""}
              <button type="button" className="link mono" onClick={() => setDraft(example)}>
                {example}
              </button>
            </span>
          ))}
        </div>
      </form>
      {runs.error ? <FilterErrorView error={runs.error} filter={filter} /> : null}
      {runs.loading && !runs.data ? <Loading /> : null}
      {runs.data && !runs.error ? (
        <>
          {shown.length === 0 ? (
            <Empty>No runs match.</Empty>
          ) : (
            <div className="table-wrap">
              <table className="table" aria-label="Runs" aria-busy={runs.loading}>
                <thead>
                  <tr>
                    <th>Name</th>
                    <th>Type</th>
                    <th>Status</th>
                    <th aria-sort={startSort}>
                      <button
                        type="button"
                        onClick={() => {
                          setLatencySort(null);
                          update({ order: order === "desc" ? "asc" : null });
                        }}
                        title="The API orders runs by start time"
                      >
                        Start {latencySort ? "" : order === "desc" ? "↓" : "↑"}
                      </button>
                    </th>
                    <th className="num" aria-sort={latencySort ? `${latencySort}ending` : "none"}>
                      <button
                        type="button"
                        onClick={() => setLatencySort(latencySort === "desc" ? "asc" : "desc")}
                        title="Sorts the runs of this page (the API pages by start time)"
                      >
                        Latency {latencySort === "desc" ? "↓" : latencySort === "asc" ? "↑" : ""}
                      </button>
                    </th>
                    <th className="num">Tokens</th>
                    <th className="num">Cost</th>
                  </tr>
                </thead>
                <tbody>
                  {shown.map((run) => (
                    <RunRow key={run.id} run={run} />
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <div className="pager">
            <button
              type="button"
              className="secondary"
              disabled={cursors.length < 2}
              onClick={() => setCursors(cursors.slice(0, -1))}
            >
              Previous
            </button>
            <span className="muted">
              Page {cursors.length} · {shown.length} runs
              {latencySort ? " · latency order within this page" : ""}
            </span>
            <button
              type="button"
              className="secondary"
              disabled={!runs.data.cursors.next}
              onClick={() => runs.data?.cursors.next && setCursors([...cursors, runs.data.cursors.next])}
            >
              Next
            </button>
          </div>
        </>
      ) : null}
    </>
  );
}

function RunRow({ run }: { run: TracedRun }) {
  return (
    <tr data-run-id={run.id}>
      <td>
        <Link href={`/traces/trace/${run.trace_id}?run=${run.id}`}>{run.name}</Link>
        {run.parent_run_id ? null : <span className="muted small"> · root</span>}
      </td>
      <td>{run.run_type}</td>
      <td>
        <StatusBadge status={run.status} />
      </td>
      <td className="nowrap">{formatTime(run.start_time)}</td>
      <td className="num">{formatDuration((runSeconds(run) ?? Number.NaN) * 1000)}</td>
      <td className="num">{formatNumber(run.total_tokens)}</td>
      <td className="num">{formatCost(toNumber(run.total_cost))}</td>
    </tr>
  );
}
