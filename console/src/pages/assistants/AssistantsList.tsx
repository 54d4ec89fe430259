import type { Assistant } from "@langchain/langgraph-sdk";
import { Link } from "wouter";
import { langGraphClient } from "../../api.ts";
import { DataTable } from "../../components/DataTable.tsx";
import { PageHeader } from "../../components/Layout.tsx";
import { formatTime, shortId } from "../../format.ts";
import { useLoad } from "../../hooks.ts";

/** Every assistant of the workspace, newest first. */
export function AssistantsPage() {
  const { data, error, loading } = useLoad(
    () => langGraphClient().assistants.search({ limit: 100, sortBy: "created_at", sortOrder: "desc" }),
    [],
  );
  return (
    <>
      <PageHeader title="Assistants" />
      <DataTable
        label="Assistants"
        columns={["Name", "Graph", "Version", "Id", "Updated"]}
        rows={data}
        loading={loading}
        error={error}
        empty="No assistants."
      >
        {(assistant: Assistant) => (
          <tr key={assistant.assistant_id}>
            <td>
              <Link href={`/assistants/${assistant.assistant_id}`}>{assistant.name}</Link>
            </td>
            <td>{assistant.graph_id}</td>
            <td>{assistant.version}</td>
            <td className="mono">{shortId(assistant.assistant_id)}</td>
            <td>{formatTime(assistant.updated_at)}</td>
          </tr>
        )}
      </DataTable>
    </>
  );
}
