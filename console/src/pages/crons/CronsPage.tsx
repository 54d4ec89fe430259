import type { Cron } from "@langchain/langgraph-sdk";
import { type FormEvent, useState } from "react";
import { Link } from "wouter";
import { langGraphClient } from "../../api.ts";
import { DataTable } from "../../components/DataTable.tsx";
import { ErrorBox } from "../../components/ErrorBox.tsx";
import { PageHeader } from "../../components/Layout.tsx";
import { formatTime, shortId } from "../../format.ts";
import { useLoad } from "../../hooks.ts";
import { parseJsonObject } from "../../json-input.ts";

const DEFAULT_INPUT = '{"messages": [{"role": "user", "content": "hello"}]}';

/** Crons: scheduled runs of an assistant, on a thread or a new thread each time. */
export function CronsPage() {
  const crons = useLoad(
    (signal) => langGraphClient().crons.search({ limit: 100, sortBy: "next_run_date", sortOrder: "asc", signal }),
    [],
  );
  const assistants = useLoad(
    () => langGraphClient().assistants.search({ limit: 100, sortBy: "name", sortOrder: "asc" }),
    [],
  );
  const [error, setError] = useState<unknown>();
  const names = new Map(assistants.data?.map((a) => [a.assistant_id, a.name]));

  async function remove(cron: Cron) {
    setError(undefined);
    try {
      await langGraphClient().crons.delete(cron.cron_id);
      crons.reload();
    } catch (reason) {
      setError(reason);
    }
  }

  return (
    <>
      <PageHeader title="Crons" />
      <CronForm assistants={assistants.data ?? []} onCreated={crons.reload} />
      <h2>Scheduled</h2>
      <DataTable
        label="Crons"
        columns={["Schedule", "Assistant", "Thread", "Next run", "Enabled", "Input", "Id", ""]}
        rows={crons.data}
        loading={crons.loading}
        error={crons.error ?? assistants.error ?? error}
        empty="No crons."
      >
        {(cron) => (
          <tr key={cron.cron_id} data-cron-id={cron.cron_id}>
            <td className="mono">{cron.schedule}</td>
            <td>
              <Link href={`/assistants/${cron.assistant_id}`}>
                {names.get(cron.assistant_id) ?? shortId(cron.assistant_id)}
              </Link>
            </td>
            <td className="mono">
              {cron.thread_id ? (
                <Link href={`/threads/${cron.thread_id}`}>{shortId(cron.thread_id)}</Link>
              ) : (
                "new each run"
              )}
            </td>
            <td data-label="next-run">{formatTime(cron.next_run_date)}</td>
            <td>{cron.enabled ? "yes" : "no"}</td>
            <td className="mono cron-input">{JSON.stringify(cron.payload?.input ?? null)}</td>
            <td className="mono">{shortId(cron.cron_id)}</td>
            <td>
              <button
                type="button"
                className="danger"
                onClick={() => remove(cron)}
                aria-label={`Delete cron ${cron.cron_id}`}
              >
                Delete
              </button>
            </td>
          </tr>
        )}
      </DataTable>
    </>
  );
}

function CronForm({
  assistants,
  onCreated,
}: {
  assistants: { assistant_id: string; name: string }[];
  onCreated: () => void;
}) {
  const [assistant, setAssistant] = useState("");
  const [schedule, setSchedule] = useState("0 * * * *");
  const [input, setInput] = useState(DEFAULT_INPUT);
  const [thread, setThread] = useState("");
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(undefined);
    // The API takes a cron's input as an object; an empty field sends none.
    const parsed = input.trim() ? parseJsonObject(input, "Input") : { value: undefined };
    if ("error" in parsed) {
      setError(new Error(parsed.error));
      return;
    }
    setBusy(true);
    const client = langGraphClient();
    const assistantId = assistant || assistants[0]?.assistant_id;
    try {
      if (thread.trim())
        await client.crons.createForThread(thread.trim(), assistantId, { schedule, input: parsed.value });
      else await client.crons.create(assistantId, { schedule, input: parsed.value });
      onCreated();
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="card" aria-label="New cron" onSubmit={submit}>
      <h3>New cron</h3>
      <div className="form-grid">
        <label>
          Assistant
          <select value={assistant} onChange={(e) => setAssistant(e.target.value)}>
            {assistants.map((a) => (
              <option key={a.assistant_id} value={a.assistant_id}>
                {a.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Schedule (cron, UTC)
          <input required className="mono" value={schedule} onChange={(e) => setSchedule(e.target.value)} />
        </label>
        <label>
          Thread ID (optional)
          <input
            className="mono"
            value={thread}
            onChange={(e) => setThread(e.target.value)}
            placeholder="a new thread each run"
          />
        </label>
      </div>
      <label>
        Input (JSON)
        <textarea value={input} onChange={(e) => setInput(e.target.value)} rows={3} />
      </label>
      <ErrorBox error={error} />
      <div className="row">
        <button type="submit" disabled={busy || assistants.length === 0}>
          Create cron
        </button>
      </div>
    </form>
  );
}
