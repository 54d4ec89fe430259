import { Link, useSearchParams } from "wouter";
import { Empty, ErrorBox, Loading } from "../../components/ErrorBox.tsx";
import { PageHeader } from "../../components/Layout.tsx";
import { formatCost, formatDuration, formatNumber, formatTime } from "../../format.ts";
import { useLoad } from "../../hooks.ts";
import { listProjects, type RunStats, type RunsQuery, runStats, type TracerSession } from "./tracing-api.ts";

/** The time ranges a person picks from; "all" sends no start_time. */
export const RANGES = [
  { value: "1h", label: "Last hour", ms: 3_600_000 },
  { value: "24h", label: "Last 24 hours", ms: 86_400_000 },
  { value: "7d", label: "Last 7 days", ms: 7 * 86_400_000 },
  { value: "30d", label: "Last 30 days", ms: 30 * 86_400_000 },
  { value: "all", label: "All time", ms: null },
] as const;

type ProjectRow = { project: TracerSession; stats?: RunStats; error?: unknown };

/** Projects with their run stats over the chosen range: one `/runs/stats` per project. */
export function ProjectsPage() {
  const [params, setParams] = useSearchParams();
  const range = RANGES.find((r) => r.value === params.get("range")) ?? RANGES[1];
  const rootsOnly = params.get("scope") === "roots";
  const { data, error, loading, reload } = useLoad(
    async (signal) => {
      const projects = await listProjects(signal);
      const start_time = range.ms === null ? undefined : new Date(Date.now() - range.ms).toISOString();
      return Promise.all(
        projects.map(async (project): Promise<ProjectRow> => {
          const body: RunsQuery = { session: [project.id], start_time, is_root: rootsOnly || undefined };
          try {
            return { project, stats: await runStats(body, signal) };
          } catch (reason) {
            // One project's stats failing (e.g. too many days for "all time") leaves the others.
            if (signal.aborted) throw reason;
            return { project, error: reason };
          }
        }),
      );
    },
    [range.value, rootsOnly],
  );
  const set = (name: string, value: string) =>
    setParams((current) => {
      const next = new URLSearchParams(current);
      next.set(name, value);
      return next;
    });
  return (
    <>
      <PageHeader title="Tracing projects">
        <label>
          Time range
          <select value={range.value} onChange={(event) => set("range", event.target.value)}>
            {RANGES.map((r) => (
              <option key={r.value} value={r.value}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Runs counted
          <select value={rootsOnly ? "roots" : "all"} onChange={(event) => set("scope", event.target.value)}>
            <option value="all">All runs</option>
            <option value="roots">Root runs (traces)</option>
          </select>
        </label>
        <button type="button" className="secondary" onClick={reload}>
          Refresh
        </button>
      </PageHeader>
      <ErrorBox error={error} />
      {loading && !data ? <Loading /> : null}
      {data && data.length === 0 ? (
        <Empty>No tracing projects yet: runs traced with the langsmith SDKs or by the Agent Server appear here.</Empty>
      ) : null}
      {data && data.length > 0 ? (
        <div className="table-wrap">
          <table className="table" aria-label="Tracing projects" aria-busy={loading}>
            <thead>
              <tr>
                <th>Project</th>
                <th className="num">Runs</th>
                <th className="num">Error rate</th>
                <th className="num">Latency p50</th>
                <th className="num">Latency p99</th>
                <th className="num">Tokens</th>
                <th className="num">Cost</th>
                <th>Last run</th>
              </tr>
            </thead>
            <tbody>
              {data.map((row) => (
                <ProjectStatsRow key={row.project.id} row={row} />
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}

function ProjectStatsRow({ row: { project, stats, error } }: { row: ProjectRow }) {
  const name = <Link href={`/traces/projects/${project.id}`}>{project.name}</Link>;
  if (error || !stats) {
    return (
      <tr data-project={project.name}>
        <td className="project-name">{name}</td>
        <td colSpan={7}>
          <ErrorBox error={error} title="Stats" />
        </td>
      </tr>
    );
  }
  const seconds = (value: number | null) => (value === null ? "—" : formatDuration(value * 1000));
  return (
    <tr data-project={project.name}>
      <td className="project-name">{name}</td>
      <td className="num" data-stat="run_count" data-value={stats.run_count}>
        {formatNumber(stats.run_count)}
      </td>
      <td className="num" data-stat="error_rate" data-value={stats.error_rate ?? ""}>
        {stats.error_rate === null ? "—" : `${formatNumber(stats.error_rate * 100, 1)}%`}
      </td>
      <td className="num" data-stat="latency_p50" data-value={stats.latency_p50 ?? ""}>
        {seconds(stats.latency_p50)}
      </td>
      <td className="num" data-stat="latency_p99" data-value={stats.latency_p99 ?? ""}>
        {seconds(stats.latency_p99)}
      </td>
      <td
        className="num"
        data-stat="total_tokens"
        data-value={stats.total_tokens}
        title={`${formatNumber(stats.prompt_tokens)} prompt + ${formatNumber(stats.completion_tokens)} completion`}
      >
        {formatNumber(stats.total_tokens)}
      </td>
      <td className="num" data-stat="total_cost" data-value={stats.total_cost ?? ""}>
        {formatCost(stats.total_cost)}
      </td>
      <td className="nowrap">{formatTime(stats.last_run_start_time)}</td>
    </tr>
  );
}
