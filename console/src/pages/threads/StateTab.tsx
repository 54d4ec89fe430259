import type { Interrupt } from "@langchain/langgraph-sdk";
import { Link } from "wouter";
import { langGraphClient } from "../../api.ts";
import { ErrorBox, Loading } from "../../components/ErrorBox.tsx";
import { JsonTree } from "../../components/JsonTree.tsx";
import { formatTime } from "../../format.ts";
import { useLoad } from "../../hooks.ts";

/** The thread's current state: values as a tree, what runs next, and open interrupts. */
export function StateTab({
  threadId,
  assistantId,
  version,
}: {
  threadId: string;
  assistantId: string | undefined;
  version: number;
}) {
  const { data, error, loading } = useLoad(
    (signal) => langGraphClient().threads.getState(threadId, undefined, { signal }),
    [threadId, version],
  );
  if (error) return <ErrorBox error={error} />;
  if (loading && !data) return <Loading />;
  if (!data) return null;
  const interrupts: Interrupt[] = data.tasks.flatMap((task) => task.interrupts ?? []);
  return (
    <div className="thread-state">
      {interrupts.length > 0 ? (
        <section className="card interrupts" aria-label="Interrupts">
          <h2>Waiting for input</h2>
          {interrupts.map((interrupt, index) => (
            <div key={interrupt.id ?? index} className="interrupt">
              <JsonTree value={interrupt.value} />
            </div>
          ))}
          {assistantId ? (
            <Link href={`/chat/${assistantId}?thread=${threadId}`} className="button">
              Answer in chat
            </Link>
          ) : null}
        </section>
      ) : null}
      <dl className="state-facts">
        <dt>Next</dt>
        <dd>
          {data.next.length > 0 ? (
            data.next.map((node) => (
              <code key={node} className="node-name">
                {node}
              </code>
            ))
          ) : (
            <span className="muted">nothing (done until new input)</span>
          )}
        </dd>
        <dt>Checkpoint</dt>
        <dd className="mono">{data.checkpoint?.checkpoint_id ?? "—"}</dd>
        <dt>Step</dt>
        <dd>{typeof data.metadata?.step === "number" ? data.metadata.step : "—"}</dd>
        <dt>Saved</dt>
        <dd>{formatTime(data.created_at)}</dd>
      </dl>
      <section className="card" aria-label="State values">
        <h2>Values</h2>
        <JsonTree value={data.values} />
      </section>
    </div>
  );
}
