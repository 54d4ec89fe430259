import type { Assistant } from "@langchain/langgraph-sdk";
import { Link } from "wouter";
import { langGraphClient } from "../../api.ts";
import { Empty, ErrorBox, Loading } from "../../components/ErrorBox.tsx";
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
      <ErrorBox error={error} />
      {loading && !data ? <Loading /> : null}
      {data && data.length === 0 ? <Empty>No assistants.</Empty> : null}
      {data && data.length > 0 ? (
        <div className="table-wrap">
          <table className="table" aria-label="Assistants">
            <thead>
              <tr>
                <th>Name</th>
                <th>Graph</th>
                <th>Version</th>
                <th>Id</th>
                <th>Updated</th>
              </tr>
            </thead>
            <tbody>
              {data.map((assistant: Assistant) => (
                <tr key={assistant.assistant_id}>
                  <td>
                    <Link href={`/assistants/${assistant.assistant_id}`}>{assistant.name}</Link>
                  </td>
                  <td>{assistant.graph_id}</td>
                  <td>{assistant.version}</td>
                  <td className="mono">{shortId(assistant.assistant_id)}</td>
                  <td>{formatTime(assistant.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}
