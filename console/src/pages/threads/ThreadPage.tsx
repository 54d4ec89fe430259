import { useCallback, useState } from "react";
import { Link, useParams, useSearchParams } from "wouter";
import { langGraphClient } from "../../api.ts";
import { ErrorBox, Loading } from "../../components/ErrorBox.tsx";
import { PageHeader } from "../../components/Layout.tsx";
import { RunsTable } from "../../components/RunsTable.tsx";
import { Stat } from "../../components/Stat.tsx";
import { StatusBadge } from "../../components/StatusBadge.tsx";
import { formatTime, shortId } from "../../format.ts";
import { useLoad } from "../../hooks.ts";
import { EditStateTab } from "./EditStateTab.tsx";
import { HistoryTab } from "./HistoryTab.tsx";
import { StateTab } from "./StateTab.tsx";
import { graphNodeNames } from "./values.ts";

const TABS = [
  { id: "state", label: "State" },
  { id: "history", label: "History" },
  { id: "edit", label: "Edit state" },
  { id: "runs", label: "Runs" },
] as const;
type TabId = (typeof TABS)[number]["id"];

/** One thread: its state, its checkpoints (fork from any), state edits and runs. The tab is in the URL. */
export function ThreadPage() {
  const { threadId = "" } = useParams<{ threadId: string }>();
  const [params, setParams] = useSearchParams();
  const tab: TabId = TABS.find((entry) => entry.id === params.get("tab"))?.id ?? "state";
  // Bumped after a fork or an edit so every view of the thread reads it again.
  const [version, setVersion] = useState(0);
  const changed = useCallback(() => setVersion((n) => n + 1), []);

  const thread = useLoad((signal) => langGraphClient().threads.get(threadId, { signal }), [threadId, version]);
  const metadata = thread.data?.metadata ?? {};
  const graphId = typeof metadata.graph_id === "string" ? metadata.graph_id : undefined;
  const assistantId = typeof metadata.assistant_id === "string" ? metadata.assistant_id : graphId;
  // The graph's nodes, for "as node"; without them the field takes free text.
  const graph = useLoad(
    async (signal) => (assistantId ? langGraphClient().assistants.getGraph(assistantId, { signal }) : undefined),
    [assistantId],
  );
  const nodes = graph.data ? graphNodeNames(graph.data.nodes) : undefined;

  return (
    <>
      <PageHeader
        title={
          <>
            Thread <span className="mono thread-title-id">{threadId}</span>
          </>
        }
      >
        <Link href="/threads">All threads</Link>
      </PageHeader>
      <ErrorBox error={thread.error} />
      {thread.loading && !thread.data ? <Loading /> : null}
      {thread.data ? (
        <div className="stats thread-summary">
          <Stat label="Status" value={<StatusBadge status={thread.data.status} />} />
          <Stat label="Graph" value={graphId ?? "—"} />
          <Stat
            label="Assistant"
            valueClassName="mono"
            value={
              typeof metadata.assistant_id === "string" ? (
                <Link href={`/assistants/${metadata.assistant_id}`} title={metadata.assistant_id}>
                  {shortId(metadata.assistant_id)}
                </Link>
              ) : (
                "—"
              )
            }
          />
          <Stat label="Created" valueClassName="small" value={formatTime(thread.data.created_at)} />
          <Stat label="Updated" valueClassName="small" value={formatTime(thread.data.updated_at)} />
        </div>
      ) : null}
      <div className="tabs" role="tablist" aria-label="Thread views">
        {TABS.map((entry) => (
          <button
            key={entry.id}
            type="button"
            role="tab"
            aria-selected={tab === entry.id}
            onClick={() => {
              const next = new URLSearchParams(params);
              if (entry.id === "state") next.delete("tab");
              else next.set("tab", entry.id);
              setParams(next);
            }}
          >
            {entry.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" aria-label={TABS.find((entry) => entry.id === tab)?.label}>
        {tab === "state" ? <StateTab threadId={threadId} assistantId={assistantId} version={version} /> : null}
        {tab === "history" ? (
          <HistoryTab
            threadId={threadId}
            assistantId={assistantId}
            nodes={nodes}
            version={version}
            onChange={changed}
          />
        ) : null}
        {tab === "edit" ? (
          <EditStateTab threadId={threadId} nodes={nodes} version={version} onChange={changed} />
        ) : null}
        {tab === "runs" ? <RunsTable threadId={threadId} refresh={version} /> : null}
      </div>
    </>
  );
}
