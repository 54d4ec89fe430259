import type { AssistantGraph, AssistantVersion, GraphSchema } from "@langchain/langgraph-sdk";
import { useState } from "react";
import { Link, useParams } from "wouter";
import { langGraphClient } from "../../api.ts";
import { DataTable } from "../../components/DataTable.tsx";
import { ErrorBox, Loading } from "../../components/ErrorBox.tsx";
import { JsonTree } from "../../components/JsonTree.tsx";
import { PageHeader } from "../../components/Layout.tsx";
import { Stat } from "../../components/Stat.tsx";
import { formatTime } from "../../format.ts";
import { useLoad } from "../../hooks.ts";
import { GraphDiagram, GraphLegend } from "./GraphDiagram.tsx";
import type { GraphJson } from "./graph-layout.ts";

const TABS = ["Graph", "Schemas", "Versions", "Configuration"] as const;
type Tab = (typeof TABS)[number];

/** One assistant: its graph as a diagram, its schemas, versions and configuration. */
export function AssistantDetailPage() {
  const { assistantId = "" } = useParams<{ assistantId: string }>();
  const [tab, setTab] = useState<Tab>("Graph");
  const assistant = useLoad((signal) => langGraphClient().assistants.get(assistantId, { signal }), [assistantId]);
  const data = assistant.data;
  return (
    <>
      <PageHeader title={data ? data.name : "Assistant"}>
        <Link href={`/chat/${assistantId}`} className="button">
          Chat
        </Link>
      </PageHeader>
      <p className="muted">
        <Link href="/assistants">Assistants</Link> / <span className="mono">{assistantId}</span>
      </p>
      <ErrorBox error={assistant.error} />
      {assistant.loading && !data ? <Loading /> : null}
      {data ? (
        <>
          <div className="stats">
            <Stat label="Graph" value={data.graph_id} />
            <Stat label="Version" value={String(data.version)} />
            <Stat label="Created" value={formatTime(data.created_at)} />
            <Stat label="Updated" value={formatTime(data.updated_at)} />
          </div>
          {data.description ? <p>{data.description}</p> : null}
          <div className="tabs" role="tablist" aria-label="Assistant">
            {TABS.map((name) => (
              <button key={name} type="button" role="tab" aria-selected={tab === name} onClick={() => setTab(name)}>
                {name}
              </button>
            ))}
          </div>
          {tab === "Graph" ? <GraphTab assistantId={assistantId} /> : null}
          {tab === "Schemas" ? <SchemasTab assistantId={assistantId} /> : null}
          {tab === "Versions" ? (
            <VersionsTab assistantId={assistantId} current={data.version} onChange={assistant.reload} />
          ) : null}
          {tab === "Configuration" ? (
            <div className="grid">
              <JsonCard title="Config" value={data.config} />
              <JsonCard title="Context" value={data.context} />
              <JsonCard title="Metadata" value={data.metadata} />
            </div>
          ) : null}
        </>
      ) : null}
    </>
  );
}

function JsonCard({ title, value }: { title: string; value: unknown }) {
  const empty = value === null || value === undefined || (typeof value === "object" && Object.keys(value).length === 0);
  return (
    <section className="card" aria-label={title}>
      <h3>{title}</h3>
      {empty ? <span className="muted">empty</span> : <JsonTree value={value} />}
    </section>
  );
}

const toGraphJson = (graph: AssistantGraph): GraphJson => ({
  nodes: graph.nodes.map((node) => ({
    id: String(node.id),
    data: node.data,
    metadata: node.metadata && typeof node.metadata === "object" ? (node.metadata as Record<string, unknown>) : null,
  })),
  edges: graph.edges,
});

function GraphTab({ assistantId }: { assistantId: string }) {
  const [xray, setXray] = useState(false);
  const graph = useLoad(
    async (signal) => {
      const client = langGraphClient();
      const [drawn, subgraphs] = await Promise.all([
        client.assistants.getGraph(assistantId, { xray, signal }),
        client.assistants.getSubgraphs(assistantId, { signal }),
      ]);
      return { graph: toGraphJson(drawn), subgraphs: Object.keys(subgraphs) };
    },
    [assistantId, xray],
  );
  return (
    <section aria-label="Graph">
      <div className="row graph-toolbar">
        <label className="checkbox">
          <span>
            <input type="checkbox" checked={xray} onChange={(event) => setXray(event.target.checked)} /> Expand
            subgraphs (xray)
          </span>
        </label>
        <GraphLegend />
      </div>
      <ErrorBox error={graph.error} />
      {graph.loading && !graph.data ? <Loading /> : null}
      {graph.data ? (
        <GraphDiagram graph={graph.data.graph} subgraphs={graph.data.subgraphs} title={`Graph of ${assistantId}`} />
      ) : null}
    </section>
  );
}

const SCHEMA_KINDS: [keyof GraphSchema, string][] = [
  ["input_schema", "Input"],
  ["output_schema", "Output"],
  ["state_schema", "State"],
  ["config_schema", "Config"],
  ["context_schema", "Context"],
];

function SchemasTab({ assistantId }: { assistantId: string }) {
  const schemas = useLoad((signal) => langGraphClient().assistants.getSchemas(assistantId, { signal }), [assistantId]);
  return (
    <>
      <ErrorBox error={schemas.error} />
      {schemas.loading && !schemas.data ? <Loading /> : null}
      {schemas.data ? (
        <div className="grid">
          {SCHEMA_KINDS.map(([key, title]) => (
            <JsonCard key={key} title={`${title} schema`} value={schemas.data?.[key]} />
          ))}
        </div>
      ) : null}
    </>
  );
}

function VersionsTab({
  assistantId,
  current,
  onChange,
}: {
  assistantId: string;
  current: number;
  onChange: () => void;
}) {
  const versions = useLoad(
    (signal) => langGraphClient().assistants.getVersions(assistantId, { limit: 100, signal }),
    [assistantId, current],
  );
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  async function makeLatest(version: AssistantVersion) {
    setBusy(true);
    setError(undefined);
    try {
      await langGraphClient().assistants.setLatest(assistantId, version.version);
      onChange();
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  }
  return (
    <DataTable
      label="Versions"
      columns={["Version", "Name", "Created", "Config", ""]}
      rows={versions.data}
      loading={versions.loading}
      error={versions.error ?? error}
      empty="No versions."
    >
      {(version) => (
        <tr key={version.version} className={version.version === current ? "selected" : undefined}>
          <td>
            {version.version}
            {version.version === current ? <span className="badge badge-ok"> latest</span> : null}
          </td>
          <td>{version.name}</td>
          <td>{formatTime(version.created_at)}</td>
          <td>
            <JsonTree
              value={{ config: version.config, context: version.context, metadata: version.metadata }}
              openDepth={0}
            />
          </td>
          <td>
            {version.version === current ? null : (
              <button type="button" className="secondary" disabled={busy} onClick={() => makeLatest(version)}>
                Make version {version.version} latest
              </button>
            )}
          </td>
        </tr>
      )}
    </DataTable>
  );
}
