import type { Assistant, GraphSchema, Message } from "@langchain/langgraph-sdk";
import { useStream } from "@langchain/langgraph-sdk/react";
import { type FormEvent, type KeyboardEvent, useMemo, useState } from "react";
import { Link, useLocation, useParams, useSearch } from "wouter";
import { langGraphClient, readableError } from "../../api.ts";
import { ErrorBox, Loading } from "../../components/ErrorBox.tsx";
import { JsonTree } from "../../components/JsonTree.tsx";
import { PageHeader } from "../../components/Layout.tsx";
import { RunsTable } from "../../components/RunsTable.tsx";
import { shortId } from "../../format.ts";
import { useLoad } from "../../hooks.ts";
import { isSafeId } from "../../ids.ts";
import { parseJsonObject } from "../../json-input.ts";
import { InterruptPanel } from "./InterruptPanel.tsx";
import { Messages } from "./Messages.tsx";
import { hasMessages } from "./util.ts";

/**
 * `/chat/:assistantId[?thread=<id>]`: talk to an assistant on a new thread or an existing one; the
 * thread being shown is always in the URL, so a reload or a shared link lands on it.
 */
export function ChatPage() {
  const { assistantId } = useParams<{ assistantId: string }>();
  const client = useMemo(() => langGraphClient(), []);
  const { data, error } = useLoad(async () => {
    const [assistant, schemas] = await Promise.all([
      client.assistants.get(assistantId),
      client.assistants.getSchemas(assistantId),
    ]);
    return { assistant, schemas };
  }, [client, assistantId]);
  if (error) {
    return (
      <>
        <PageHeader title="Chat" />
        <ErrorBox error={readableError(error)} />
        <Link href="/chat">Pick another assistant</Link>
      </>
    );
  }
  if (!data) return <Loading />;
  return <Conversation key={data.assistant.assistant_id} {...data} />;
}

interface RunRef {
  run_id: string;
  thread_id: string;
}

function Conversation({ assistant, schemas }: { assistant: Assistant; schemas: GraphSchema }) {
  const client = useMemo(() => langGraphClient(), []);
  const [, navigate] = useLocation();
  const requestedThread = new URLSearchParams(useSearch()).get("thread");
  // The SDK puts the thread id in its paths as is: only a well-formed id is followed.
  const threadId = requestedThread && isSafeId(requestedThread) ? requestedThread : null;
  const messageGraph = hasMessages(schemas);
  const [run, setRun] = useState<RunRef>();
  const [actionError, setActionError] = useState<unknown>();
  const [cancelling, setCancelling] = useState(false);
  const [runsRefresh, setRunsRefresh] = useState(0);
  const base = `/chat/${assistant.assistant_id}`;

  const stream = useStream<Record<string, unknown>>({
    client,
    assistantId: assistant.assistant_id,
    threadId,
    onThreadId: (id) => navigate(id ? `${base}?thread=${id}` : base, { replace: true }),
    onCreated: (created) => {
      setRun(created);
      setRunsRefresh((n) => n + 1);
    },
    // Setting onFinish also makes useStream re-read the thread's state once a run ends (interrupts, tasks).
    onFinish: () => setRunsRefresh((n) => n + 1),
    onError: () => setRunsRefresh((n) => n + 1),
  });

  const values = stream.values;
  const messages: Message[] = messageGraph ? stream.messages : [];
  const interrupts = stream.isLoading ? [] : stream.interrupts;

  // Tokens come from `messages-tuple`, whole states from `values` (for graphs without messages).
  const streamMode = ["values", "messages-tuple"] as const;

  async function start(input: Record<string, unknown>) {
    setActionError(undefined);
    setRun(undefined);
    await stream.submit(input, { streamMode: [...streamMode] });
  }

  async function resume(value: unknown) {
    setActionError(undefined);
    setRun(undefined);
    await stream.submit(undefined, {
      command: value === undefined ? undefined : { resume: value },
      streamMode: [...streamMode],
    });
  }

  /** Drops the stream and asks the server to cancel the run, so it stops there too, not just here. */
  async function cancel() {
    setCancelling(true);
    setActionError(undefined);
    try {
      await stream.stop();
      if (run) await client.runs.cancel(run.thread_id, run.run_id);
    } catch (reason) {
      setActionError(reason);
    } finally {
      setCancelling(false);
      setRunsRefresh((n) => n + 1);
    }
  }

  function newThread() {
    setRun(undefined);
    setActionError(undefined);
    navigate(base);
  }

  const stateValues = useMemo(() => {
    const { __interrupt__: _ignored, ...rest } = values ?? {};
    return rest;
  }, [values]);

  return (
    <>
      <PageHeader title={`Chat · ${assistant.name}`}>
        <button type="button" className="secondary" onClick={newThread} disabled={!threadId || stream.isLoading}>
          New thread
        </button>
      </PageHeader>
      <div className="chat-meta muted">
        <span>graph {assistant.graph_id}</span>
        {threadId ? (
          <span>
            thread{" "}
            <Link href={`/threads/${threadId}`} className="mono" title={threadId}>
              {shortId(threadId)}
            </Link>
          </span>
        ) : (
          <span>new thread</span>
        )}
        {run ? (
          <span>
            run{" "}
            <span className="mono" title={run.run_id}>
              {shortId(run.run_id)}
            </span>{" "}
            · <Link href={`/traces/agent-runs/${run.run_id}`}>trace</Link>
          </span>
        ) : null}
        {stream.isLoading ? (
          <span className="chat-running" role="status">
            Running…
          </span>
        ) : null}
      </div>

      {requestedThread && !threadId ? (
        <ErrorBox error={new Error(`Not a valid thread id: ${JSON.stringify(requestedThread)}`)} />
      ) : null}
      {stream.isThreadLoading ? <Loading what="Loading thread" /> : null}
      {messageGraph ? (
        <Messages messages={messages} streaming={stream.isLoading} />
      ) : (
        <section className="card chat-state" aria-label="State">
          <h2>State</h2>
          {Object.keys(stateValues).length > 0 ? (
            <JsonTree value={stateValues} openDepth={3} />
          ) : (
            <p className="muted">No state yet.</p>
          )}
        </section>
      )}

      <ErrorBox error={readableError(stream.error)} title="Run failed" />
      <ErrorBox error={readableError(actionError)} />

      {interrupts.length > 0 ? (
        <InterruptPanel interrupts={interrupts} busy={stream.isLoading} onResume={resume} />
      ) : null}

      {stream.isLoading ? (
        <div className="row chat-stop">
          <button type="button" className="danger" onClick={cancel} disabled={cancelling}>
            Stop
          </button>
        </div>
      ) : null}

      {messageGraph ? (
        <MessageForm
          disabled={stream.isLoading}
          onSend={(content) => start({ messages: [{ type: "human", content }] })}
        />
      ) : (
        <JsonInputForm disabled={stream.isLoading} onRun={start} />
      )}

      {threadId ? (
        <section aria-label="Runs of this thread">
          <h2>Runs</h2>
          <RunsTable client={client} threadId={threadId} limit={20} refresh={runsRefresh} />
        </section>
      ) : null}
    </>
  );
}

function MessageForm({ disabled, onSend }: { disabled: boolean; onSend: (content: string) => void }) {
  const [text, setText] = useState("");
  function send(event?: FormEvent) {
    event?.preventDefault();
    const content = text.trim();
    if (!content || disabled) return;
    setText("");
    onSend(content);
  }
  // Enter sends, Shift+Enter starts a new line (as chat boxes do).
  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) send(event);
  }
  return (
    <form className="chat-input" onSubmit={send} aria-label="Send a message">
      <label>
        Message
        <textarea value={text} onChange={(event) => setText(event.target.value)} onKeyDown={onKeyDown} rows={2} />
      </label>
      <button type="submit" disabled={disabled || !text.trim()}>
        Send
      </button>
    </form>
  );
}

function JsonInputForm({ disabled, onRun }: { disabled: boolean; onRun: (input: Record<string, unknown>) => void }) {
  const [text, setText] = useState("{}");
  const [error, setError] = useState<string>();
  function run(event: FormEvent) {
    event.preventDefault();
    const parsed = parseJsonObject(text, "Input");
    if ("error" in parsed) {
      setError(parsed.error);
      return;
    }
    setError(undefined);
    onRun(parsed.value);
  }
  return (
    <form className="chat-input" onSubmit={run} aria-label="Run with input">
      <label>
        Input (JSON object)
        <textarea value={text} onChange={(event) => setText(event.target.value)} rows={3} />
      </label>
      <ErrorBox error={error} />
      <button type="submit" disabled={disabled}>
        Run
      </button>
    </form>
  );
}
