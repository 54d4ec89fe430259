import type { Thread, ThreadStatus } from "@langchain/langgraph-sdk";
import { type FormEvent, useEffect, useState } from "react";
import { Link, useSearchParams } from "wouter";
import { langGraphClient } from "../../api.ts";
import { Empty, ErrorBox, Loading } from "../../components/ErrorBox.tsx";
import { PageHeader } from "../../components/Layout.tsx";
import { StatusBadge } from "../../components/StatusBadge.tsx";
import { formatTime, shortId } from "../../format.ts";
import { useLoad } from "../../hooks.ts";
import { type JsonObject, parseJsonObject } from "../../json-input.ts";

type ThreadSortBy = "created_at" | "updated_at";
const PAGE_SIZE = 20;
const STATUSES: ThreadStatus[] = ["idle", "busy", "interrupted", "error"];
const SORTS: { value: ThreadSortBy; label: string }[] = [
  { value: "updated_at", label: "Updated" },
  { value: "created_at", label: "Created" },
];

/** Threads of the workspace, searched by metadata and status; the search lives in the URL so Back returns to it. */
export function ThreadsPage() {
  const [params, setParams] = useSearchParams();
  const metadataText = params.get("metadata") ?? "";
  const status = (params.get("status") ?? "") as ThreadStatus | "";
  const sortBy = (params.get("sort") === "created_at" ? "created_at" : "updated_at") satisfies ThreadSortBy;
  const sortOrder = params.get("order") === "asc" ? "asc" : "desc";
  const offset = Math.max(0, Number(params.get("offset")) || 0);

  const [draftMetadata, setDraftMetadata] = useState(metadataText);
  const [draftStatus, setDraftStatus] = useState(status);
  const [inputError, setInputError] = useState<string>();
  // Back and Forward change the URL's search: the form follows it.
  useEffect(() => {
    setDraftMetadata(metadataText);
    setDraftStatus(status);
  }, [metadataText, status]);

  // The URL only ever holds a metadata filter that parsed; an edited URL that doesn't is shown as an error.
  const parsedMetadata = metadataText ? parseJsonObject(metadataText, "Metadata") : { value: undefined };
  const metadata: JsonObject | undefined = "value" in parsedMetadata ? parsedMetadata.value : undefined;
  const urlError = "error" in parsedMetadata ? parsedMetadata.error : undefined;

  const { data, error, loading } = useLoad(
    async (signal) => {
      if (urlError) return undefined;
      const client = langGraphClient();
      const query = { metadata, status: status || undefined, signal };
      const [threads, total] = await Promise.all([
        client.threads.search({ ...query, limit: PAGE_SIZE, offset, sortBy, sortOrder }),
        client.threads.count(query),
      ]);
      return { threads, total };
    },
    [metadataText, status, sortBy, sortOrder, offset],
  );

  const update = (changes: Record<string, string | number | undefined>) => {
    const next = new URLSearchParams(params);
    for (const [name, value] of Object.entries(changes)) {
      if (value === undefined || value === "" || value === 0) next.delete(name);
      else next.set(name, String(value));
    }
    setParams(next);
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const text = draftMetadata.trim();
    if (text) {
      const parsed = parseJsonObject(text, "Metadata");
      if ("error" in parsed) {
        setInputError(parsed.error);
        return;
      }
    }
    setInputError(undefined);
    update({ metadata: text, status: draftStatus, offset: undefined });
  };

  const toggleSort = (column: ThreadSortBy) => {
    if (column === sortBy) update({ order: sortOrder === "desc" ? "asc" : undefined, offset: undefined });
    else update({ sort: column === "updated_at" ? undefined : column, order: undefined, offset: undefined });
  };
  const sortMark = (column: ThreadSortBy) => (column === sortBy ? (sortOrder === "desc" ? " ↓" : " ↑") : "");
  const ariaSort = (column: ThreadSortBy) =>
    column === sortBy ? (sortOrder === "desc" ? "descending" : "ascending") : undefined;

  return (
    <>
      <PageHeader title="Threads" />
      <form className="inline threads-search" onSubmit={submit} aria-label="Search threads">
        <label className="threads-metadata">
          Metadata (JSON object)
          <input
            value={draftMetadata}
            onChange={(event) => setDraftMetadata(event.target.value)}
            placeholder='{"user": "alice"}'
            spellCheck={false}
            aria-invalid={inputError ? true : undefined}
            aria-describedby={inputError ? "threads-metadata-error" : undefined}
          />
        </label>
        <label>
          Status
          <select value={draftStatus} onChange={(event) => setDraftStatus(event.target.value as ThreadStatus | "")}>
            <option value="">Any</option>
            {STATUSES.map((value) => (
              <option key={value} value={value}>
                {value}
              </option>
            ))}
          </select>
        </label>
        <label>
          Sort by
          <select
            value={sortBy}
            onChange={(event) =>
              update({ sort: event.target.value === "updated_at" ? undefined : event.target.value, offset: undefined })
            }
          >
            {SORTS.map((sort) => (
              <option key={sort.value} value={sort.value}>
                {sort.label}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Search</button>
      </form>
      {inputError ? (
        <div className="error" role="alert" id="threads-metadata-error">
          {inputError}
        </div>
      ) : null}
      {urlError ? <ErrorBox error={new Error(urlError)} /> : null}
      <ErrorBox error={error} />
      {loading && !data ? <Loading /> : null}
      {data && data.threads.length === 0 ? <Empty>No threads match.</Empty> : null}
      {data && data.threads.length > 0 ? (
        <>
          <div className="table-wrap">
            <table className="table" aria-label="Threads">
              <thead>
                <tr>
                  <th>Thread</th>
                  <th>Status</th>
                  <th>Graph / assistant</th>
                  <th aria-sort={ariaSort("created_at")}>
                    <button type="button" onClick={() => toggleSort("created_at")}>
                      Created{sortMark("created_at")}
                    </button>
                  </th>
                  <th aria-sort={ariaSort("updated_at")}>
                    <button type="button" onClick={() => toggleSort("updated_at")}>
                      Updated{sortMark("updated_at")}
                    </button>
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.threads.map((thread) => (
                  <ThreadRow key={thread.thread_id} thread={thread} />
                ))}
              </tbody>
            </table>
          </div>
          <nav className="pager" aria-label="Pages">
            <button
              type="button"
              className="secondary"
              disabled={offset === 0}
              onClick={() => update({ offset: Math.max(0, offset - PAGE_SIZE) })}
            >
              Previous
            </button>
            <span className="muted">
              {offset + 1}–{offset + data.threads.length} of {data.total}
            </span>
            <button
              type="button"
              className="secondary"
              disabled={offset + data.threads.length >= data.total}
              onClick={() => update({ offset: offset + PAGE_SIZE })}
            >
              Next
            </button>
          </nav>
        </>
      ) : null}
    </>
  );
}

function ThreadRow({ thread }: { thread: Thread }) {
  const graphId = typeof thread.metadata?.graph_id === "string" ? thread.metadata.graph_id : undefined;
  const assistantId = typeof thread.metadata?.assistant_id === "string" ? thread.metadata.assistant_id : undefined;
  return (
    <tr>
      <td className="mono">
        <Link href={`/threads/${thread.thread_id}`}>{thread.thread_id}</Link>
      </td>
      <td>
        <StatusBadge status={thread.status} />
      </td>
      <td>
        {graphId ?? <span className="muted">—</span>}
        {assistantId ? (
          <>
            {" · "}
            <Link href={`/assistants/${assistantId}`} className="mono" title={assistantId}>
              {shortId(assistantId)}
            </Link>
          </>
        ) : null}
      </td>
      <td>{formatTime(thread.created_at)}</td>
      <td>{formatTime(thread.updated_at)}</td>
    </tr>
  );
}
