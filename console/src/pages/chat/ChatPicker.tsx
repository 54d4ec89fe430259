import type { Assistant } from "@langchain/langgraph-sdk";
import { Link } from "wouter";
import { langGraphClient, readableError } from "../../api.ts";
import { Empty, ErrorBox, Loading } from "../../components/ErrorBox.tsx";
import { PageHeader } from "../../components/Layout.tsx";
import { formatTime } from "../../format.ts";
import { useLoad } from "../../hooks.ts";

/** `/chat`: pick the assistant to talk to. */
export function ChatPickerPage() {
  const { data, error, loading } = useLoad(
    (signal) => langGraphClient().assistants.search({ limit: 100, sortBy: "name", sortOrder: "asc", signal }),
    [],
  );
  return (
    <>
      <PageHeader title="Chat" />
      <p className="muted">Pick an assistant to start a thread with it.</p>
      <ErrorBox error={readableError(error)} />
      {loading && !data ? <Loading /> : null}
      {data && data.length === 0 ? <Empty>No assistants.</Empty> : null}
      {data && data.length > 0 ? (
        <ul className="chat-picker" aria-label="Assistants to chat with">
          {data.map((assistant: Assistant) => (
            <li key={assistant.assistant_id} className="card">
              <Link href={`/chat/${assistant.assistant_id}`} aria-label={`Chat with ${assistant.name}`}>
                <strong>{assistant.name}</strong>
              </Link>
              <span className="muted">
                graph {assistant.graph_id} · v{assistant.version} · updated {formatTime(assistant.updated_at)}
              </span>
              {assistant.description ? <span className="muted">{assistant.description}</span> : null}
            </li>
          ))}
        </ul>
      ) : null}
    </>
  );
}
